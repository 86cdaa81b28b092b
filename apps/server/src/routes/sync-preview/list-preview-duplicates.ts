import { Paged, PageQuery } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncPreview } from '../../services/sync-previews';
import { shownKey } from '../../sync/match-key';
import { PreviewParams } from './params';

const Duplicate = z.object({ side: z.string(), key: z.string(), recordIds: z.array(z.string()) });

export function listPreviewDuplicates(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/:id/temp-table/:externalTableId/duplicates',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          'Records of one downloaded table that share a match key (they are not matched until it is unique)',
        params: PreviewParams.extend({ externalTableId: z.string().uuid() }),
        querystring: PageQuery,
        response: { 200: Paged(Duplicate) },
      },
    },
    async (request) => {
      const preview = await findSyncPreview(ctx.db, principalOf(request), request.params.id);
      const { skip, take } = request.query;
      const side = await ctx.db
        .selectFrom('sync_preview_record')
        .select('side')
        .where('sync_preview_id', '=', preview.id)
        .where('external_table_id', '=', request.params.externalTableId)
        .limit(1)
        .executeTakeFirst();
      const rows = await ctx.db
        .selectFrom('sync_preview_problem')
        .select('details')
        .where('sync_preview_id', '=', preview.id)
        .where('kind', '=', 'duplicate')
        .orderBy('id')
        .execute();
      const all = rows
        .map((r) => r.details as { side: string; key: string; recordIds: string[] })
        .filter((d) => side !== undefined && d.side === side.side)
        .map((d) => ({ side: d.side, key: shownKey(d.key), recordIds: d.recordIds }));
      return { items: all.slice(skip, skip + take), total: all.length, skip, take };
    },
  );
}
