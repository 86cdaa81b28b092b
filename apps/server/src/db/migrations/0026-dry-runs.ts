import { type Kysely, sql } from 'kysely';

// Dry runs (issue 23, item 8): a pass that reads and reconciles a sync as a run does and records
// what it would write instead of writing. One dry_run row per pass (the latest pass of a sync
// replaces the ones before it), its planned writes in dry_run_write; and a sync in dry-run mode
// (core_base.dry_run) makes a dry pass instead of a real run on every wake-up.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_base add column if not exists dry_run boolean not null default false`.execute(
    db,
  );
  await sql`create table if not exists dry_run (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null,
    core_base_id uuid not null references core_base(id) on delete cascade,
    trigger text not null,
    status text not null default 'queued'
      check (status in ('queued', 'running', 'done', 'failed', 'discarded', 'applied')),
    counts jsonb not null default '{}',
    progress jsonb not null default '{}',
    error text,
    created_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz
  )`.execute(db);
  await sql`create index if not exists dry_run_core_base_idx on dry_run (core_base_id, created_at desc)`.execute(
    db,
  );
  await sql`create table if not exists dry_run_write (
    id bigserial primary key,
    dry_run_id uuid not null references dry_run(id) on delete cascade,
    table_mapping_id uuid not null,
    side text not null check (side in ('left', 'right')),
    operation text not null check (operation in ('create', 'update', 'delete')),
    record_key text not null,
    link_id uuid,
    remote_id text,
    source_id text,
    name text,
    fields jsonb not null default '[]',
    conflicts jsonb not null default '[]'
  )`.execute(db);
  // A record planned twice by one pass (read on two pages) is one planned write, the later plan.
  await sql`create unique index if not exists dry_run_write_record_idx
    on dry_run_write (dry_run_id, table_mapping_id, side, record_key)`.execute(db);
  await sql`create index if not exists dry_run_write_list_idx
    on dry_run_write (dry_run_id, table_mapping_id, operation, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists dry_run_write`.execute(db);
  await sql`drop table if exists dry_run`.execute(db);
  await sql`alter table core_base drop column if exists dry_run`.execute(db);
}
