import { sql } from 'kysely';
import type { Db } from '../db/database';
import { LIVENESS_CLASS } from '../jobs/worker-liveness';

export type QueueStats = {
  name: string;
  created: number;
  retry: number;
  active: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Jobs finished in the last hour: what the queue gets through. */
  completedLastHour: number;
  failedLastHour: number;
  /** When the oldest job still waiting (created or retry) was queued; null when none waits. */
  oldestWaitingAt: string | null;
};

/**
 * Every job queue with its jobs by state (from pg-boss's own tables, as kept for their retention),
 * its throughput over the last hour and its oldest waiting job; and how many worker processes are
 * alive (each holds its liveness lock while it runs).
 */
export async function queueOverview(db: Db): Promise<{ queues: QueueStats[]; workersAlive: number }> {
  const rows = (
    await sql<{
      name: string;
      created: number;
      retry: number;
      active: number;
      completed: number;
      failed: number;
      cancelled: number;
      completed_hour: number;
      failed_hour: number;
      oldest: Date | null;
    }>`select q.name,
        count(j.id) filter (where j.state = 'created')::int as created,
        count(j.id) filter (where j.state = 'retry')::int as retry,
        count(j.id) filter (where j.state = 'active')::int as active,
        count(j.id) filter (where j.state = 'completed')::int as completed,
        count(j.id) filter (where j.state = 'failed')::int as failed,
        count(j.id) filter (where j.state = 'cancelled')::int as cancelled,
        count(j.id) filter (where j.state = 'completed' and j.completed_on > now() - interval '1 hour')::int as completed_hour,
        count(j.id) filter (where j.state = 'failed' and j.completed_on > now() - interval '1 hour')::int as failed_hour,
        min(j.created_on) filter (where j.state in ('created', 'retry')) as oldest
      from pgboss.queue q left join pgboss.job j on j.name = q.name
      group by q.name order by q.name`.execute(db)
  ).rows;
  const workers = await sql<{ n: number }>`select count(distinct objid)::int as n from pg_locks
    where locktype = 'advisory' and classid = ${LIVENESS_CLASS} and objsubid = 2 and granted`.execute(db);
  return {
    queues: rows.map((r) => ({
      name: r.name,
      created: r.created,
      retry: r.retry,
      active: r.active,
      completed: r.completed,
      failed: r.failed,
      cancelled: r.cancelled,
      completedLastHour: r.completed_hour,
      failedLastHour: r.failed_hour,
      oldestWaitingAt: r.oldest ? new Date(r.oldest).toISOString() : null,
    })),
    workersAlive: workers.rows[0]?.n ?? 0,
  };
}
