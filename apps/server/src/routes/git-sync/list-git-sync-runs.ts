import { GitSyncRuns, PageQuery } from '@lockstep/contract';
import { findGitSync, toRun } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { GitSyncIdParams } from './params';

export function listGitSyncRuns(app: RestApp, ctx: AppContext) {
  app.get(
    '/git-sync/:id/runs',
    {
      schema: {
        tags: ['git-sync'],
        summary:
          "A git sync's runs, newest first: status, commit, counts per table, conflicts, problems, error",
        params: GitSyncIdParams,
        querystring: PageQuery,
        response: { 200: GitSyncRuns },
      },
    },
    async (request) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      const { skip, take } = request.query;
      const [rows, total] = await Promise.all([
        ctx.db
          .selectFrom('git_sync_run')
          .selectAll()
          .where('git_sync_id', '=', row.id)
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .offset(skip)
          .limit(take)
          .execute(),
        ctx.db
          .selectFrom('git_sync_run')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('git_sync_id', '=', row.id)
          .executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toRun), total: Number(total.n), skip, take };
    },
  );
}
