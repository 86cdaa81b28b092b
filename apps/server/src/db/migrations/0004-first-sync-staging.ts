import { type Kysely, sql } from 'kysely';

// The first sync of a table pair with a match field reads both sides completely before it writes
// anything, so a record is matched with its partner wherever the two sit in their tables. The records
// wait here (in PostgreSQL, never in memory) until they are matched and reconciled.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('first_sync_state')
    .addColumn('table_mapping_id', 'uuid', (c) =>
      c.primaryKey().references('table_mapping.id').onDelete('cascade'),
    )
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('left_cursor', 'text')
    .addColumn('right_cursor', 'text')
    .addColumn('left_done', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('right_done', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('matched', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('reconcile_side', 'text', (c) => c.notNull().defaultTo('left'))
    .addColumn('reconcile_after', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('first_sync_record')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('table_mapping_id', 'uuid', (c) =>
      c.notNull().references('table_mapping.id').onDelete('cascade'),
    )
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('remote_id', 'text', (c) => c.notNull())
    .addColumn('match_key', 'text')
    .addColumn('fields', 'jsonb', (c) => c.notNull())
    .addUniqueConstraint('first_sync_record_uq', ['table_mapping_id', 'side', 'remote_id'])
    .execute();
  await db.schema
    .createIndex('first_sync_record_key_idx')
    .on('first_sync_record')
    .columns(['table_mapping_id', 'match_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('first_sync_record').ifExists().execute();
  await db.schema.dropTable('first_sync_state').ifExists().execute();
}
