import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findExternalBase, refreshExternalSchema } from '../../services/external-bases';
import { ExternalBaseParams } from './params';

export function updateTablePreviews(app: RestApp, ctx: AppContext) {
  app.patch(
    '/external-bases/:id/update-table-previews',
    {
      schema: {
        tags: ['external-bases'],
        summary:
          "Re-read the app's tables and fields: renames keep their mappings, removed fields are flagged",
        params: ExternalBaseParams,
        response: {
          200: z.object({
            tables: z.number().int(),
            fields: z.number().int(),
            removedFields: z.number().int(),
          }),
        },
      },
    },
    async (request) => {
      const base = await findExternalBase(ctx.db, principalOf(request), request.params.id);
      return refreshExternalSchema(ctx, base);
    },
  );
}
