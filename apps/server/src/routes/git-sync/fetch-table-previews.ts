import { GitTablePreviews } from '@lockstep/contract';
import { GitSyncError } from '../../git-sync/repository';
import { tablePreviews } from '../../git-sync/runs';
import { findGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { GitSyncIdParams } from './params';

export function fetchTablePreviews(app: RestApp, ctx: AppContext) {
  app.get(
    '/git-sync/:id/fetch-table-previews',
    {
      schema: {
        tags: ['git-sync'],
        summary: "The tables and row counts found in the repository's folder at the branch head",
        params: GitSyncIdParams,
        response: { 200: GitTablePreviews },
      },
    },
    async (request) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      try {
        return await tablePreviews(ctx, row);
      } catch (error) {
        if (error instanceof GitSyncError)
          throw new HttpError(502, error.message, error.message, 'repository');
        throw error;
      }
    },
  );
}
