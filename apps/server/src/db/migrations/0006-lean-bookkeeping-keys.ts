import { type Kysely, sql } from 'kysely';

// The tables a sync writes a row to per synced record (operations, pending writes) checked foreign
// keys that say nothing new: an operation's sync log already belongs to the sync and its owner, and
// a pending write's sync belongs to its owner. Each check is a lookup per inserted row; a first sync
// of 20,000 rows paid them 60,000 times. Deleting a user or a sync still removes these rows through
// the keys that remain (sync_log_entry -> sync_log -> core_base -> user, pending_write -> core_base).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_log_entry drop constraint if exists sync_log_entry_owner_id_fkey`.execute(db);
  await sql`alter table sync_log_entry drop constraint if exists sync_log_entry_core_base_id_fkey`.execute(
    db,
  );
  await sql`alter table pending_write drop constraint if exists pending_write_owner_id_fkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_log_entry add constraint sync_log_entry_owner_id_fkey foreign key (owner_id) references "user"(id) on delete cascade`.execute(
    db,
  );
  await sql`alter table sync_log_entry add constraint sync_log_entry_core_base_id_fkey foreign key (core_base_id) references core_base(id) on delete cascade`.execute(
    db,
  );
  await sql`alter table pending_write add constraint pending_write_owner_id_fkey foreign key (owner_id) references "user"(id) on delete cascade`.execute(
    db,
  );
}
