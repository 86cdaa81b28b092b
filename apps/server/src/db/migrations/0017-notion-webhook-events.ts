import { type Kysely, sql } from 'kysely';

// Notion webhook events seen per connection, by event id, kept for the freshness window: the same
// signed event delivered again (a retry, a replay inside the window) wakes nothing twice.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists notion_webhook_event (
    external_connection_id uuid not null references external_connection(id) on delete cascade,
    event_id text not null,
    received_at timestamptz not null default now(),
    primary key (external_connection_id, event_id)
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists notion_webhook_event`.execute(db);
}
