import { SyncPreview, type SyncPreviewStatus } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { requestPreviewStep } from '../../jobs/preview-step-queue';
import { createProgress } from '../../services/progress';
import { findSyncPreview, toSyncPreview, transitionPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

export function redownloadExternalTable(app: RestApp, ctx: AppContext) {
  app.patch(
    '/sync-preview/:id/external-table/:externalTableId',
    {
      schema: {
        tags: ['sync-preview'],
        summary: 'Download one table of a preview again (after fixing its data), then match and plan again',
        params: PreviewParams.extend({ externalTableId: z.string().uuid() }),
        response: { 200: SyncPreview },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const preview = await findSyncPreview(ctx.db, principal, request.params.id);
      const table = await ctx.db
        .selectFrom('external_table')
        .innerJoin('external_base', 'external_base.id', 'external_table.external_base_id')
        .select('external_table.id')
        .where('external_table.id', '=', request.params.externalTableId)
        .where('external_base.core_base_id', '=', preview.core_base_id)
        .executeTakeFirst();
      if (!table)
        throw new HttpError(404, 'Table not found', 'This table is not part of the sync.', 'not_found');
      await transitionPreview(
        ctx.db,
        preview.id,
        preview.status as SyncPreviewStatus,
        'downloading',
        'client',
      );
      const tracker = await createProgress(ctx.db, preview.owner_id, 'sync-preview-downloading');
      const moved = await ctx.db
        .updateTable('sync_preview')
        .set({ tracking_id: tracker.id })
        .where('id', '=', preview.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await requestPreviewStep(ctx.boss, preview.id, 'download', table.id);
      return toSyncPreview(moved);
    },
  );
}
