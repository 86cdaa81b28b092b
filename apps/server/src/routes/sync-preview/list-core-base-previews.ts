import { SyncPreview } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { toSyncPreview } from '../../services/sync-previews';

export function listCoreBasePreviews(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/core-bases/:id',
    {
      schema: {
        tags: ['sync-preview'],
        summary: "A sync's previews, newest first",
        params: z.object({ id: z.string().uuid('must be a sync id (a UUID)') }),
        response: { 200: z.object({ items: z.array(SyncPreview) }) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const rows = await ctx.db
        .selectFrom('sync_preview')
        .selectAll()
        .where('core_base_id', '=', base.id)
        .orderBy('created_at', 'desc')
        .limit(20)
        .execute();
      return { items: rows.map(toSyncPreview) };
    },
  );
}
