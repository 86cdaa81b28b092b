import { type Kysely, sql } from 'kysely';

// What the preview plans to write into a record it updates, field by field: { remoteFieldId: [before, after] },
// so the preview shows the change itself rather than only that there is one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_preview_record add column if not exists changes jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_preview_record drop column if exists changes`.execute(db);
}
