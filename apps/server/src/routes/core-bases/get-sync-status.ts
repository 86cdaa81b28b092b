import { SyncStatus } from '@lockstep/contract';
import type { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase, syncStatuses } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

export function getSyncStatus(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/sync-status',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'State, label and last sync of one sync',
        params: CoreBaseIdParams,
        response: { 200: SyncStatus },
      },
    },
    async (request) => {
      const row = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const [status] = await syncStatuses(ctx.db, [row]);
      return status as z.infer<typeof SyncStatus>;
    },
  );
}
