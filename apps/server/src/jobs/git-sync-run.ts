import type { PgBoss } from 'pg-boss';
import { executeGitSyncRun } from '../git-sync/runs';
import type { AppContext } from '../http/context';

export const GIT_SYNC_RUN = 'git-sync-run';
export type GitSyncRunData = { runId: string };

/** Git sync runs (upload, download, fetch-schema): one job per run, its state kept in git_sync_run. */
export async function registerGitSyncRun(boss: PgBoss, ctx: AppContext | null, runWorkers: boolean) {
  await boss.createQueue(GIT_SYNC_RUN, { retryLimit: 0, expireInSeconds: 60 * 60 });
  if (!runWorkers || !ctx) return;
  await boss.work<GitSyncRunData>(GIT_SYNC_RUN, { batchSize: 1 }, async (jobs) => {
    for (const job of jobs) await executeGitSyncRun(ctx, job.data.runId);
  });
}
