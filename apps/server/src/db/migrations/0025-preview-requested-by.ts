import { type Kysely, sql } from 'kysely';

// Who asked for a preview when staff started it for a user (POST /rest/sync-preview/internal): the
// staff member's user id, kept with the preview as its audit. Null for the owner's own previews.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_preview add column if not exists requested_by text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_preview drop column if exists requested_by`.execute(db);
}
