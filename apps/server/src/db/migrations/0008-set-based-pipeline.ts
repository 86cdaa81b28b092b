import { type Kysely, sql } from 'kysely';

// The set-based run pipeline (issue 16): every lookup a chunk makes is served by an index, and the
// preview keeps what apply needs to reuse its download instead of reading both apps again.
export async function up(db: Kysely<unknown>): Promise<void> {
  // A preview's chunks read one table's staged rows in id order from where the last chunk ended
  // (without this, each chunk sorted the whole table: a 1M-row preview took 150 s, 100k took 7 s),
  // and look partners up by id.
  await sql`create index if not exists sync_preview_record_order_idx
    on sync_preview_record (sync_preview_id, external_table_id, id)`.execute(db);
  await sql`create index if not exists sync_preview_record_remote_idx
    on sync_preview_record (sync_preview_id, external_table_id, remote_id)`.execute(db);
  // The order index serves what (sync_preview_id, external_table_id) served. Matching groups the
  // keys in one scan, so no index on them: each index is paid again when a chunk stores its plans.
  await sql`drop index if exists sync_preview_record_idx`.execute(db);
  // Half of each page kept free: storing a record's plan then rewrites it in place (a HOT update,
  // no new index entries) instead of moving every staged row and indexing it again.
  await sql`alter table sync_preview_record set (fillfactor = 50)`.execute(db);
  // Pairs the preview matched (left with right, by the table pair's match field), found set-based.
  await sql`create table if not exists sync_preview_pair (
    sync_preview_id uuid not null references sync_preview(id) on delete cascade,
    table_mapping_id uuid not null,
    left_remote_id text not null,
    right_remote_id text not null,
    primary key (sync_preview_id, table_mapping_id, left_remote_id))`.execute(db);
  await sql`create index if not exists sync_preview_pair_right_idx
    on sync_preview_pair (sync_preview_id, table_mapping_id, right_remote_id)`.execute(db);
  // Where each downloaded table's read ended (its cursor): apply starts the change capture there.
  await sql`alter table sync_preview add column if not exists cursors jsonb`.execute(db);
  // The match fields each downloaded table's keys were made with: a match field changed since means
  // keying that table again before planning or applying.
  await sql`alter table sync_preview add column if not exists keyed_on jsonb`.execute(db);
  // Each owner's synced records, kept by statement-level triggers (one update per statement, not
  // per row): the record limit was checked with a count(*) over every link of every user, once per
  // chunk, which grew with the data (a first sync of 1M rows counted 200 times).
  await sql`create table if not exists owner_record_count (owner_id text primary key, n bigint not null default 0)`.execute(
    db,
  );
  await sql`create or replace function count_owner_records() returns trigger language plpgsql as $fn$
    begin
      if TG_OP = 'INSERT' then
        insert into owner_record_count (owner_id, n) select owner_id, count(*) from counted_rows group by owner_id
          on conflict (owner_id) do update set n = owner_record_count.n + excluded.n;
      else
        update owner_record_count c set n = greatest(0, c.n - d.n)
          from (select owner_id, count(*) as n from counted_rows group by owner_id) d where c.owner_id = d.owner_id;
      end if;
      return null;
    end $fn$`.execute(db);
  await sql`drop trigger if exists core_meta_record_count_insert on core_meta_record`.execute(db);
  await sql`drop trigger if exists core_meta_record_count_delete on core_meta_record`.execute(db);
  await sql`create trigger core_meta_record_count_insert after insert on core_meta_record
    referencing new table as counted_rows for each statement execute function count_owner_records()`.execute(
    db,
  );
  await sql`create trigger core_meta_record_count_delete after delete on core_meta_record
    referencing old table as counted_rows for each statement execute function count_owner_records()`.execute(
    db,
  );
  // In the same transaction as the triggers: no link is counted twice or missed.
  await sql`insert into owner_record_count (owner_id, n) select owner_id, count(*) from core_meta_record group by owner_id
    on conflict (owner_id) do update set n = excluded.n`.execute(db);
  // Links and operations get time-ordered ids where the server has uuidv7() (PostgreSQL 18, the
  // embedded default): random ids scattered a first sync's inserts over the whole primary-key index,
  // which stopped fitting in memory near 1M rows (bookkeeping took 12.5x as long for 10x the rows).
  await sql`do $do$ begin
    if exists (select 1 from pg_proc where proname = 'uuidv7' and pronargs = 0) then
      alter table core_meta_record alter column id set default uuidv7();
      alter table sync_log_entry alter column id set default uuidv7();
    end if;
  end $do$`.execute(db);
  // Pending writes are looked up by sync and kind at the start of every chunk.
  await sql`create index if not exists pending_write_base_idx on pending_write (core_base_id, operation)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_meta_record alter column id set default gen_random_uuid()`.execute(db);
  await sql`alter table sync_log_entry alter column id set default gen_random_uuid()`.execute(db);
  await sql`drop trigger if exists core_meta_record_count_insert on core_meta_record`.execute(db);
  await sql`drop trigger if exists core_meta_record_count_delete on core_meta_record`.execute(db);
  await sql`drop function if exists count_owner_records()`.execute(db);
  await sql`drop table if exists owner_record_count`.execute(db);
  await sql`drop index if exists pending_write_base_idx`.execute(db);
  await sql`alter table sync_preview drop column if exists keyed_on`.execute(db);
  await sql`alter table sync_preview drop column if exists cursors`.execute(db);
  await sql`drop table if exists sync_preview_pair`.execute(db);
  await sql`alter table sync_preview_record reset (fillfactor)`.execute(db);
  await sql`create index if not exists sync_preview_record_idx on sync_preview_record (sync_preview_id, external_table_id)`.execute(
    db,
  );
  await sql`drop index if exists sync_preview_record_order_idx`.execute(db);
  await sql`drop index if exists sync_preview_record_remote_idx`.execute(db);
}
