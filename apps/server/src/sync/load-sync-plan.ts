import {
  DEFAULT_MASS_DELETE,
  FIELD_TYPES,
  type FieldSpec,
  type Filter,
  type TableMappingSpec,
} from '@lockstep/engine';
import type { Db } from '../db/database';

export type SidePlan = {
  externalBaseId: string;
  type: string;
  connectionId: string | null;
  tableId: string;
  tableRemoteId: string;
  /** The table's name, for messages. */
  tableName: string;
};
export type MappingPlan = {
  tableMappingId: string;
  spec: TableMappingSpec;
  left: SidePlan;
  right: SidePlan;
  /** Field mapping (column mapping) ids of the match fields, for the first sync. */
  matchOn: { primary: string | null; secondary: string | null };
};
export type SyncPlan = { coreBaseId: string; ownerId: string; mappings: MappingPlan[] };

const asType = (t: string): FieldSpec['type'] =>
  (FIELD_TYPES as readonly string[]).includes(t) ? (t as FieldSpec['type']) : 'json';

/** Reads a core base's mappings into the engine's terms: fields keyed by the apps' stable ids. */
export async function loadSyncPlan(db: Db, coreBaseId: string): Promise<SyncPlan | null> {
  // Two round trips, not six (every run loads its plan): what hangs off the core base, then what
  // hangs off its table pairs.
  const [base, externalBases, mappings] = await Promise.all([
    db.selectFrom('core_base').select(['id', 'owner_id']).where('id', '=', coreBaseId).executeTakeFirst(),
    db.selectFrom('external_base').selectAll().where('core_base_id', '=', coreBaseId).execute(),
    db
      .selectFrom('table_mapping')
      .selectAll()
      .where('core_base_id', '=', coreBaseId)
      .orderBy('created_at')
      .execute(),
  ]);
  if (!base) return null;
  if (mappings.length === 0) return { coreBaseId, ownerId: base.owner_id, mappings: [] };
  const mappingIds = mappings.map((m) => m.id);
  const [tables, columnMappings, columns] = await Promise.all([
    db
      .selectFrom('external_table')
      .selectAll()
      .where(
        'id',
        'in',
        mappings.flatMap((m) => [m.left_table_id, m.right_table_id]),
      )
      .execute(),
    db.selectFrom('column_mapping').selectAll().where('table_mapping_id', 'in', mappingIds).execute(),
    db
      .selectFrom('external_column')
      .selectAll()
      // One list of ids (a union), which the primary key can serve.
      .where(
        'id',
        'in',
        db
          .selectFrom('column_mapping')
          .select('left_column_id as id')
          .where('table_mapping_id', 'in', mappingIds)
          .unionAll(
            db
              .selectFrom('column_mapping')
              .select('right_column_id as id')
              .where('table_mapping_id', 'in', mappingIds),
          ),
      )
      .execute(),
  ]);
  // A field pair saved between the two reads above: its columns are read now.
  const seen = new Set(columns.map((c) => c.id));
  const late = columnMappings
    .flatMap((c) => [c.left_column_id, c.right_column_id])
    .filter((id) => !seen.has(id));
  if (late.length > 0)
    columns.push(...(await db.selectFrom('external_column').selectAll().where('id', 'in', late).execute()));
  const column = new Map(columns.map((c) => [c.id, c]));
  const spec = (id: string): FieldSpec => {
    const c = column.get(id);
    if (!c) throw new Error(`column ${id} missing`);
    return {
      id: c.remote_id,
      name: c.name,
      type: asType(c.field_type),
      readOnly: c.read_only,
      options: c.options as FieldSpec['options'],
    };
  };
  const side = (tableId: string): SidePlan => {
    const table = tables.find((t) => t.id === tableId);
    const eb = externalBases.find((b) => b.id === table?.external_base_id);
    if (!table || !eb) throw new Error(`table ${tableId} missing`);
    return {
      externalBaseId: eb.id,
      type: eb.type,
      connectionId: eb.external_connection_id,
      tableId: table.id,
      tableRemoteId: table.remote_id,
      tableName: table.name,
    };
  };
  return {
    coreBaseId,
    ownerId: base.owner_id,
    mappings: mappings.map((m) => {
      const cms = columnMappings.filter((c) => c.table_mapping_id === m.id);
      const byLeftColumn = (colId: string | null) => cms.find((c) => c.left_column_id === colId)?.id ?? null;
      return {
        tableMappingId: m.id,
        left: side(m.left_table_id),
        right: side(m.right_table_id),
        matchOn: {
          primary: byLeftColumn(m.match_on_field_id),
          secondary: byLeftColumn(m.match_on_secondary_field_id),
        },
        spec: {
          id: m.id,
          direction: m.sync_direction,
          filter: (m.filter ?? null) as Filter | null,
          fields: cms.map((c) => ({
            id: c.id,
            left: spec(c.left_column_id),
            right: spec(c.right_column_id),
            direction: c.sync_direction,
            owner: c.owner_side,
            optionPairs: c.option_pairs ?? null,
          })),
          policy: {
            conflictWinner: m.conflict_winner_side,
            conflictReview: m.conflict_review,
            deleteProtection: m.delete_protection,
            massDelete: DEFAULT_MASS_DELETE,
          },
        },
      };
    }),
  };
}
