import { type Kysely, sql } from 'kysely';

// API import (issue 22): a user's saved imports of records from a JSON HTTP API into a table of one
// of their connections. `config` is the fetch configuration with its secrets masked; the secrets
// (auth, sensitive headers) are sealed in `secrets` like a connection's. The last run's outcome is
// kept on the row; a run's progress is a progress_tracker.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists api_import (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null references "user"(id) on delete cascade,
    name text not null,
    config jsonb not null,
    secrets text not null,
    external_connection_id uuid not null references external_connection(id) on delete cascade,
    base_remote_id text not null,
    table_remote_id text not null,
    mapping jsonb not null default '[]'::jsonb,
    match_target_field_id text not null,
    schedule text not null default 'none' check (schedule in ('none', 'hourly', 'daily')),
    max_pages integer not null default 100,
    max_records integer not null default 10000,
    last_run_status text not null default 'never'
      check (last_run_status in ('never', 'queued', 'running', 'succeeded', 'failed')),
    last_run_at timestamptz,
    last_run_finished_at timestamptz,
    last_run_counts jsonb,
    last_run_error text,
    last_tracking_id uuid,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index if not exists api_import_owner_idx on api_import (owner_id, created_at)`.execute(db);
  await sql`create index if not exists api_import_scheduled_idx on api_import (last_run_at)
    where schedule <> 'none'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists api_import`.execute(db);
}
