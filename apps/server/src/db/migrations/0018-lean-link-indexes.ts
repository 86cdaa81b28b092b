import { type Kysely, sql } from 'kysely';

/**
 * Links are written a row per synced record (100,000 in a first sync of 100,000 rows), and every
 * index on them is paid per row. The index on owner_id served the record-limit count, which
 * migration 0008 replaced by owner_record_count; nothing looks links up by owner since (a user's
 * links go with their syncs, by core_base_id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists core_meta_record_owner_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists core_meta_record_owner_idx on core_meta_record (owner_id)`.execute(db);
}
