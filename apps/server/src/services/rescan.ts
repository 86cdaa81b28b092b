import type { Db } from '../db/database';

/**
 * Forgets the cursors of a record's table pair, so the next run reads both tables in full: after a
 * decision in review the decided records must be read again even though nothing changed in the apps.
 */
export async function rescanTablesOf(db: Db, coreMetaRecordId: string): Promise<void> {
  const tm = await db
    .selectFrom('core_meta_record')
    .innerJoin('table_mapping', 'table_mapping.id', 'core_meta_record.table_mapping_id')
    .select(['table_mapping.left_table_id', 'table_mapping.right_table_id'])
    .where('core_meta_record.id', '=', coreMetaRecordId)
    .executeTakeFirst();
  if (!tm) return;
  await db
    .deleteFrom('sync_cursor')
    .where('external_table_id', 'in', [tm.left_table_id, tm.right_table_id])
    .execute();
}
