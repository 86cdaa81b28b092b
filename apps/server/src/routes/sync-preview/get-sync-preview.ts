import { SyncPreview } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncPreview, toSyncPreview } from '../../services/sync-previews';
import { PreviewParams } from './params';

export function getSyncPreview(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-preview/:id',
    {
      schema: {
        tags: ['sync-preview'],
        summary: 'One sync preview',
        params: PreviewParams,
        response: { 200: SyncPreview },
      },
    },
    async (request) => toSyncPreview(await findSyncPreview(ctx.db, principalOf(request), request.params.id)),
  );
}
