import type { Db } from '../db/database';

/**
 * Forgets the cursors of a record's table pair, so the next run reads both tables in full: after a
 * decision in review the decided records must be read again even though nothing changed in the apps.
 */
export async function rescanTablesOf(db: Db, coreMetaRecordId: string): Promise<void> {
  const tm = await db
    .selectFrom('core_meta_record')
    .innerJoin('table_mapping', 'table_mapping.id', 'core_meta_record.table_mapping_id')
    .select(['table_mapping.left_table_id', 'table_mapping.right_table_id', 'core_meta_record.owner_id'])
    .where('core_meta_record.id', '=', coreMetaRecordId)
    .executeTakeFirst();
  if (!tm) return;
  // A null cursor row, not no row: a run in progress stores its cursor only over the row it read
  // (see storeCursor), so this request outlives it.
  await rescanTables(db, tm.owner_id, [tm.left_table_id, tm.right_table_id]);
}

/** Forgets the cursors of these tables (a null cursor row each, as above): the next run reads them in full. */
export async function rescanTables(db: Db, ownerId: string, tableIds: string[]): Promise<void> {
  await db
    .insertInto('sync_cursor')
    .values(
      tableIds.map((id) => ({
        external_table_id: id,
        owner_id: ownerId,
        cursor: null,
        full_scan_complete: false,
      })),
    )
    .onConflict((oc) =>
      oc
        .column('external_table_id')
        .doUpdateSet({ cursor: null, full_scan_complete: false, updated_at: new Date() }),
    )
    .execute();
}
