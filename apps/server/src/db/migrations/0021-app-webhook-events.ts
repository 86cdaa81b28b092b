import { type Kysely, sql } from 'kysely';

// Webhook event ids seen per connection now serve every app that signs its events (Notion, then
// HubSpot): one table for all, named for what it holds. Event ids are unique per connection.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table if exists notion_webhook_event rename to app_webhook_event`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table if exists app_webhook_event rename to notion_webhook_event`.execute(db);
}
