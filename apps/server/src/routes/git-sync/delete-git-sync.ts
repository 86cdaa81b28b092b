import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { cacheDirOf, findGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { GitSyncIdParams } from './params';

export function deleteGitSync(app: RestApp, ctx: AppContext) {
  app.delete(
    '/git-sync/:id',
    {
      schema: {
        tags: ['git-sync'],
        summary: 'Delete a git sync and its run history (the repository and its commits stay as they are)',
        params: GitSyncIdParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      // A run in progress sees its row gone and stops at its next step.
      await ctx.db
        .updateTable('git_sync_run')
        .set({ status: 'CANCELLED', finished_at: new Date() })
        .where('git_sync_id', '=', row.id)
        .where('status', 'in', ['PENDING', 'IN_PROGRESS'])
        .execute();
      await ctx.db.deleteFrom('git_sync').where('id', '=', row.id).execute();
      await rm(cacheDirOf(ctx.config, row.id), { recursive: true, force: true });
      return { deleted: true as const };
    },
  );
}
