import { createTables } from '@lockstep/connectors/postgresql';
import type { CreateTablesResponse, SetupTablesResponse, TableMappingInput } from '@lockstep/contract';
import { checkFieldMapping, FIELD_TYPES, type FieldSpec } from '@lockstep/engine';
import type { z } from 'zod';
import type { AppContext, Principal } from '../http/context';
import { HttpError, notFound } from '../http/http-error';
import { loadDestination, schemaError, toNewColumn } from '../routes/generate-schema/generate-schema-data';
import { findCoreBase } from './core-bases';
import { findExternalBase, refreshExternalSchema } from './external-bases';
import { replaceTableMappings } from './table-mappings';

type MappingInput = z.infer<typeof TableMappingInput>;
type CreatedTable = CreateTablesResponse['tables'][number];
export type SetUpTable = SetupTablesResponse['setUp'][number];
type Skipped = SetupTablesResponse['skipped'][number];

/**
 * What create-tables would make in this app, checked before anything is made: the destination (the
 * principal's, able to make tables), the source tables (the sync's other app, not removed) and
 * their names (not taken here), with the fields each new table gets. Bad input is an HttpError.
 */
export async function planCreateTables(
  ctx: AppContext,
  principal: Principal,
  externalBaseId: string,
  sourceTableIds: string[],
) {
  const target = await loadDestination(ctx, principal, externalBaseId);
  const { dest, source } = target;
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
  const removed = sourceTables.filter((t) => t.extras.removed === true);
  if (removed.length > 0) {
    throw new HttpError(
      400,
      'Removed table',
      `${removed.map((t) => `"${t.name}"`).join(', ')} no longer exists in ${source.name}.`,
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
  // In the order asked for, so a job can report table by table.
  const plan = ids.map((id) => {
    const table = sourceTables.find((t) => t.id === id) as (typeof sourceTables)[number];
    const kept = columns
      .filter((c) => c.external_table_id === id)
      .map((c) => ({ source: c, column: toNewColumn(c, table.extras.primaryKey) }))
      .filter(
        (x): x is { source: typeof x.source; column: NonNullable<typeof x.column> } => x.column !== null,
      );
    return { table, kept };
  });
  return { ...target, plan };
}

/**
 * Tables of the sync's other app created in this app, with their fields typed from the canonical
 * types: PostgreSQL and Supabase with an identity primary key, all in one transaction; Airtable,
 * Notion and Google Sheets through their APIs, in their own types (a name the app refuses or that
 * is taken is changed, and `renamedFrom` says so). The new schema is stored right away. Shared by create-tables, its async twin (a job) and the setup routes.
 */
export async function createTablesFromSource(
  ctx: AppContext,
  principal: Principal,
  externalBaseId: string,
  sourceTableIds: string[],
): Promise<CreateTablesResponse> {
  const { dest, items, schema, plan, app } = await planCreateTables(
    ctx,
    principal,
    externalBaseId,
    sourceTableIds,
  );
  const tables = plan.map((p) => ({ name: p.table.name, columns: p.kept.map((k) => k.column) }));
  // A database names columns by name (its remote id); an app gives each field an id of its own.
  const created = app
    ? await app.createTables(tables)
    : (await createTables(items, schema, tables).catch(schemaError)).map((c, i) => ({
        remoteId: c.remoteId,
        name: c.name,
        requestedName: tables[i]?.name ?? c.name,
        columns: c.columns.map((col, j) => ({
          remoteId: col.name,
          name: col.name,
          requestedName: tables[i]?.columns[j]?.name ?? col.name,
        })),
      }));
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
        ...(c.name !== c.requestedName ? { renamedFrom: c.requestedName } : {}),
        columns: c.columns.map((col, j) => {
          const s = storedColumns.find(
            (x) => x.external_table_id === table.id && x.remote_id === col.remoteId,
          );
          return {
            sourceColumnId: (p.kept[j] as (typeof p.kept)[number]).source.id,
            externalColumnId: s?.id ?? '',
            name: col.name,
            fieldType: s?.field_type ?? '',
            ...(col.name !== col.requestedName ? { renamedFrom: col.requestedName } : {}),
          };
        }),
      };
    }),
  };
}

/** The sync's mappings as the input `replaceTableMappings` takes (ids kept, so links are kept). */
async function currentMappingInputs(ctx: AppContext, coreBaseId: string): Promise<MappingInput[]> {
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
        optionPairs: c.option_pairs ?? null,
      })),
  }));
}

const letters = (name: string) => name.toLowerCase().replaceAll(/[^a-z]/g, '');

/**
 * The mapping of a source table to its copy: every created field paired, both ways where the
 * engine allows it (a read-only source field syncs one way); pairs the engine refuses, and
 * linked-record fields (mapped once their linked tables are), are left out with why. The source
 * wins conflicts (it holds the data), and an email field is the match field.
 */
