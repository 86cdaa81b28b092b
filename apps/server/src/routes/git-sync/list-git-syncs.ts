import { GitSyncList } from '@lockstep/contract';
import { lastRunOf, toGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';

export function listGitSyncs(app: RestApp, ctx: AppContext) {
  app.get(
    '/git-sync',
    {
      schema: {
        tags: ['git-sync'],
        summary: "The user's git syncs (one per sync at most), each with its newest run",
        response: { 200: GitSyncList },
      },
    },
    async (request) => {
      const { userId } = principalOf(request);
      const rows = await ctx.db
        .selectFrom('git_sync')
        .selectAll()
        .where('owner_id', '=', userId)
        .orderBy('created_at')
        .execute();
      const last = await lastRunOf(
        ctx.db,
        rows.map((r) => r.id),
      );
      return { items: rows.map((r) => toGitSync(r, last.get(r.id) ?? null, ctx.secretBox)) };
    },
  );
}
