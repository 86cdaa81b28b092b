import type { ConnectorType } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, canAccessOwner, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { callConnector, connectorFor, openSecrets, portContext } from '../../services/external-connections';
import { storeDiscoveredSchema } from '../../services/external-schema';

const Column = z.object({ id: z.string(), remoteId: z.string(), name: z.string() });

export function updateTableSchema(app: RestApp, ctx: AppContext) {
  app.patch(
    '/external-tables/:id/update-schema',
    {
      schema: {
        tags: ['external-bases'],
        summary:
          "Re-read one table's fields from the app: renamed fields keep their mappings (stable ids), new ones are added, removed ones flagged",
        params: z.object({ id: z.string().uuid('must be an external table id (a UUID)') }),
        response: {
          200: z.object({
            table: z.object({ id: z.string(), remoteId: z.string(), name: z.string(), removed: z.boolean() }),
            fields: z.number().int(),
            added: z.array(Column),
            renamed: z.array(Column.extend({ previousName: z.string() })),
            removed: z.array(Column),
          }),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const table = await ctx.db
        .selectFrom('external_table')
        .innerJoin('external_base', 'external_base.id', 'external_table.external_base_id')
        .select([
          'external_table.id',
          'external_table.remote_id',
          'external_table.owner_id',
          'external_base.id as base_id',
          'external_base.type',
          'external_base.remote_id as base_remote_id',
          'external_base.external_connection_id',
        ])
        .where('external_table.id', '=', request.params.id)
        .executeTakeFirst();
      if (!table || !canAccessOwner(principal, table.owner_id)) throw notFound('Table');
      if (!table.external_connection_id) throw notFound('Connection');
      const connection = await ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', table.external_connection_id)
        .executeTakeFirstOrThrow();
      const columnsNow = () =>
        ctx.db
          .selectFrom('external_column')
          .select(['id', 'remote_id', 'name', 'options'])
          .where('external_table_id', '=', table.id)
          .execute();
      const before = await columnsNow();
      const type = table.type as ConnectorType;
      const port = connectorFor(ctx, type);
      const discovered = await callConnector(type, () =>
        port.discoverSchema(
          openSecrets(ctx, connection).connectionItems,
          table.base_remote_id,
          portContext(ctx, connection),
        ),
      );
      const found = discovered.find((t) => t.remoteId === table.remote_id);
      const base = { id: table.base_id, owner_id: table.owner_id };
      let fields = 0;
      if (found) {
        // Same storage as update-table-previews, limited to this table: other tables stay as they are.
        fields = (await storeDiscoveredSchema(ctx.db, base, [found], { partial: true })).fields;
      } else {
        await ctx.db
          .updateTable('external_table')
          .set((eb) => ({
            extras: eb.fn('jsonb_set', ['extras', eb.val('{removed}'), eb.val('true')]),
            updated_at: new Date(),
          }))
          .where('id', '=', table.id)
          .execute();
      }
      const after = await columnsNow();
      const was = new Map(before.map((c) => [c.id, c]));
      const isRemoved = (c: { options: unknown }) => (c.options as { removed?: boolean }).removed === true;
      const view = (c: { id: string; remote_id: string; name: string }) => ({
        id: c.id,
        remoteId: c.remote_id,
        name: c.name,
      });
      const row = await ctx.db
        .selectFrom('external_table')
        .select(['id', 'remote_id', 'name', 'extras'])
        .where('id', '=', table.id)
        .executeTakeFirstOrThrow();
      return {
        table: {
          id: row.id,
          remoteId: row.remote_id,
          name: row.name,
          removed: (row.extras as { removed?: boolean }).removed === true,
        },
        fields,
        added: after.filter((c) => !was.has(c.id)).map(view),
        renamed: after
          .filter((c) => was.has(c.id) && was.get(c.id)?.name !== c.name)
          .map((c) => ({ ...view(c), previousName: was.get(c.id)?.name as string })),
        removed: found
          ? after.filter((c) => isRemoved(c) && !isRemoved(was.get(c.id) ?? { options: {} })).map(view)
          : [],
      };
    },
  );
}
