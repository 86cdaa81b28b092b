import { ApiImport } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toApiImport } from '../../services/api-import/store';

export function listApiImports(app: RestApp, ctx: AppContext) {
  app.get(
    '/api-import',
    {
      schema: {
        tags: ['api-import'],
        summary: "The user's saved API imports, newest first, with their schedule and last run",
        response: { 200: z.object({ items: z.array(ApiImport) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const rows = await ctx.db
        .selectFrom('api_import as i')
        .leftJoin('external_connection as c', 'c.id', 'i.external_connection_id')
        .selectAll('i')
        .select(['c.name as connection_name', 'c.type as connection_type'])
        .where('i.owner_id', '=', principal.userId)
        .orderBy('i.created_at', 'desc')
        .limit(200)
        .execute();
      return {
        items: rows.map(({ connection_name, connection_type, ...row }) =>
          toApiImport(
            row,
            connection_name && connection_type ? { name: connection_name, type: connection_type } : null,
          ),
        ),
      };
    },
  );
}
