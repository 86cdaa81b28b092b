import { addColumns } from '@lockstep/connectors/postgresql';
import { CreateFieldsBody, CreateFieldsResponse, GenerateSchemaParams } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { refreshExternalSchema } from '../../services/external-bases';
import { loadDestination, schemaError, toNewColumn } from './generate-schema-data';

/**
 * Spec section 7, POST /rest/generate-schema/{destExternalBaseId}/create-fields: fields of the
 * sync's other app added to one table of this app (PostgreSQL ALTER TABLE ADD COLUMN, one
 * transaction); a name the table already has gets a suffix. The new schema is stored right away.
 */
export function createFieldsRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/generate-schema/:externalBaseId/create-fields',
    {
      schema: {
        tags: ['mappings'],
        summary: "Add fields of the other app's table to a table of this app",
        params: GenerateSchemaParams,
        body: CreateFieldsBody,
        response: { 201: CreateFieldsResponse },
      },
    },
    async (request, reply) => {
      const { dest, source, items, schema, app } = await loadDestination(
        ctx,
        principalOf(request),
        request.params.externalBaseId,
      );
      const table = await ctx.db
        .selectFrom('external_table')
        .selectAll()
        .where('id', '=', request.body.destTableId)
        .where('external_base_id', '=', dest.id)
        .executeTakeFirst();
      if (!table) {
        throw new HttpError(
          400,
          'Table not in this app',
          'destTableId must be a table of this app.',
          'validation',
        );
      }
      const ids = [...new Set(request.body.sourceColumnIds)];
      const sources = await ctx.db
        .selectFrom('external_column')
        .innerJoin('external_table', 'external_table.id', 'external_column.external_table_id')
        .selectAll('external_column')
        .select('external_table.extras as table_extras')
        .where('external_column.id', 'in', ids)
        .where('external_table.external_base_id', '=', source.id)
        .execute();
      if (sources.length !== ids.length) {
        throw new HttpError(
          400,
          'Source field not in the other app',
          "sourceColumnIds must be fields of the sync's other app.",
          'validation',
        );
      }
      const kept = ids.map((id) => {
        const c = sources.find((s) => s.id === id) as (typeof sources)[number];
        const column = toNewColumn(c, c.table_extras.primaryKey);
        if (c.options.removed === true) {
          throw new HttpError(
            400,
            'Removed field',
            `"${c.name}" was removed from the other app.`,
            'validation',
          );
        }
        if (!column) {
          throw new HttpError(
            400,
            'Record id field',
            `"${c.name}" holds record ids of the other app, which mean nothing here; it cannot be copied.`,
            'validation',
          );
        }
        return { source: c, column };
      });
      const name = table.remote_id.startsWith(`${schema}.`)
        ? table.remote_id.slice(schema.length + 1)
        : table.name;
      const columns = kept.map((k) => k.column);
      // A database's column is named by its name; an app's field has an id of its own.
      const added = app
        ? await app.addFields(table.remote_id, columns)
        : (await addColumns(items, schema, name, columns).catch(schemaError)).map((a, i) => ({
            remoteId: a.name,
            name: a.name,
            requestedName: columns[i]?.name ?? a.name,
          }));
      await refreshExternalSchema(ctx, dest);
      const stored = await ctx.db
        .selectFrom('external_column')
        .select(['id', 'remote_id', 'field_type'])
        .where('external_table_id', '=', table.id)
        .execute();
      return reply.status(201).send({
        externalBaseId: dest.id,
        externalTableId: table.id,
        columns: added.map((a, i) => {
          const s = stored.find((x) => x.remote_id === a.remoteId);
          return {
            sourceColumnId: (kept[i] as (typeof kept)[number]).source.id,
            externalColumnId: s?.id ?? '',
            name: a.name,
            fieldType: s?.field_type ?? '',
            ...(a.name !== a.requestedName ? { renamedFrom: a.requestedName } : {}),
          };
        }),
      });
    },
  );
}
