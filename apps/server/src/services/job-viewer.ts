import { NIL_ID } from '@lockstep/contract';
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database';

export const JOB_STATES = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

export type JobView = {
  id: string;
  name: string;
  state: JobState;
  data: unknown;
  /** How many times the job was retried so far, and how many retries it may have. */
  retryCount: number;
  retryLimit: number;
  /** What the job's handler returned, or its error when it failed (pg-boss keeps both in `output`). */
  output: unknown;
  priority: number;
  singletonKey: string | null;
  createdOn: string;
  startAfter: string;
  startedOn: string | null;
  completedOn: string | null;
  /** From start to finish (or to now while active), in milliseconds; null before it starts. */
  durationMs: number | null;
};

type JobRow = {
  id: string;
  name: string;
  state: JobState;
  data: unknown;
  retry_count: number;
  retry_limit: number;
  output: unknown;
  priority: number;
  singleton_key: string | null;
  created_on: Date;
  start_after: Date;
  started_on: Date | null;
  completed_on: Date | null;
  duration_ms: number | null;
};

/**
 * Which pg-boss jobs belong to one sync (core base), from how each job is sent: sync runs carry the
 * core base as data and singleton key; webhook refreshes and drift checks as data; preview steps
 * name one of its previews; schema generation names one of its external bases. With the nil id, the
 * jobs that name no sync at all (the schedulers, the reaper, pruning): a staff view of the rest.
 */
function jobsOfSync(coreBaseId: string): RawBuilder<boolean> {
  if (coreBaseId === NIL_ID) {
    return sql<boolean>`coalesce(j.data->>'coreBaseId', '') = ''
      and coalesce(j.data->>'previewId', '') = ''
      and coalesce(j.data->>'externalBaseId', '') = ''`;
  }
  return sql<boolean>`(j.data->>'coreBaseId' = ${coreBaseId}
    or j.singleton_key = ${coreBaseId}
    or (j.data ? 'previewId' and j.data->>'previewId' in
      (select p.id::text from sync_preview p where p.core_base_id = ${coreBaseId}))
    or (j.data ? 'externalBaseId' and j.data->>'externalBaseId' in
      (select e.id::text from external_base e where e.core_base_id = ${coreBaseId})))`;
}

/** The jobs of one sync, newest first, paged, optionally of one state; with counts by state. */
export async function listJobsOfSync(
  db: Db,
  coreBaseId: string,
  options: { state?: JobState; skip: number; take: number },
): Promise<{ items: JobView[]; total: number; byState: Record<JobState, number> }> {
  const where = jobsOfSync(coreBaseId);
  const stateFilter = options.state ? sql`and j.state = ${options.state}::pgboss.job_state` : sql``;
  const [rows, counts] = await Promise.all([
    sql<JobRow>`select j.id::text as id, j.name, j.state::text as state, j.data, j.retry_count, j.retry_limit,
        j.output, j.priority, j.singleton_key, j.created_on, j.start_after, j.started_on, j.completed_on,
        case when j.started_on is null then null
          else (extract(epoch from coalesce(j.completed_on, now()) - j.started_on) * 1000)::float8 end
          as duration_ms
      from pgboss.job j where ${where} ${stateFilter}
      order by j.created_on desc, j.id
      offset ${options.skip} limit ${options.take}`.execute(db),
    sql<{ state: JobState; n: number }>`select j.state::text as state, count(*)::int as n
      from pgboss.job j where ${where} group by j.state`.execute(db),
  ]);
  const byState = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
  for (const c of counts.rows) byState[c.state] = c.n;
  const total = options.state
    ? byState[options.state]
    : Object.values(byState).reduce((sum, n) => sum + n, 0);
  return { items: rows.rows.map(toJobView), total, byState };
}

/** The jobs of one sync preview (its download, plan and apply steps), newest first. */
export async function listJobsOfPreview(db: Db, previewId: string): Promise<JobView[]> {
  const rows = await sql<JobRow>`select j.id::text as id, j.name, j.state::text as state, j.data,
      j.retry_count, j.retry_limit, j.output, j.priority, j.singleton_key, j.created_on, j.start_after,
      j.started_on, j.completed_on,
      case when j.started_on is null then null
        else (extract(epoch from coalesce(j.completed_on, now()) - j.started_on) * 1000)::float8 end
        as duration_ms
    from pgboss.job j where j.data->>'previewId' = ${previewId}
    order by j.created_on desc, j.id limit 200`.execute(db);
  return rows.rows.map(toJobView);
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function toJobView(r: JobRow): JobView {
  return {
    id: r.id,
    name: r.name,
    state: r.state,
    data: r.data ?? null,
    retryCount: r.retry_count,
    retryLimit: r.retry_limit,
    output: r.output ?? null,
    priority: r.priority,
    singletonKey: r.singleton_key,
    createdOn: new Date(r.created_on).toISOString(),
    startAfter: new Date(r.start_after).toISOString(),
    startedOn: iso(r.started_on),
    completedOn: iso(r.completed_on),
    durationMs: r.duration_ms === null ? null : Math.round(Number(r.duration_ms)),
  };
}
