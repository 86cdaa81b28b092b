import type { PgBoss } from 'pg-boss';

/**
 * The queue of preview steps, apart from its worker (sync-preview-step.ts): the services and routes
 * that start a step need only this, so they do not import the preview's work (which imports them).
 */
export const SYNC_PREVIEW_STEP = 'sync-preview-step';
export type PreviewStep = 'download' | 'plan' | 'apply';
export type SyncPreviewStepData = { previewId: string; step: PreviewStep; externalTableId?: string };

export async function requestPreviewStep(
  boss: PgBoss,
  previewId: string,
  step: PreviewStep,
  externalTableId?: string,
) {
  const data: SyncPreviewStepData = { previewId, step, ...(externalTableId ? { externalTableId } : {}) };
  await boss.send(SYNC_PREVIEW_STEP, data, { singletonKey: previewId });
}
