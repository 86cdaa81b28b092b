import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

export function deleteCoreBase(app: RestApp, ctx: AppContext) {
  app.delete(
    '/core-bases/:id',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Delete a sync; cascade=true also deletes its connected bases, mappings, links and logs',
        params: CoreBaseIdParams,
        querystring: z.object({ cascade: z.enum(['true', 'false']).default('false') }),
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const row = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      if (request.query.cascade !== 'true') {
        const attached = await ctx.db
          .selectFrom('external_base')
          .select('id')
          .where('core_base_id', '=', row.id)
          .limit(1)
          .executeTakeFirst();
        if (attached) {
          throw new HttpError(
            409,
            'Sync has connected apps',
            'This sync has connected apps and mappings. Delete it with cascade=true to remove them too.',
            'conflict',
          );
        }
      }
      // The foreign keys cascade from core_base to everything it owns.
      await ctx.db.deleteFrom('core_base').where('id', '=', row.id).execute();
      return { deleted: true as const };
    },
  );
}
