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
 * Runs the sync's waiting pass (or a new one): the passes before it and their plans are dropped
 * (a new pass replaces the plan), the pass reads and plans, and its status, counts and progress are
 * kept on its row. A pass that fails says why and is not retried: asking again starts a new one.
 */
export async function handleSyncDryRun(deps: Deps, data: SyncDryRunData) {
  const { db } = deps;
  const base = await db
    .selectFrom('core_base')
    .select(['id', 'owner_id'])
    .where('id', '=', data.coreBaseId)
    .executeTakeFirst();
  if (!base) return; // deleted meanwhile
  const waiting = await db
    .selectFrom('dry_run')
    .select(['id', 'created_at'])
    .where('core_base_id', '=', base.id)
    .where('status', '=', 'queued')
    .orderBy('created_at', 'asc')
    .executeTakeFirst();
  const pass =
    waiting ??
    (await db
      .insertInto('dry_run')
      .values({ owner_id: base.owner_id, core_base_id: base.id, trigger: data.trigger })
      .returning(['id', 'created_at'])
      .executeTakeFirstOrThrow());
  await db
    .updateTable('dry_run')
    .set({ status: 'running', started_at: new Date() })
    .where('id', '=', pass.id)
    .execute();
  await db
    .deleteFrom('dry_run')
    .where('core_base_id', '=', base.id)
    .where('id', '!=', pass.id)
    .where('created_at', '<=', pass.created_at)
    .execute();
  try {
    const { skipped } = await runDryPass(deps, pass.id, base.id, (p) =>
      db
        .updateTable('dry_run')
        .set({ progress: JSON.stringify(p) })
        .where('id', '=', pass.id)
        .execute()
        .then(),
    );
    await db
      .updateTable('dry_run')
      .set({
        status: 'done',
        finished_at: new Date(),
        counts: JSON.stringify(await countPlannedWrites(db, pass.id)),
        error: skipped.length ? [...new Set(skipped.map((s) => s.reason))].join(' ') : null,
      })
      .where('id', '=', pass.id)
      .execute();
  } catch (error) {
    const why =
      (error as { userFacingMessage?: string }).userFacingMessage ??
      (error instanceof Error ? error.message : String(error));
    await db
      .updateTable('dry_run')
      .set({ status: 'failed', finished_at: new Date(), error: `The dry pass stopped: ${why}` })
      .where('id', '=', pass.id)
      .execute();
  }
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
