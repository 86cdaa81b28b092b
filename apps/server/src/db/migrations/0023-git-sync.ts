import { type Kysely, sql } from 'kysely';

// Git sync (issue 22): a sync's tables kept as files in a git repository. One git sync per core base;
// its runs (upload, download, fetch-schema) are jobs with their history here. The repository is an
// HTTPS URL (its token sealed like connection secrets) or, in local mode only, a local path.
// `last_synced_commit` is the commit whose files are the shadow of the next download: the last one
// this git sync uploaded or applied.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists git_sync (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null references "user"(id) on delete cascade,
    core_base_id uuid not null unique references core_base(id) on delete cascade,
    repo_kind text not null check (repo_kind in ('https', 'local')),
    repo_url text,
    repo_path text,
    secret text,
    branch text not null,
    folder text not null,
    sides jsonb not null default '["left","right"]'::jsonb,
    format text not null default 'csv' check (format in ('csv', 'jsonl')),
    last_synced_commit text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index if not exists git_sync_owner_idx on git_sync (owner_id)`.execute(db);
  await sql`create table if not exists git_sync_run (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null references "user"(id) on delete cascade,
    git_sync_id uuid not null references git_sync(id) on delete cascade,
    kind text not null check (kind in ('upload', 'download', 'fetch_schema')),
    status text not null default 'PENDING'
      check (status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED')),
    done integer not null default 0,
    total integer,
    message text,
    base_commit text,
    commit_id text,
    counts jsonb not null default '[]'::jsonb,
    conflicts jsonb not null default '[]'::jsonb,
    problems jsonb not null default '[]'::jsonb,
    error text,
    created_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz
  )`.execute(db);
  await sql`create index if not exists git_sync_run_sync_idx on git_sync_run (git_sync_id, created_at desc)`.execute(
    db,
  );
  // At most one run waiting or running per git sync.
  await sql`create unique index if not exists git_sync_run_active_idx on git_sync_run (git_sync_id)
    where status in ('PENDING', 'IN_PROGRESS')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists git_sync_run`.execute(db);
  await sql`drop table if exists git_sync`.execute(db);
}
