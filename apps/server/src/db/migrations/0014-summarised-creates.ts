import { type Kysely, sql } from 'kysely';

// A batch of creates (the bulk of a first sync) is logged as one operation that names its records
// (their ids, compactly) instead of one row per record with every value: at 100k records the
// per-record rows were a third of a first sync's bookkeeping. Each link points at the operation
// that created it, so a record's history still starts with its create.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_log_entry add column if not exists record_count integer not null default 1`.execute(
    db,
  );
  // { remote: [created ids], source: [ids they were copied from] }, in the same order.
  await sql`alter table sync_log_entry add column if not exists records jsonb`.execute(db);
  await sql`alter table core_meta_record add column if not exists created_entry_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_meta_record drop column if exists created_entry_id`.execute(db);
  await sql`alter table sync_log_entry drop column if exists records`.execute(db);
  await sql`alter table sync_log_entry drop column if exists record_count`.execute(db);
}
