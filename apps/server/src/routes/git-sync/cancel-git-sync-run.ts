import { GitSyncRun } from '@lockstep/contract';
import { findGitSync, toRun } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { GitSyncIdParams } from './params';

export function cancelGitSyncRun(app: RestApp, ctx: AppContext) {
  app.post(
    '/git-sync/:id/cancel',
    {
      schema: {
        tags: ['git-sync'],
        summary: 'Cancel the run in progress; it stops at its next step (a commit already made stays)',
        params: GitSyncIdParams,
        response: { 200: GitSyncRun },
      },
    },
    async (request) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      const run = await ctx.db
        .updateTable('git_sync_run')
        .set({ status: 'CANCELLED', message: 'Cancelled by the user', finished_at: new Date() })
        .where('git_sync_id', '=', row.id)
        .where('status', 'in', ['PENDING', 'IN_PROGRESS'])
        .returningAll()
        .executeTakeFirst();
      if (!run)
        throw new HttpError(409, 'No run in progress', 'No run of this git sync is in progress.', 'conflict');
      return toRun(run);
    },
  );
}
