import { SyncStatus } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { syncStatuses } from '../../services/core-bases';

const BatchQuery = z.object({
  coreBaseIds: z
    .string()
    .max(20_000)
    .transform((s) => [
      ...new Set(
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(z.string().uuid('each id must be a sync id (a UUID)')).max(200)),
});

export function getSyncStatusBatch(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/sync-status/batch',
    {
      schema: {
        tags: ['core-bases'],
        summary:
          'Sync status of many syncs at once (coreBaseIds as a comma list); unknown or foreign ids are left out',
        querystring: BatchQuery,
        response: { 200: z.object({ statuses: z.array(SyncStatus) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const ids = request.query.coreBaseIds;
      if (ids.length === 0) return { statuses: [] };
      let q = ctx.db.selectFrom('core_base').selectAll().where('id', 'in', ids);
      if (!principal.staff) q = q.where('owner_id', '=', principal.userId);
      return { statuses: await syncStatuses(ctx.db, await q.execute()) };
    },
  );
}
