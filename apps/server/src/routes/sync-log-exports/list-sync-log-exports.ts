import { SyncLogExport } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { Params, toExport } from './params';

export function listSyncLogExports(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/sync-log-exports',
    {
      schema: {
        tags: ['sync-log-exports'],
        summary: "A sync's exports, newest first",
        params: Params,
        response: { 200: z.object({ items: z.array(SyncLogExport) }) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const rows = await ctx.db
        .selectFrom('sync_log_export')
        .selectAll()
        .where('core_base_id', '=', base.id)
        .orderBy('created_at', 'desc')
        .limit(100)
        .execute();
      return { items: rows.map(toExport) };
    },
  );
}
