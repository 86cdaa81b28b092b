import { type Kysely, sql } from 'kysely';

// "Pause all my syncs" remembers which syncs it switched off, so "Resume all" switches on exactly
// those (not the ones the user had off already). Switching a sync on or off by hand forgets it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_base add column if not exists paused_all_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_base drop column if exists paused_all_at`.execute(db);
}