async function mappingOfCopy(
  ctx: AppContext,
  source: { id: string; side: 'left' | 'right' },
  created: CreatedTable,
): Promise<{ input: MappingInput; unmapped: SetUpTable['unmappedFields'] }> {
  const ids = created.columns.flatMap((c) => [c.sourceColumnId, c.externalColumnId]).filter(Boolean);
  const fields = ids.length
    ? await ctx.db
        .selectFrom('external_column')
        .select(['id', 'name', 'field_type', 'read_only'])
        .where('id', 'in', ids)
        .execute()
    : [];
  const spec = (id: string): FieldSpec | null => {
    const f = fields.find((x) => x.id === id);
    if (!f) return null;
    const type = (FIELD_TYPES as readonly string[]).includes(f.field_type)
      ? (f.field_type as FieldSpec['type'])
      : 'json';
    return { id: f.id, name: f.name, type, readOnly: f.read_only };
  };
  const sourceIsLeft = source.side === 'left';
  const columnMappings: MappingInput['columnMappings'] = [];
  const unmapped: SetUpTable['unmappedFields'] = [];
  const mapped: CreatedTable['columns'] = [];
  for (const c of created.columns) {
    const from = spec(c.sourceColumnId);
    const copy = spec(c.externalColumnId);
    const left = sourceIsLeft ? from : copy;
    const right = sourceIsLeft ? copy : from;
    const skip = (reason: string) =>
      unmapped.push({ sourceColumnId: c.sourceColumnId, name: c.name, reason });
    if (!left || !right) {
      skip('The new field was not found in the app after it was created.');
      continue;
    }
    if (left.type === 'relations' || right.type === 'relations') {
      skip('A linked-record field is mapped once the tables it links to are mapped to each other.');
      continue;
    }
    const check = checkFieldMapping(left, right, 'both');
    if (!check.ok) {
      skip(check.reason);
      continue;
    }
    columnMappings.push({
      leftColumnId: left.id,
      rightColumnId: right.id,
      syncDirection: check.effectiveDirection,
      ownerSide: null,
      optionPairs: null,
    });
    mapped.push(c);
  }
  // An obvious match field: "email" itself, else a text-like field named for email.
  const emailLike = mapped.filter(
    (c) => letters(c.name).includes('email') && ['email', 'text'].includes(c.fieldType),
  );
  const email = emailLike.find((c) => letters(c.name) === 'email') ?? emailLike[0];
  const matchOnFieldId = email ? (sourceIsLeft ? email.sourceColumnId : email.externalColumnId) : null;
  return {
    input: {
      leftTableId: sourceIsLeft ? created.sourceTableId : created.externalTableId,
      rightTableId: sourceIsLeft ? created.externalTableId : created.sourceTableId,
      syncDirection: 'both',
      filter: null,
      matchOnFieldId,
      matchOnSecondaryFieldId: null,
      conflictWinnerSide: source.side,
      columnMappings,
    },
    unmapped,
  };
}

/**
 * Tables of one app that have no partner yet: each is created in the sync's other app, then all of
 * them are mapped to their copies in one transaction (every field paired, matched on email when
 * there is one). What the web app did in several calls ("tables without a partner"), in one.
 * `only` (one table, the setup/{table} route): anything that stops it is an error, not a skip.
 */
export async function setUpTables(
  ctx: AppContext,
  principal: Principal,
  externalBaseId: string,
  only: string[] | null,
): Promise<SetupTablesResponse> {
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
  // The other app must be able to make tables (and be reachable): refused once, up front.
  await loadDestination(ctx, principal, other.id);
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
  const skipped: Skipped[] = [];
  const made: { created: CreatedTable; input: MappingInput; unmapped: SetUpTable['unmappedFields'] }[] = [];
  for (const table of tables) {
    const refusal = mapped.has(table.id)
      ? 'It is mapped already.'
      : table.extras.removed === true
        ? `It no longer exists in ${base.name}.`
        : typeof table.extras.unsyncable === 'string'
          ? table.extras.unsyncable
          : null;
    if (refusal) {
      skipped.push({ tableId: table.id, name: table.name, reason: refusal });
      continue;
    }
    let created: CreatedTable | undefined;
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
    if (!created) throw new Error(`table ${table.id} was not created`);
    made.push({ created, ...(await mappingOfCopy(ctx, base, created)) });
  }
  if (only !== null && skipped[0]) {
    const s = skipped[0];
    throw new HttpError(409, 'Table not set up', `${s.name}: ${s.reason}`, 'conflict');
  }
  if (made.length === 0) return { setUp: [], skipped };
  await replaceTableMappings(ctx.db, coreBase, [...inputs, ...made.map((m) => m.input)]);
  const rows = await ctx.db
    .selectFrom('table_mapping')
    .select(['id', 'left_table_id', 'right_table_id'])
    .where('core_base_id', '=', coreBase.id)
    .execute();
  return {
    setUp: made.map(({ created, input, unmapped }) => ({
      sourceTableId: created.sourceTableId,
      tableMappingId:
        rows.find((r) => r.left_table_id === input.leftTableId && r.right_table_id === input.rightTableId)
          ?.id ?? '',
      created,
      matchOnFieldId: input.matchOnFieldId ?? null,
      unmappedFields: unmapped,
    })),
    skipped,
  };
}
