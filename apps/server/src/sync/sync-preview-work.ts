import type { SyncPreviewStatus } from '@lockstep/contract';
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import type { PreviewStep } from '../jobs/preview-step-queue';
import { handleSyncRun, type SyncRunner } from '../jobs/sync-run';
import { updateProgress } from '../services/progress';
import type { SecretBox } from '../services/secret-box';
import { transitionPreview } from '../services/sync-previews';
import { announceSyncsChanged } from './postgres-change-listener';
import { stageFirstSyncsFromPreview } from './preview/preview-apply';
import { downloadPreview, previewMappings, rekeyStaged } from './preview/preview-download';
import { emptySummary, type PreviewSummary, planMapping } from './preview/preview-plan';
import { orderByLinks, relationTargets } from './relations';
import type { RuntimeConnectors } from './runtime-connectors';

export type PreviewDeps = {
  db: Db;
  boss: PgBoss;
  secretBox: SecretBox;
  connectors: RuntimeConnectors;
  runner: SyncRunner;
};

async function statusOf(db: Db, id: string): Promise<SyncPreviewStatus | null> {
  const row = await db.selectFrom('sync_preview').select('status').where('id', '=', id).executeTakeFirst();
  return (row?.status as SyncPreviewStatus | undefined) ?? null;
}

const loadPreview = (db: Db, id: string) =>
  db.selectFrom('sync_preview').selectAll().where('id', '=', id).executeTakeFirst();

/**
 * One step of a preview, moving its status as the work finishes (the server's transitions):
 * download (preview/preview-download.ts) -> plan (preview/preview-plan.ts) -> apply (the first sync
 * itself, started from the download by preview/preview-apply.ts and run by the runner).
 */
export async function runPreviewStep(
  deps: PreviewDeps,
  previewId: string,
  step: PreviewStep,
  onlyTable?: string,
) {
  const { db } = deps;
  const preview = await loadPreview(db, previewId);
  if (!preview) return;
  try {
    if (step === 'download') {
      if ((await statusOf(db, previewId)) !== 'downloading') return;
      const finished = await downloadPreview(deps, preview, onlyTable);
      if (!finished) return;
      await transitionPreview(db, previewId, 'downloading', 'download_finished', 'server');
      await transitionPreview(db, previewId, 'download_finished', 'planning', 'server');
      step = 'plan';
    }
    if (step === 'plan') {
      if ((await statusOf(db, previewId)) !== 'planning') return;
      await db.deleteFrom('sync_preview_problem').where('sync_preview_id', '=', previewId).execute();
      // The download just added its rows: without their numbers the planner read each chunk by
      // sorting the table (1M staged rows: 90 s of the plan).
      await sql`analyze sync_preview_record`.execute(db);
      const summary = emptySummary();
      // Per table pair too: the preview's tabs count the pair on show.
      const byTable: Record<string, PreviewSummary> = {};
      const { mappings } = await previewMappings(db, preview);
      const targets = relationTargets(mappings);
      // Linked tables first, as apply runs them: a contact's company is paired before the contact.
      for (const m of orderByLinks(mappings)) {
        const one = emptySummary();
        await planMapping(db, previewId, m, one, targets);
        byTable[m.tableMappingId] = one;
        for (const k of Object.keys(one) as (keyof PreviewSummary)[]) summary[k] += one[k];
      }
      await transitionPreview(
        db,
        previewId,
        'planning',
        summary.duplicates > 0 ? 'planning_problem' : 'in_review',
        'server',
        { ...summary, byTable },
      );
      if (preview.tracking_id)
        await updateProgress(db, preview.tracking_id, {
          status: 'COMPLETED',
          result: summary,
          message: 'Preview ready',
        });
      return;
    }
    if (step === 'apply') {
      if ((await statusOf(db, previewId)) !== 'applying') return;
      const current = (await loadPreview(db, previewId)) ?? preview;
      const { ownerId, mappings } = await previewMappings(db, current);
      if (ownerId) {
        for (const m of mappings) await rekeyStaged(db, previewId, m);
        await stageFirstSyncsFromPreview(db, current, ownerId, mappings);
      }
      // Applying is the first sync itself: the runner matches, reconciles and writes, chunk by chunk.
      // The sync counts as switched on from here, so its label is Active once the runs are done.
      const applyStartedAt = new Date();
      for (let i = 0; i < 100_000; i++) {
        const result = await handleSyncRun(
          db,
          deps.boss,
          deps.runner,
          { coreBaseId: preview.core_base_id, trigger: 'preview' },
          { chain: false },
        );
        if (result === 'failed') throw new Error('The first sync failed; see Issues.');
        if (result === 'done') break;
      }
      await db
        .updateTable('core_base')
        .set({ sync_state: 'on', sync_state_changed_at: applyStartedAt })
        .where('id', '=', preview.core_base_id)
        .execute();
      await announceSyncsChanged(db).catch(() => {});
      await transitionPreview(db, previewId, 'applying', 'done', 'server');
      const tracking = (await loadPreview(db, previewId))?.tracking_id;
      if (tracking) await updateProgress(db, tracking, { status: 'COMPLETED', message: 'Applied' });
    }
  } catch (error) {
    const status = await statusOf(db, previewId);
    const failed =
      status === 'downloading'
        ? 'download_failed'
        : status === 'applying'
          ? 'applying_failed'
          : status === 'planning'
            ? 'planning_problem'
            : null;
    if (status && failed)
      await transitionPreview(db, previewId, status, failed, 'server', {
        error: error instanceof Error ? error.message : String(error),
      });
    if (preview.tracking_id)
      await updateProgress(db, preview.tracking_id, {
        status: 'FAILED',
        message: error instanceof Error ? error.message : String(error),
      });
  }
}
