import { SyncError } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncError, toSyncError } from '../../services/sync-errors';

export const SyncErrorParams = z.object({ id: z.string().uuid('must be an issue id (a UUID)') });

export function getSyncError(app: RestApp, ctx: AppContext) {
  app.get(
    '/sync-errors/:id',
    {
      schema: {
        tags: ['sync-errors'],
        summary: 'One issue',
        params: SyncErrorParams,
        response: { 200: SyncError },
      },
    },
    async (request) => toSyncError(await findSyncError(ctx.db, principalOf(request), request.params.id)),
  );
}
