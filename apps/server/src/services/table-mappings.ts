import type { TableMappingInput } from '@lockstep/contract';
import {
  checkFieldMapping,
  FIELD_TYPES,
  type FieldSpec,
  refersTo,
  stableJson,
  validateFilter,
} from '@lockstep/engine';
import type { z } from 'zod';
import type { Db } from '../db/database';
import { HttpError } from '../http/http-error';
import type { CoreBaseRow } from './core-bases';
import { rescanTables as rescanTablesIn } from './rescan';

type Input = z.infer<typeof TableMappingInput>;

const invalid = (problems: string[]) => new HttpError(400, 'Invalid table mappings', problems, 'validation');

/**
 * Replaces the table mappings of a core base in one transaction. Every table and column must belong
 * to this sync's own left and right bases (so another user's ids are refused), and each match field
 * must be one of the mapped left columns. Existing mappings keep their ids and their record links.
 */
export async function replaceTableMappings(
  db: Db,
  coreBase: CoreBaseRow,
  inputs: Input[],
  allowUnsupported = false,
): Promise<void> {
  const bases = await db
    .selectFrom('external_base')
    .select(['id', 'side'])
    .where('core_base_id', '=', coreBase.id)
    .execute();
  const baseSide = new Map(bases.map((b) => [b.id, b.side]));
  const tableIds = inputs.flatMap((m) => [m.leftTableId, m.rightTableId]);
  const tables = tableIds.length
    ? await db
        .selectFrom('external_table')
        .select(['id', 'external_base_id', 'name', 'remote_id'])
        .where('id', 'in', tableIds)
        .execute()
    : [];
  const tableSide = new Map(tables.map((t) => [t.id, baseSide.get(t.external_base_id)]));
  const columnIds = inputs.flatMap((m) => m.columnMappings.flatMap((c) => [c.leftColumnId, c.rightColumnId]));
  const columns = columnIds.length
    ? await db
        .selectFrom('external_column')
        .select(['id', 'external_table_id', 'name', 'read_only', 'field_type', 'options'])
        .where('id', 'in', columnIds)
        .execute()
    : [];
  const columnById = new Map(columns.map((c) => [c.id, c]));

  const problems: string[] = [];
  const remoteIdOf = new Map(tables.map((t) => [t.id, t.remote_id]));
  const linkedTablesMapped = (left: Record<string, unknown>, right: Record<string, unknown>) =>
    inputs.some(
      (m) =>
        refersTo(left.references, remoteIdOf.get(m.leftTableId) ?? '\u0000') &&
        refersTo(right.references, remoteIdOf.get(m.rightTableId) ?? '\u0000'),
    );
  const existing = await db
    .selectFrom('table_mapping')
    .select('id')
    .where('core_base_id', '=', coreBase.id)
    .execute();
  const existingIds = new Set(existing.map((e) => e.id));
  inputs.forEach((m, i) => {
    const where = `tableMappings[${i}]`;
    if (m.id && !existingIds.has(m.id)) problems.push(`${where}.id: no such table mapping in this sync.`);
    if (tableSide.get(m.leftTableId) !== 'left')
      problems.push(`${where}.leftTableId: not a table of this sync's left app.`);
    if (tableSide.get(m.rightTableId) !== 'right') {
      problems.push(`${where}.rightTableId: not a table of this sync's right app.`);
    }
    const seen = new Set<string>();
    m.columnMappings.forEach((c, j) => {
      const at = `${where}.columnMappings[${j}]`;
      if (columnById.get(c.leftColumnId)?.external_table_id !== m.leftTableId) {
        problems.push(`${at}.leftColumnId: not a field of the left table.`);
      }
      if (columnById.get(c.rightColumnId)?.external_table_id !== m.rightTableId) {
        problems.push(`${at}.rightColumnId: not a field of the right table.`);
      }
      if (seen.has(c.rightColumnId)) problems.push(`${at}.rightColumnId: this field is already mapped.`);
      seen.add(c.rightColumnId);
      // The engine decides compatibility: incompatible types are refused, and a read-only field
      // (formula, rollup, computed) or a one-way conversion narrows the direction.
      const left = columnById.get(c.leftColumnId);
      const right = columnById.get(c.rightColumnId);
      if (left && right) {
        const spec = (col: typeof left): FieldSpec => ({
          id: col.id,
          name: col.name,
          type: (FIELD_TYPES as readonly string[]).includes(col.field_type)
            ? (col.field_type as FieldSpec['type'])
            : 'json',
          readOnly: col.read_only,
        });
        const check = checkFieldMapping(spec(left), spec(right), c.syncDirection);
        if (!check.ok && !allowUnsupported) problems.push(`${at}: ${check.reason}`);
        else if (check.ok) c.syncDirection = check.effectiveDirection;
        // Linked-record ids cross over through the links of the linked tables' own mapping.
        if (check.ok && left.field_type === 'relations' && !linkedTablesMapped(left.options, right.options)) {
          problems.push(
            `${at}: "${left.name}" links to ${String(left.options.references ?? 'another table')} and "${right.name}" to ${String(right.options.references ?? 'another table')}; map those two tables to each other so their links can sync.`,
          );
        }
      }
    });
    const filterProblem = validateFilter(m.filter, `${where}.filter`);
    if (filterProblem) problems.push(filterProblem);
    const mappedLeft = new Set(m.columnMappings.map((c) => c.leftColumnId));
    for (const key of ['matchOnFieldId', 'matchOnSecondaryFieldId'] as const) {
      const v = m[key];
      if (v && !mappedLeft.has(v)) problems.push(`${where}.${key}: must be one of the mapped left fields.`);
    }
  });
  if (problems.length > 0) throw invalid(problems);

  await db.transaction().execute(async (trx) => {
    const keep = inputs.map((m) => m.id).filter((id): id is string => Boolean(id));
    let del = trx.deleteFrom('table_mapping').where('core_base_id', '=', coreBase.id);
    if (keep.length > 0) del = del.where('id', 'not in', keep);
    await del.execute();
    for (const m of inputs) {
      const values = {
        left_table_id: m.leftTableId,
        right_table_id: m.rightTableId,
        sync_direction: m.syncDirection,
        filter: m.filter === null || m.filter === undefined ? null : JSON.stringify(m.filter),
        match_on_field_id: m.matchOnFieldId ?? null,
        match_on_secondary_field_id: m.matchOnSecondaryFieldId ?? null,
        ...(m.conflictWinnerSide ? { conflict_winner_side: m.conflictWinnerSide } : {}),
        ...(m.conflictReview === undefined ? {} : { conflict_review: m.conflictReview }),
        ...(m.deleteProtection === undefined ? {} : { delete_protection: m.deleteProtection }),
        updated_at: new Date(),
      };
      const before = m.id
        ? await trx
            .selectFrom('table_mapping')
            .select(['filter', 'sync_direction', 'left_table_id', 'right_table_id'])
            .where('id', '=', m.id)
            .executeTakeFirst()
        : undefined;
      const id = m.id
        ? (
            await trx
              .updateTable('table_mapping')
              .set(values)
              .where('id', '=', m.id)
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id
        : (
            await trx
              .insertInto('table_mapping')
              .values({ ...values, owner_id: coreBase.owner_id, core_base_id: coreBase.id })
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id;
      // A field pair sent again keeps its id: the shadow of every linked record is keyed by it, and
      // a new id would make each synced value look never synced (an edit could then lose to the
      // winner side's old value). Only pairs no longer sent go; new ones are added.
      const had = await trx
        .selectFrom('column_mapping')
        .select(['id', 'left_column_id', 'right_column_id', 'sync_direction', 'owner_side', 'option_pairs'])
        .where('table_mapping_id', '=', id)
        .execute();
      const pairKey = (l: string, r: string) => `${l}\u0000${r}`;
      const existingPair = new Map(had.map((c) => [pairKey(c.left_column_id, c.right_column_id), c]));
      const sent = new Set(m.columnMappings.map((c) => pairKey(c.leftColumnId, c.rightColumnId)));
      const gone = had.filter((c) => !sent.has(pairKey(c.left_column_id, c.right_column_id)));
      if (gone.length > 0)
        await trx
          .deleteFrom('column_mapping')
          .where(
            'id',
            'in',
            gone.map((c) => c.id),
          )
          .execute();
      let fieldsChanged = false;
      for (const c of m.columnMappings) {
        const was = existingPair.get(pairKey(c.leftColumnId, c.rightColumnId));
        const ownerSide = c.ownerSide ?? null;
        if (was) {
          const pairs = stableJson(c.optionPairs ?? null);
          if (
            was.sync_direction !== c.syncDirection ||
            (was.owner_side ?? null) !== ownerSide ||
            stableJson(was.option_pairs ?? null) !== pairs
          ) {
            fieldsChanged = true;
            await trx
              .updateTable('column_mapping')
              .set({
                sync_direction: c.syncDirection,
                owner_side: c.ownerSide,
                option_pairs: c.optionPairs ? JSON.stringify(c.optionPairs) : null,
              })
              .where('id', '=', was.id)
              .execute();
          }
          continue;
        }
        fieldsChanged = true;
        await trx
          .insertInto('column_mapping')
          .values({
            owner_id: coreBase.owner_id,
            table_mapping_id: id,
            left_column_id: c.leftColumnId,
            right_column_id: c.rightColumnId,
            sync_direction: c.syncDirection,
            owner_side: c.ownerSide,
            option_pairs: c.optionPairs ? JSON.stringify(c.optionPairs) : null,
          })
          .execute();
      }
      // What a live pair syncs changed (its filter, direction or fields): both tables are read in
      // full at the next run, so records entering the filter and newly mapped fields are synced;
      // records leaving the filter are left alone (see reconcile).
      const changed =
        before !== undefined &&
        (fieldsChanged ||
          stableJson(before.filter ?? null) !== stableJson(m.filter ?? null) ||
          before.sync_direction !== values.sync_direction);
      if (changed && before)
        await rescanTablesIn(trx, coreBase.owner_id, [before.left_table_id, before.right_table_id]);
    }
  });
}
