import { GitSyncRun } from '@lockstep/contract';
import { startGitSyncRun } from '../../git-sync/start-run';
import { findGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { assertPlanAllows } from '../../services/plan-guard';
import { GitSyncIdParams } from './params';

export function runFetchSchema(app: RestApp, ctx: AppContext) {
  app.post(
    '/git-sync/:id/run-fetch-schema',
    {
      schema: {
        tags: ['git-sync'],
        summary: 'Write schema.json only: tables, fields, canonical types and mappings (a job)',
        params: GitSyncIdParams,
        response: { 202: GitSyncRun },
      },
    },
    async (request, reply) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      await assertPlanAllows(ctx.db, row.owner_id, 'activate', ctx.config.environment === 'local');
      return reply.status(202).send(await startGitSyncRun(ctx, row, 'fetch_schema'));
    },
  );
}
