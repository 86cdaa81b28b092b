import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { countPlannedWrites, runDryPass } from '../sync/dry-pass';
import type { Deps } from '../sync/run/run-context';

export const SYNC_DRY_RUN = 'sync-dry-run';
export type SyncDryRunData = { coreBaseId: string; trigger: string };

/**
 * Queues a dry pass of a sync ("what would the next run do"); returns the pass's id. A pass already
 * waiting is reused, so a burst of requests (or of wake-ups in dry-run mode) makes one pass; the
 * queue is `stately` by sync, so one pass runs at a time per sync. A pass only reads, so it may run
 * alongside a real run of the same sync.
 */
export async function requestDryRun(db: Db, boss: PgBoss, coreBaseId: string, trigger: string) {
  const base = await db
    .selectFrom('core_base')
    .select(['id', 'owner_id'])
    .where('id', '=', coreBaseId)
    .executeTakeFirst();
  if (!base) return null;
  const waiting = await db
    .selectFrom('dry_run')
    .select('id')
    .where('core_base_id', '=', base.id)
    .where('status', '=', 'queued')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  const pass =
    waiting ??
    (await db
      .insertInto('dry_run')
      .values({ owner_id: base.owner_id, core_base_id: base.id, trigger })
      .returning('id')
      .executeTakeFirstOrThrow());
  await boss.send(SYNC_DRY_RUN, { coreBaseId: base.id, trigger } satisfies SyncDryRunData, {
    singletonKey: base.id,
  });
  return pass.id;
}

/**
 * Runs the sync's waiting pass: it reads and plans, and its status, counts and progress are kept on
 * its row. The plan before it stays readable until it finishes, then is replaced by it (a failed pass
 * replaces it too: it says why). A pass whose plan was discarded or applied while it ran keeps
 * nothing. A failed pass is not retried: the next request or wake-up makes a new one.
 */
export async function handleSyncDryRun(deps: Deps, data: SyncDryRunData) {
  const { db } = deps;
  const waiting = await db
    .selectFrom('dry_run')
    .select(['id', 'created_at'])
    .where('core_base_id', '=', data.coreBaseId)
    .where('status', '=', 'queued')
    .orderBy('created_at', 'asc')
    .executeTakeFirst();
  // None: discarded or applied before it started (or the sync was deleted).
  if (!waiting) return;
  const started = await db
    .updateTable('dry_run')
    .set({ status: 'running', started_at: new Date() })
    .where('id', '=', waiting.id)
    .where('status', '=', 'queued')
    .returning('id')
    .executeTakeFirst();
  if (!started) return;
  let outcome: { status: 'done' | 'failed'; error: string | null };
  try {
    const { skipped } = await runDryPass(deps, waiting.id, data.coreBaseId, (p) =>
      db
        .updateTable('dry_run')
        .set({ progress: JSON.stringify(p) })
        .where('id', '=', waiting.id)
        .execute()
        .then(),
    );
    outcome = {
      status: 'done',
      error: skipped.length ? [...new Set(skipped.map((s) => s.reason))].join(' ') : null,
    };
  } catch (error) {
    const why =
      (error as { userFacingMessage?: string }).userFacingMessage ??
      (error instanceof Error ? error.message : String(error));
    outcome = { status: 'failed', error: `The dry pass stopped: ${why}` };
  }
  const counts = await countPlannedWrites(db, waiting.id);
  await db.transaction().execute(async (trx) => {
    const finished = await trx
      .updateTable('dry_run')
      .set({ ...outcome, finished_at: new Date(), counts: JSON.stringify(counts) })
      .where('id', '=', waiting.id)
      .where('status', '=', 'running')
      .returning('id')
      .executeTakeFirst();
    if (!finished) {
      // Discarded or applied meanwhile: what it planned is not kept.
      await trx.deleteFrom('dry_run_write').where('dry_run_id', '=', waiting.id).execute();
      return;
    }
    // The plan replaces the plans before it.
    await trx
      .deleteFrom('dry_run')
      .where('core_base_id', '=', data.coreBaseId)
      .where('id', '!=', waiting.id)
      .where('created_at', '<=', waiting.created_at)
      .where('status', 'not in', ['queued'])
      .execute();
  });
}

export async function registerSyncDryRun(boss: PgBoss, deps: Deps, runWorkers: boolean) {
  await boss.createQueue(SYNC_DRY_RUN, {
    policy: 'stately',
    retryLimit: 0,
    expireInSeconds: 60 * 60,
    notify: true,
  });
  if (!runWorkers) return;
  await boss.work<SyncDryRunData>(
    SYNC_DRY_RUN,
    { batchSize: 1, notifyPollingIntervalSeconds: 2, localConcurrency: 2 },
    async (jobs) => {
      for (const job of jobs) await handleSyncDryRun(deps, job.data);
    },
  );
}
