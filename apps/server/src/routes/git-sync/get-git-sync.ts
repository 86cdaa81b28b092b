import { GitSync } from '@lockstep/contract';
import { findGitSync, lastRunOf, toGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { GitSyncIdParams } from './params';

export function getGitSync(app: RestApp, ctx: AppContext) {
  app.get(
    '/git-sync/:id',
    {
      schema: {
        tags: ['git-sync'],
        summary: 'One git sync: repository (never its token), branch, folder, sides, format, newest run',
        params: GitSyncIdParams,
        response: { 200: GitSync },
      },
    },
    async (request) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      const last = await lastRunOf(ctx.db, [row.id]);
      return toGitSync(row, last.get(row.id) ?? null, ctx.secretBox);
    },
  );
}
