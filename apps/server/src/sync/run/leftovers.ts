import { sql } from 'kysely';
import type { Db } from '../../db/database';

/**
 * What a chunk of a table pair may have to do besides reading, asked in one statement: writes a
 * crash left pending, deletes approved in review, creates held by the record limit, issues being
 * retried, a first sync under way, open issues. A run for a single edit has none of them, and asking
 * for each in turn was six of its round trips (about a quarter of a single-row run). Each answer may
 * be wider than the stage's own query (a pending write of another table pair of the sync): the stage
 * then runs and finds nothing, as it did before.
 */
export type Leftovers = {
  pendingWrites: boolean;
  approvedDeletes: boolean;
  heldCreates: boolean;
  retrying: boolean;
  firstSyncStaging: boolean;
  openIssues: boolean;
};

export async function findLeftovers(db: Db, coreBaseId: string, tableMappingId: string): Promise<Leftovers> {
  const row = (
    await sql<Leftovers>`select
      exists (select 1 from pending_write where core_base_id = ${coreBaseId}::uuid) as "pendingWrites",
      exists (select 1 from delete_approval d join core_meta_record c on c.id = d.core_meta_record_id
        where d.status = 'approved' and c.table_mapping_id = ${tableMappingId}::uuid) as "approvedDeletes",
      exists (select 1 from sync_error where core_base_id = ${coreBaseId}::uuid and code = 'record_limit'
        and status <> 'resolved' and details->>'tableMappingId' = ${tableMappingId}) as "heldCreates",
      exists (select 1 from sync_error where core_base_id = ${coreBaseId}::uuid and status = 'retrying'
        and details->>'tableMappingId' = ${tableMappingId}) as "retrying",
      exists (select 1 from first_sync_state where table_mapping_id = ${tableMappingId}::uuid) as "firstSyncStaging",
      exists (select 1 from sync_error where core_base_id = ${coreBaseId}::uuid and status <> 'resolved') as "openIssues"`.execute(
      db,
    )
  ).rows[0];
  if (!row) throw new Error('the leftovers query returned no row');
  return row;
}
