import type { PgBoss } from 'pg-boss';
import { type PreviewDeps, runPreviewStep } from '../sync/sync-preview-work';
import { SYNC_PREVIEW_STEP, type SyncPreviewStepData } from './preview-step-queue';
import { RUN_HEARTBEAT_SECONDS } from './sync-run';

/** Downloads, plans and applies sync previews in the background; the preview's status tells the client. */
export async function registerSyncPreviewStep(boss: PgBoss, deps: PreviewDeps, runWorkers: boolean) {
  await boss.createQueue(SYNC_PREVIEW_STEP, {
    retryLimit: 2,
    retryDelay: 5,
    expireInSeconds: 60 * 60,
    heartbeatSeconds: RUN_HEARTBEAT_SECONDS,
  });
  await boss.updateQueue(SYNC_PREVIEW_STEP, { heartbeatSeconds: RUN_HEARTBEAT_SECONDS });
  if (!runWorkers) return;
  await boss.work<SyncPreviewStepData>(SYNC_PREVIEW_STEP, { batchSize: 1 }, async (jobs) => {
    for (const job of jobs)
      await runPreviewStep(deps, job.data.previewId, job.data.step, job.data.externalTableId);
  });
}
