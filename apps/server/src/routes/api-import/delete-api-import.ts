import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findApiImport } from '../../services/api-import/store';
import { ApiImportParams } from './params';

/** Deletes the saved import (its schedule stops); records it imported stay in the app. */
export function deleteApiImport(app: RestApp, ctx: AppContext) {
  app.delete(
    '/api-import/:id',
    {
      schema: {
        tags: ['api-import'],
        summary: 'Delete an API import (records it imported stay in the app)',
        params: ApiImportParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const row = await findApiImport(ctx.db, principalOf(request), request.params.id);
      await ctx.db.deleteFrom('api_import').where('id', '=', row.id).execute();
      return { deleted: true as const };
    },
  );
}
