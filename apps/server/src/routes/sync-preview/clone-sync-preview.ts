import { SyncPreview } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncPreview, startPreview } from '../../services/sync-previews';
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
      const base = { id: source.core_base_id, owner_id: source.owner_id };
      return reply.status(201).send(await startPreview(ctx.db, ctx.boss, base, source.core_table_ids));
    },
  );
}
