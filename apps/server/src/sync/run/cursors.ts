import { sql } from 'kysely';
import type { Db } from '../../db/database';
import type { DryRun } from './run-context';

/** A table's cursor and the version of its row (`xmin`; null: no row yet), to store it back by. */
export type StoredCursor = { cursor: string | null; version: string | null };

export async function readCursor(db: Db, tableId: string, dry?: DryRun): Promise<StoredCursor> {
  // A dry pass goes on from where its own previous page left off (never stored).
  if (dry?.cursors.has(tableId)) return { cursor: dry.cursors.get(tableId) ?? null, version: 'dry' };
  const row = (
    await sql<{
      cursor: string | null;
      version: string;
    }>`select cursor, xmin::text as version from sync_cursor
      where external_table_id = ${tableId}`.execute(db)
  ).rows[0];
  return { cursor: row?.cursor ?? null, version: row?.version ?? null };
}

/**
 * Stores a cursor only if nobody changed it since this run read it (compare-and-set on the row's
 * version): a rescan requested meanwhile (a review decision, a changed mapping) is not overwritten.
 */
export async function storeCursor(
  db: Db,
  ownerId: string,
  tableId: string,
  read: StoredCursor,
  page: { nextCursor: string; scanComplete: boolean },
  dry?: DryRun,
) {
  if (dry) {
    dry.cursors.set(tableId, page.nextCursor);
    return;
  }
  if (read.version === null)
    await db
      .insertInto('sync_cursor')
      .values({
        external_table_id: tableId,
        owner_id: ownerId,
        cursor: page.nextCursor,
        full_scan_complete: page.scanComplete,
      })
      .onConflict((oc) => oc.column('external_table_id').doNothing())
      .execute();
  else
    await sql`update sync_cursor set cursor = ${page.nextCursor}, updated_at = now()
      where external_table_id = ${tableId} and xmin::text = ${read.version}`.execute(db);
}
