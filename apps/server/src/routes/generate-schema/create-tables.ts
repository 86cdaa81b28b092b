import { createTables } from '@lockstep/connectors/postgresql';
import { CreateTablesBody, CreateTablesResponse, GenerateSchemaParams } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { refreshExternalSchema } from '../../services/external-bases';
import { loadDestination, schemaError, toNewColumn } from './generate-schema-data';

/**
 * Spec section 7, POST /rest/generate-schema/{externalBaseId}/create-tables: tables of the sync's
 * other app created in this app (PostgreSQL), with their fields typed from the canonical types and
 * an identity primary key; all in one transaction. The new schema is stored right away.
 */
export function createTablesRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/generate-schema/:externalBaseId/create-tables',
    {
      schema: {
        tags: ['mappings'],
        summary: "Create the other app's tables (and their fields) in this app",
        params: GenerateSchemaParams,
        body: CreateTablesBody,
        response: { 201: CreateTablesResponse },
      },
    },
    async (request, reply) => {
      const { dest, source, items, schema } = await loadDestination(
        ctx,
        principalOf(request),
        request.params.externalBaseId,
      );
      const ids = [...new Set(request.body.sourceTableIds)];
      const sourceTables = await ctx.db
        .selectFrom('external_table')
        .selectAll()
        .where('id', 'in', ids)
        .where('external_base_id', '=', source.id)
        .execute();
      if (sourceTables.length !== ids.length) {
        throw new HttpError(
          400,
          'Source table not in the other app',
          "sourceTableIds must be tables of the sync's other app.",
          'validation',
        );
      }
      const taken = await ctx.db
        .selectFrom('external_table')
        .select('name')
        .where('external_base_id', '=', dest.id)
        .where(
          'name',
          'in',
          sourceTables.map((t) => t.name),
        )
        .execute();
      if (taken.length > 0) {
        throw new HttpError(
          409,
          'Table exists',
          `${dest.name} already has a table named ${taken.map((t) => `"${t.name}"`).join(', ')}. Map to it instead.`,
          'conflict',
        );
      }
      const columns = await ctx.db
        .selectFrom('external_column')
        .selectAll()
        .where('external_table_id', 'in', ids)
        .orderBy('name')
        .execute();
      const plan = sourceTables.map((t) => {
        const kept = columns
          .filter((c) => c.external_table_id === t.id)
          .map((c) => ({ source: c, column: toNewColumn(c, t.extras.primaryKey) }))
          .filter(
            (x): x is { source: typeof x.source; column: NonNullable<typeof x.column> } => x.column !== null,
          );
        return { table: t, kept };
      });
      const created = await createTables(
        items,
        schema,
        plan.map((p) => ({ name: p.table.name, columns: p.kept.map((k) => k.column) })),
      ).catch(schemaError);
      await refreshExternalSchema(ctx, dest);
      const stored = await ctx.db
        .selectFrom('external_table')
        .select(['id', 'remote_id'])
        .where('external_base_id', '=', dest.id)
        .where(
          'remote_id',
          'in',
          created.map((c) => c.remoteId),
        )
        .execute();
      const storedColumns = stored.length
        ? await ctx.db
            .selectFrom('external_column')
            .select(['id', 'external_table_id', 'remote_id', 'field_type'])
            .where(
              'external_table_id',
              'in',
              stored.map((s) => s.id),
            )
            .execute()
        : [];
      return reply.status(201).send({
        externalBaseId: dest.id,
        tables: created.map((c, i) => {
          const p = plan[i] as (typeof plan)[number];
          const table = stored.find((s) => s.remote_id === c.remoteId);
          if (!table) throw new Error(`created table ${c.remoteId} was not discovered`);
          return {
            sourceTableId: p.table.id,
            externalTableId: table.id,
            remoteId: c.remoteId,
            name: c.name,
            columns: c.columns.map((col, j) => {
              const s = storedColumns.find(
                (x) => x.external_table_id === table.id && x.remote_id === col.name,
              );
              return {
                sourceColumnId: (p.kept[j] as (typeof p.kept)[number]).source.id,
                externalColumnId: s?.id ?? '',
                name: col.name,
                fieldType: s?.field_type ?? '',
              };
            }),
          };
        }),
      });
    },
  );
}
