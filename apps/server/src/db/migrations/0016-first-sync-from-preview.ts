import { type Kysely, sql } from 'kysely';

// A first sync applied from a preview reads the records the preview downloaded where they are
// (sync_preview_record, fixed once the preview is applying) instead of copying them into
// first_sync_record first: the copy was ~10% of a 100k-row first sync. Deleting the preview ends
// the staged first sync; the runner then reads both apps from the start, which links rather than
// duplicates what was already written.
// A preview stages each record once (a page read twice, as an app's paging can, keeps its first
// copy), so neither its plan nor the first sync applied from it counts a record twice.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from sync_preview_record p using sync_preview_record d
    where d.sync_preview_id = p.sync_preview_id and d.external_table_id = p.external_table_id
      and d.remote_id = p.remote_id and d.id < p.id`.execute(db);
  await sql`create unique index if not exists sync_preview_record_remote_uq
    on sync_preview_record (sync_preview_id, external_table_id, remote_id)`.execute(db);
  await sql`drop index if exists sync_preview_record_remote_idx`.execute(db);
  await sql`alter table first_sync_state add column if not exists preview_id uuid references sync_preview(id) on delete cascade`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists sync_preview_record_remote_idx
    on sync_preview_record (sync_preview_id, external_table_id, remote_id)`.execute(db);
  await sql`drop index if exists sync_preview_record_remote_uq`.execute(db);
  await sql`alter table first_sync_state drop column if exists preview_id`.execute(db);
}
