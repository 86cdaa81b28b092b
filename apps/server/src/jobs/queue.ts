import { PgBoss } from 'pg-boss';

export type Queue = PgBoss;

/**
 * The job queue: pg-boss on the same PostgreSQL. Every role can send jobs; only worker processes
 * (--role=worker or all) run them, so api processes scale separately from workers.
 */
export async function startQueue(
  connectionString: string,
  options: { log: (line: string) => void },
): Promise<Queue> {
  const boss = new PgBoss({ connectionString, schema: 'pgboss', application_name: 'lockstep-queue' });
  boss.on('error', (error: Error) => options.log(`job queue error: ${error.message}`));
  await boss.start();
  return boss;
}
