import { type Kysely, sql } from 'kysely';

// How far a staged first sync has sent its writes (side and the last staged id of the chunk being
// written): a chunk reconciled again after a crash overlaps it, and its writes then go with a lookup
// of every idempotency key; a chunk past it sends keys never sent before (see first-sync.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table first_sync_state add column if not exists sent_side text, add column if not exists sent_through bigint`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table first_sync_state drop column if exists sent_side, drop column if exists sent_through`.execute(
    db,
  );
}
