import { type Kysely, sql } from 'kysely';

// The columns written once per synced or staged record, and then read whole or by one key, are
// kept as json (checked text) rather than jsonb (a parsed binary form): building jsonb was most of
// the cost of writing them. Measured on 2,000-row inserts of a 10-field record: 35 us a row as
// jsonb, 11 us as json. Nothing queries inside them with jsonb-only operators; the few statements
// that merge into a shadow (`||`, jsonb_set) cast it, which costs only the records they change.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_preview_record alter column fields type json using fields::json`.execute(db);
  await sql`alter table first_sync_record alter column fields type json using fields::json`.execute(db);
  await sql`alter table core_meta_record alter column shadow drop default`.execute(db);
  await sql`alter table core_meta_record alter column shadow type json using shadow::json`.execute(db);
  await sql`alter table core_meta_record alter column shadow set default '{}'::json`.execute(db);
  await sql`alter table sync_log_entry alter column records type json using records::json`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_log_entry alter column records type jsonb using records::jsonb`.execute(db);
  await sql`alter table core_meta_record alter column shadow drop default`.execute(db);
  await sql`alter table core_meta_record alter column shadow type jsonb using shadow::jsonb`.execute(db);
  await sql`alter table core_meta_record alter column shadow set default '{}'::jsonb`.execute(db);
  await sql`alter table first_sync_record alter column fields type jsonb using fields::jsonb`.execute(db);
  await sql`alter table sync_preview_record alter column fields type jsonb using fields::jsonb`.execute(db);
}
