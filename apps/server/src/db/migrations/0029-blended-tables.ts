import { type Kysely, sql } from 'kysely';

// Blended tables (issue 22): a user's virtual tables, each the union of 2..N source tables of their
// own connections. `config` holds the sources, the default source for creates and the field list
// (BlendedTableConfig of @lockstep/contract). The blended table is served by the `blended`
// connector of a connection Lockstep makes for the user on first use.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists blended_table (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null references "user"(id) on delete cascade,
    name text not null,
    config jsonb not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index if not exists blended_table_owner_idx on blended_table (owner_id, created_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists blended_table`.execute(db);
}
