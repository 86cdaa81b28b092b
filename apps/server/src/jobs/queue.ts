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
