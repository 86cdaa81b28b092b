import { BlendedTable, CreateBlendedTableBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { resolveConfig } from '../../services/blended-tables/configure';
import { ensureBlendedConnection, toBlendedTable } from '../../services/blended-tables/store';

export function createBlendedTable(app: RestApp, ctx: AppContext) {
  app.post(
    '/blended-tables',
    {
      schema: {
        tags: ['blended-tables'],
        summary:
          'Save a blended table: it appears in the base "Blended tables" of the user\'s blended connection, ready to map and sync',
        body: CreateBlendedTableBody,
        response: { 201: BlendedTable },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { name, sources, defaultSource, fields } = request.body;
      const resolved = await resolveConfig(ctx, principal, sources, fields, defaultSource);
      await ensureBlendedConnection(ctx, principal.userId);
      const row = await ctx.db
        .insertInto('blended_table')
        .values({
          owner_id: principal.userId,
          name,
          config: JSON.stringify({ sources, defaultSource, fields: resolved.fields }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(await toBlendedTable(ctx, row));
    },
  );
}
