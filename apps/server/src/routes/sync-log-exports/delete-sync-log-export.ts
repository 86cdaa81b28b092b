import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { ExportParams, findExport } from './params';

export function deleteSyncLogExport(app: RestApp, ctx: AppContext) {
  app.delete(
    '/core-bases/:id/sync-log-exports/:exportId',
    {
      schema: {
        tags: ['sync-log-exports'],
        summary: 'Delete an export',
        params: ExportParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const row = await findExport(ctx.db, principalOf(request), request.params);
      await ctx.db.deleteFrom('sync_log_export').where('id', '=', row.id).execute();
      return { deleted: true as const };
    },
  );
}
