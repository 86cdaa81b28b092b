import { type Kysely, sql } from 'kysely';

// Undo a run (issue 23, item 7): an undo is a run of its own (a sync_log row naming the run it
// undoes, `undo_of`; one undo per run, by a unique index), with its progress and per-record
// outcomes. Operations name their table pair, so a delete (whose link is gone) can be undone.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_log add column if not exists undo_of uuid references sync_log(id) on delete set null`.execute(
    db,
  );
  await sql`alter table sync_log add column if not exists progress jsonb`.execute(db);
  await sql`alter table sync_log add column if not exists undo_results jsonb`.execute(db);
  await sql`create unique index if not exists sync_log_undo_of_idx on sync_log (undo_of) where undo_of is not null`.execute(
    db,
  );
  await sql`alter table sync_log_entry add column if not exists table_mapping_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_log_entry drop column if exists table_mapping_id`.execute(db);
  await sql`drop index if exists sync_log_undo_of_idx`.execute(db);
  await sql`alter table sync_log drop column if exists undo_results`.execute(db);
  await sql`alter table sync_log drop column if exists progress`.execute(db);
  await sql`alter table sync_log drop column if exists undo_of`.execute(db);
}
