import { type Kysely, sql } from 'kysely';

// A linked-record value that could not be written yet: a record it links to has no partner on the
// other side (it syncs later in the run, or in a later page). The runtime writes it once every
// linked record is synced; one row per record and field, the latest value wins.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pending_relation')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('core_base_id', 'uuid', (c) => c.notNull().references('core_base.id').onDelete('cascade'))
    .addColumn('table_mapping_id', 'uuid', (c) =>
      c.notNull().references('table_mapping.id').onDelete('cascade'),
    )
    .addColumn('column_mapping_id', 'uuid', (c) =>
      c.notNull().references('column_mapping.id').onDelete('cascade'),
    )
    .addColumn('from_side', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('value', 'jsonb', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('pending_relation_uq', ['column_mapping_id', 'from_side', 'source_id'])
    .execute();
  await db.schema
    .createIndex('pending_relation_mapping_idx')
    .on('pending_relation')
    .column('table_mapping_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pending_relation').execute();
}
