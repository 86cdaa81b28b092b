import { type Kysely, sql } from 'kysely';

// Where a sync was set up from (spec section 5): the base setup flow or the app store. Syncs made
// before this column existed came through the base setup.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_base add column if not exists setup_origin text not null default 'base_setup'
    check (setup_origin in ('base_setup', 'app_store'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table core_base drop column if exists setup_origin`.execute(db);
}
