import { type Kysely, sql } from 'kysely';

// The developer page: personal API tokens (stored as sha256 hashes, shown once) and webhooks out
// (a URL subscribed to events of the user's syncs, signed with a sealed per-subscription secret),
// with a log of every delivery attempt.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists api_token (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null references "user"(id) on delete cascade,
    name text not null,
    scopes text[] not null,
    token_hash text not null unique,
    prefix text not null,
    created_at timestamptz not null default now(),
    last_used_at timestamptz,
    revoked_at timestamptz
  )`.execute(db);
  await sql`create index if not exists api_token_owner_idx on api_token (owner_id, created_at)`.execute(db);
  await sql`create table if not exists webhook_subscription (
    id uuid primary key default gen_random_uuid(),
    owner_id text not null references "user"(id) on delete cascade,
    url text not null,
    events text[] not null,
    secret_sealed text not null,
    paused boolean not null default false,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index if not exists webhook_subscription_owner_idx
    on webhook_subscription (owner_id)`.execute(db);
  await sql`create table if not exists webhook_delivery_attempt (
    id uuid primary key default gen_random_uuid(),
    subscription_id uuid not null references webhook_subscription(id) on delete cascade,
    owner_id text not null references "user"(id) on delete cascade,
    event_id uuid not null,
    event_type text not null,
    attempt integer not null,
    status_code integer,
    duration_ms integer not null,
    error text,
    created_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index if not exists webhook_delivery_attempt_subscription_idx
    on webhook_delivery_attempt (subscription_id, created_at desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists webhook_delivery_attempt`.execute(db);
  await sql`drop table if exists webhook_subscription`.execute(db);
  await sql`drop table if exists api_token`.execute(db);
}
