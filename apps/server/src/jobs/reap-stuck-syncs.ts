import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { SYNC_RUN } from './sync-run';

export const REAP_STUCK_SYNCS = 'reap-stuck-syncs';
export const STUCK_AFTER_MS = 30 * 60 * 1000;

/** Runs still `running` past the limit with no active job behind them (a process died for good). */
export async function findStuckRuns(db: Db, now = new Date()) {
  return db
    .selectFrom('sync_log')
    .select(['id', 'core_base_id', 'owner_id', 'started_at', 'trigger'])
    .where('status', '=', 'running')
    .where('started_at', '<', new Date(now.getTime() - STUCK_AFTER_MS))
    .where(
      sql<boolean>`not exists (select 1 from pgboss.job j where j.name = ${SYNC_RUN} and j.singleton_key = sync_log.core_base_id::text and j.state in ('created', 'retry', 'active'))`,
    )
    .orderBy('started_at')
    .execute();
}

/** Frees stuck runs: marks them failed so the next trigger starts afresh from the stored cursors. */
export async function reapStuckSyncs(db: Db, now = new Date()): Promise<number> {
  const stuck = await findStuckRuns(db, now);
  if (stuck.length === 0) return 0;
  await db
    .updateTable('sync_log')
    .set({
      status: 'failed',
      finished_at: now,
      error: 'The run stopped responding and was freed by the reaper.',
    })
    .where(
      'id',
      'in',
      stuck.map((s) => s.id),
    )
    .where('status', '=', 'running')
    .execute();
  return stuck.length;
}

export async function registerReapStuckSyncs(boss: PgBoss, db: Db, runWorkers: boolean) {
  await boss.createQueue(REAP_STUCK_SYNCS, { policy: 'singleton' });
  await boss.schedule(REAP_STUCK_SYNCS, '*/5 * * * *');
  if (runWorkers) {
    await boss.work(REAP_STUCK_SYNCS, async () => {
      await reapStuckSyncs(db);
    });
  }
}
