import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { updateProgress } from '../services/progress';
import type { Deps } from '../sync/run/run-context';
import { checkValueDrift } from '../sync/value-drift';
import { PRIORITY, requestSyncRun } from './sync-run';

export const DRIFT_CHECK = 'drift-check';
export type DriftCheckData = { trackingId: string; coreBaseId: string; full: boolean; sample: number };

/** How long a check waits for the sync's run to carry the changes it knows of. */
const SETTLE_MS = 60_000;

/** Queues a run of the sync and waits until a run started after now has finished. */
async function settle(db: Db, boss: PgBoss, coreBaseId: string) {
  const since = new Date(Date.now() - 1000);
  await requestSyncRun(boss, coreBaseId, 'drift-check', PRIORITY.user);
  const end = Date.now() + SETTLE_MS;
  while (Date.now() < end) {
    const runs = await db
      .selectFrom('sync_log')
      .select('status')
      .where('core_base_id', '=', coreBaseId)
      .where('started_at', '>=', since)
      .execute();
    if (runs.length > 0 && runs.every((r) => r.status !== 'running')) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One value-level drift check of a sync, reported on its progress tracker. */
export async function runDriftCheck(deps: Deps & { boss: PgBoss }, data: DriftCheckData) {
  await updateProgress(deps.db, data.trackingId, { status: 'IN_PROGRESS', message: 'Reading both apps' });
  try {
    const tables = await checkValueDrift(deps, data.coreBaseId, {
      full: data.full,
      sample: data.sample,
      settle: () => settle(deps.db, deps.boss, data.coreBaseId),
      progress: (done, total) => updateProgress(deps.db, data.trackingId, { done, total }),
    });
    if (tables === null) return; // cancelled
    const checked = tables.reduce((n, t) => n + t.checked, 0);
    const drifted = tables.reduce((n, t) => n + t.drifted, 0);
    await updateProgress(deps.db, data.trackingId, {
      status: 'COMPLETED',
      message:
        drifted === 0
          ? `${checked.toLocaleString('en')} linked records compared: all in step`
          : `${checked.toLocaleString('en')} linked records compared: ${drifted} drifted without a change signal (see Issues)`,
      result: { checked, drifted, tables },
    });
  } catch (error) {
    const text =
      (error as { userFacingMessage?: string }).userFacingMessage ??
      (error instanceof Error ? error.message : String(error));
    await updateProgress(deps.db, data.trackingId, {
      status: 'FAILED',
      message: `The check stopped: ${text}`,
    });
  }
}

export async function registerDriftCheck(boss: PgBoss, deps: Deps, runWorkers: boolean) {
  await boss.createQueue(DRIFT_CHECK, { retryLimit: 0, expireInSeconds: 60 * 60 });
  if (!runWorkers) return;
  await boss.work<DriftCheckData>(DRIFT_CHECK, { batchSize: 1 }, async (jobs) => {
    for (const job of jobs) await runDriftCheck({ ...deps, boss }, job.data);
  });
}
