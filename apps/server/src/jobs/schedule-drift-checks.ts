import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { createProgress } from '../services/progress';
import { DRIFT_CHECK, type DriftCheckData } from './drift-check';

export const SCHEDULE_DRIFT_CHECKS = 'schedule-drift-checks';
/** Linked pairs sampled per table pair by the daily check (a full check is the user's to start). */
export const SCHEDULED_SAMPLE = 200;

/** Every night: a sampled value-level drift check of each sync that is on; drift becomes issues. */
export async function scheduleDriftChecks(db: Db, boss: PgBoss): Promise<number> {
  const syncs = await db
    .selectFrom('core_base')
    .select(['id', 'owner_id'])
    .where('sync_state', '=', 'on')
    .execute();
  for (const s of syncs) {
    const tracker = await createProgress(db, s.owner_id, 'drift-check');
    await boss.send(DRIFT_CHECK, {
      trackingId: tracker.id,
      coreBaseId: s.id,
      full: false,
      sample: SCHEDULED_SAMPLE,
    } satisfies DriftCheckData);
  }
  return syncs.length;
}

export async function registerScheduleDriftChecks(boss: PgBoss, db: Db, runWorkers: boolean) {
  await boss.createQueue(SCHEDULE_DRIFT_CHECKS, { policy: 'singleton' });
  await boss.schedule(SCHEDULE_DRIFT_CHECKS, '17 3 * * *');
  if (runWorkers) {
    await boss.work(SCHEDULE_DRIFT_CHECKS, async () => {
      await scheduleDriftChecks(db, boss);
    });
  }
}
