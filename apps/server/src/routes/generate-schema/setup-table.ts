import { SetupTableParams, SetupTablesResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { setUpTables } from '../../services/generate-schema';

/**
 * Spec section 7, POST /rest/generate-schema/setup/{externalTableId}: one table without a partner
 * is created in the sync's other app and mapped to it, every field paired (matched on email when
 * it has one).
 */
export function setupTableRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/generate-schema/setup/:externalTableId',
    {
      schema: {
        tags: ['mappings'],
        summary: 'Create a table in the other app and map it to this one, every field paired',
        params: SetupTableParams,
        response: { 201: SetupTablesResponse },
      },
    },
    async (request, reply) => {
      const table = await ctx.db
        .selectFrom('external_table')
        .select(['id', 'external_base_id'])
        .where('id', '=', request.params.externalTableId)
        .executeTakeFirst();
      if (!table) throw notFound('Table');
      // Mapped already, or one the other app cannot take: a 4xx with why (setUpTables throws it).
      const result = await setUpTables(ctx, principalOf(request), table.external_base_id, [table.id]);
      return reply.status(201).send(result);
    },
  );
}
