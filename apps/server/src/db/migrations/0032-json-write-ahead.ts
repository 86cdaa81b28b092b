import { type Kysely, sql } from 'kysely';

// json, not jsonb, for a batch's pending writes (the write-ahead record of a run, read back whole in
// node and deleted once the batch is stored): building jsonb was most of its cost (a 10,000-row bulk
// update: 305 -> 129 ms of statement time), as it was for the columns 0015 changed. The table holds
// only batches under way, so the rewrite is cheap.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table pending_write alter column payload type json using payload::json`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table pending_write alter column payload type jsonb using payload::jsonb`.execute(db);
}
