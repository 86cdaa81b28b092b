import { SyncPreview } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { requestPreviewStep } from '../../jobs/sync-preview-step';
import { createProgress } from '../../services/progress';
import { findSyncPreview, toSyncPreview, transitionPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

export function cloneSyncPreview(app: RestApp, ctx: AppContext) {
  app.post(
    '/sync-preview/:id/clone',
    {
      schema: {
        tags: ['sync-preview'],
        summary:
          'Start a fresh preview of the same sync and tables (for example after a failed or cancelled one)',
        params: PreviewParams,
        response: { 201: SyncPreview },
      },
    },
    async (request, reply) => {
      const source = await findSyncPreview(ctx.db, principalOf(request), request.params.id);
      const tracker = await createProgress(ctx.db, source.owner_id, 'sync-preview');
      const row = await ctx.db
        .insertInto('sync_preview')
        .values({
          owner_id: source.owner_id,
          core_base_id: source.core_base_id,
          core_table_ids: JSON.stringify(source.core_table_ids),
          tracking_id: tracker.id,
          summary: '{}',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const started = await transitionPreview(ctx.db, row.id, 'new', 'downloading', 'server');
      await requestPreviewStep(ctx.boss, row.id, 'download');
      return reply.status(201).send(toSyncPreview(started));
    },
  );
}
