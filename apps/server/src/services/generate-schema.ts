import { createTables } from '@lockstep/connectors/postgresql';
import type { CreateTablesResponse } from '@lockstep/contract';
import type { AppContext, Principal } from '../http/context';
import { HttpError, notFound } from '../http/http-error';
import { loadDestination, schemaError, toNewColumn } from '../routes/generate-schema/generate-schema-data';
import { findCoreBase } from './core-bases';
import { findExternalBase, refreshExternalSchema } from './external-bases';
import { replaceTableMappings } from './table-mappings';

/**
 * Tables of the sync's other app created in this app (PostgreSQL, Supabase), with their fields typed
 * from the canonical types and an identity primary key, all in one transaction; the new schema is
 * stored right away. Shared by create-tables, its async twin (a job) and the setup routes.
 */
export async function createTablesFromSource(
  ctx: AppContext,
  principal: Principal,
  externalBaseId: string,
  sourceTableIds: string[],
): Promise<CreateTablesResponse> {
  const { dest, source, items, schema } = await loadDestination(ctx, principal, externalBaseId);
  const ids = [...new Set(sourceTableIds)];
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
  return {
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
          const s = storedColumns.find((x) => x.external_table_id === table.id && x.remote_id === col.name);
          return {
            sourceColumnId: (p.kept[j] as (typeof p.kept)[number]).source.id,
            externalColumnId: s?.id ?? '',
            name: col.name,
            fieldType: s?.field_type ?? '',
          };
        }),
      };
    }),
  };
}

export type SetUpTable = {
  sourceTableId: string;
  tableMappingId: string;
  created: CreateTablesResponse['tables'][number];
  matchOnFieldId: string | null;
};

/** The sync's mappings as the input `replaceTableMappings` takes (ids kept, so links are kept). */
async function currentMappingInputs(ctx: AppContext, coreBaseId: string) {
  const mappings = await ctx.db
    .selectFrom('table_mapping')
    .selectAll()
    .where('core_base_id', '=', coreBaseId)
    .orderBy('created_at')
    .execute();
  const columns = mappings.length
    ? await ctx.db
        .selectFrom('column_mapping')
        .selectAll()
        .where(
          'table_mapping_id',
          'in',
          mappings.map((m) => m.id),
        )
        .execute()
    : [];
  return mappings.map((m) => ({
    id: m.id,
    leftTableId: m.left_table_id,
    rightTableId: m.right_table_id,
    syncDirection: m.sync_direction,
    filter: m.filter ?? null,
    matchOnFieldId: m.match_on_field_id,
    matchOnSecondaryFieldId: m.match_on_secondary_field_id,
    conflictWinnerSide: m.conflict_winner_side,
    conflictReview: m.conflict_review,
    deleteProtection: m.delete_protection,
    columnMappings: columns
      .filter((c) => c.table_mapping_id === m.id)
      .map((c) => ({
        leftColumnId: c.left_column_id,
        rightColumnId: c.right_column_id,
        syncDirection: c.sync_direction,
        ownerSide: c.owner_side,
      })),
  }));
}

/**
 * Tables of one app that have no partner yet: each is created in the sync's other app and mapped to
 * it, every created field paired with its source, matched on email when the table has one. What
 * the web app did in several calls ("tables without a partner"), in one.
 */
export async function setUpTables(
  ctx: AppContext,
  principal: Principal,
  externalBaseId: string,
  only: string[] | null,
): Promise<{ setUp: SetUpTable[]; skipped: { tableId: string; name: string; reason: string }[] }> {
  const base = await findExternalBase(ctx.db, principal, externalBaseId);
  const coreBase = await findCoreBase(ctx.db, principal, base.core_base_id);
  const other = await ctx.db
    .selectFrom('external_base')
    .select(['id', 'name'])
    .where('core_base_id', '=', base.core_base_id)
    .where('side', '!=', base.side)
    .executeTakeFirst();
  if (!other) {
    throw new HttpError(
      409,
      'The other side of the sync is not connected',
      'Connect an app on the other side of the sync first: the tables are created there.',
      'conflict',
    );
  }
  const tables = await ctx.db
    .selectFrom('external_table')
    .select(['id', 'name', 'extras'])
    .where('external_base_id', '=', base.id)
    .$if(only !== null, (q) => q.where('id', 'in', only as string[]))
    .orderBy('name')
    .execute();
  if (only !== null && tables.length !== only.length) throw notFound('Table');
  const inputs = await currentMappingInputs(ctx, coreBase.id);
  const mapped = new Set(inputs.flatMap((m) => [m.leftTableId, m.rightTableId]));
  const skipped: { tableId: string; name: string; reason: string }[] = [];
  const setUp: SetUpTable[] = [];
  const added: typeof inputs = [];
  for (const table of tables) {
    if (mapped.has(table.id)) {
      skipped.push({ tableId: table.id, name: table.name, reason: 'It is mapped already.' });
      continue;
    }
    if (typeof table.extras.unsyncable === 'string') {
      skipped.push({ tableId: table.id, name: table.name, reason: table.extras.unsyncable });
      continue;
    }
    let created: CreateTablesResponse['tables'][number] | undefined;
    try {
      created = (await createTablesFromSource(ctx, principal, other.id, [table.id])).tables[0];
    } catch (error) {
      // One table the other app refuses (a name taken, say) does not stop the others.
      if (!(error instanceof HttpError) || only !== null) throw error;
      skipped.push({
        tableId: table.id,
        name: table.name,
        reason: [error.userFacingMessage].flat().join(' '),
      });
      continue;
    }
    if (!created) continue;
    const sourceIsLeft = base.side === 'left';
    const pairs = created.columns.map((c) => ({
      leftColumnId: sourceIsLeft ? c.sourceColumnId : c.externalColumnId,
      rightColumnId: sourceIsLeft ? c.externalColumnId : c.sourceColumnId,
      syncDirection: 'both' as const,
      ownerSide: null,
    }));
    const email = created.columns.find((c) =>
      c.name
        .toLowerCase()
        .replaceAll(/[^a-z]/g, '')
        .includes('email'),
    );
    const matchOnFieldId = email ? (sourceIsLeft ? email.sourceColumnId : email.externalColumnId) : null;
    added.push({
      leftTableId: sourceIsLeft ? table.id : created.externalTableId,
      rightTableId: sourceIsLeft ? created.externalTableId : table.id,
      syncDirection: 'both',
      filter: null,
      matchOnFieldId,
      matchOnSecondaryFieldId: null,
      columnMappings: pairs,
    } as (typeof inputs)[number]);
    setUp.push({ sourceTableId: table.id, tableMappingId: '', created, matchOnFieldId });
  }
  if (added.length > 0) {
    await replaceTableMappings(ctx.db, coreBase, [...inputs, ...added] as Parameters<
      typeof replaceTableMappings
    >[2]);
    const rows = await ctx.db
      .selectFrom('table_mapping')
      .select(['id', 'left_table_id', 'right_table_id'])
      .where('core_base_id', '=', coreBase.id)
      .execute();
    for (const s of setUp) {
      const row = rows.find(
        (r) => r.left_table_id === s.sourceTableId || r.right_table_id === s.sourceTableId,
      );
      s.tableMappingId = row?.id ?? '';
    }
  }
  return { setUp, skipped };
}
