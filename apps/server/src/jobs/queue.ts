import { PgBoss } from 'pg-boss';

export type Queue = PgBoss;

/**
 * The job queue: pg-boss on the same PostgreSQL. Every role can send jobs; only worker processes
 * (--role=worker or all) run them, so api processes scale separately from workers.
 */
const SUPERVISE_SECONDS = Math.max(1, Number(process.env.LOCKSTEP_SUPERVISE_SECONDS ?? 10) || 10);

export async function startQueue(
  connectionString: string,
  options: { log: (line: string) => void },
): Promise<Queue> {
  const boss = new PgBoss({
    connectionString,
    schema: 'pgboss',
    application_name: 'lockstep-queue',
    // How often jobs whose worker stopped sending heartbeats (a killed process) are failed and
    // retried: a dead worker holds a sync up for about a heartbeat plus this, not 15 minutes.
    superviseIntervalSeconds: SUPERVISE_SECONDS,
    monitorIntervalSeconds: SUPERVISE_SECONDS,
    // A job sent to a notify-enabled queue (sync-run) wakes the workers at once through
    // LISTEN/NOTIFY instead of waiting out their polling interval (2 s); polling stays as a backstop.
    useListenNotify: true,
  });
  boss.on('error', (error: Error) => options.log(`job queue error: ${error.message}`));
  await boss.start();
  return boss;
}

/**
 * How long finished jobs stay in pg-boss's job table: a day (its default is 7), enough to look into
 * yesterday's runs. Every sync run chunk is a job, so at a few runs a second the default kept
 * millions of rows.
 */
export const FINISHED_JOB_RETENTION_SECONDS = 24 * 60 * 60;

/**
 * Sets the retention of finished jobs on every queue that keeps them longer (pg-boss 12 keeps it per
 * queue, `deleteAfterSeconds`; `createQueue` leaves an existing queue as it is). Jobs take their
 * queue's setting when sent, so ones already finished keep the older setting until it runs out.
 */
export async function limitJobRetention(boss: PgBoss): Promise<string[]> {
  const changed: string[] = [];
  for (const queue of await boss.getQueues()) {
    const keep = Number(queue.deleteAfterSeconds);
    if (keep > 0 && keep <= FINISHED_JOB_RETENTION_SECONDS) continue;
    await boss.updateQueue(queue.name, { deleteAfterSeconds: FINISHED_JOB_RETENTION_SECONDS });
    changed.push(queue.name);
  }
  return changed;
}
