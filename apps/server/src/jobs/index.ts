import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { registerPurgeExpiredSessions } from './purge-expired-sessions';

/** Every job of the product, one per file; queues and schedules are created by every role. */
export async function registerJobs(boss: PgBoss, deps: { db: Db; runWorkers: boolean }) {
  await registerPurgeExpiredSessions(boss, deps.db, deps.runWorkers);
}
