import { PLAN_TIERS, tierOfProductType } from '@lockstep/contract';
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { PRIORITY, requestSyncRun } from './sync-run';

export const SCHEDULE_DUE_SYNCS = 'schedule-due-syncs';

/**
 * Every minute: enqueue a run for each sync that is on and whose plan's poll interval has passed
 * since its last run. Real time comes from change events and webhooks; this is the safety net.
 */
export async function scheduleDueSyncs(db: Db, boss: PgBoss, now = new Date()): Promise<number> {
  const rows = await db
    .selectFrom('core_base')
    .select(['core_base.id', 'core_base.last_sync_time'])
    .select(
      sql<
        string | null
      >`(select s.product_type from subscription s where s.user_id = core_base.owner_id order by s.created_at desc limit 1)`.as(
        'product_type',
      ),
    )
    .where('core_base.sync_state', '=', 'on')
    .execute();
  let queued = 0;
  for (const row of rows) {
    const tier = row.product_type ? tierOfProductType(row.product_type) : null;
    if (!tier) continue;
    const interval = PLAN_TIERS[tier].pollIntervalSeconds * 1000;
    const last = row.last_sync_time ? new Date(row.last_sync_time).getTime() : 0;
    if (now.getTime() - last < interval) continue;
    if (await requestSyncRun(boss, row.id, 'schedule', PRIORITY.schedule)) queued++;
  }
  return queued;
}

export async function registerScheduleDueSyncs(boss: PgBoss, db: Db, runWorkers: boolean) {
  await boss.createQueue(SCHEDULE_DUE_SYNCS, { policy: 'singleton' });
  await boss.schedule(SCHEDULE_DUE_SYNCS, '* * * * *');
  if (runWorkers) {
    await boss.work(SCHEDULE_DUE_SYNCS, async () => {
      await scheduleDueSyncs(db, boss);
    });
  }
}
