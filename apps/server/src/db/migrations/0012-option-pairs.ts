import { type Kysely, sql } from 'kysely';

// The option pairs of a field pair (select <-> select, text <-> select): [{ left, right }], chosen by
// automap and edited by the user; null means options pair by name (see the engine's options.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table column_mapping add column if not exists option_pairs jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table column_mapping drop column if exists option_pairs`.execute(db);
}
