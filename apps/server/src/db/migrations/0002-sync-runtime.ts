import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';

// The runtime's data model. Every table carries owner_id (tenant) so queries stay scoped and the
// schema can be distributed by tenant later; children cascade from their core base.
export async function up(db: Kysely<unknown>): Promise<void> {
  const id = (c: ColumnDefinitionBuilder) => c.primaryKey().defaultTo(sql`gen_random_uuid()`);
  const now = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(sql`now()`);
  const owner = (c: ColumnDefinitionBuilder) => c.notNull().references('user.id').onDelete('cascade');
  const coreBase = (c: ColumnDefinitionBuilder) => c.notNull().references('core_base.id').onDelete('cascade');

  // When the sync was last switched on or off: "Starting up" is derived from it.
  await db.schema.alterTable('core_base').addColumn('sync_state_changed_at', 'timestamptz').execute();

  await db.schema
    .createTable('external_connection')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // AES-256-GCM ciphertext of the connection items and OAuth data; never returned by the API.
    .addColumn('secrets', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ok').check(sql`status in ('ok', 'broken')`))
    .addColumn('broken_reason', 'text')
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('external_base')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('external_connection_id', 'uuid', (c) =>
      c.references('external_connection.id').onDelete('set null'),
    )
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('remote_id', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull().check(sql`side in ('left', 'right')`))
    .addColumn('extras', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('webhooks_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addUniqueConstraint('external_base_side_uq', ['core_base_id', 'side'])
    .execute();

  // Tables and columns keep the app's stable ids (remote_id), so renames never break a mapping.
  await db.schema
    .createTable('external_table')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('external_base_id', 'uuid', (c) =>
      c.notNull().references('external_base.id').onDelete('cascade'),
    )
    .addColumn('remote_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('extras', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addUniqueConstraint('external_table_remote_uq', ['external_base_id', 'remote_id'])
    .execute();

  await db.schema
    .createTable('external_column')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('external_table_id', 'uuid', (c) =>
      c.notNull().references('external_table.id').onDelete('cascade'),
    )
    .addColumn('remote_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('field_type', 'text', (c) => c.notNull())
    .addColumn('read_only', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('options', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addUniqueConstraint('external_column_remote_uq', ['external_table_id', 'remote_id'])
    .execute();

  await db.schema
    .createTable('table_mapping')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('left_table_id', 'uuid', (c) =>
      c.notNull().references('external_table.id').onDelete('cascade'),
    )
    .addColumn('right_table_id', 'uuid', (c) =>
      c.notNull().references('external_table.id').onDelete('cascade'),
    )
    .addColumn('sync_direction', 'text', (c) =>
      c.notNull().defaultTo('both').check(sql`sync_direction in ('both', 'left_to_right', 'right_to_left')`),
    )
    .addColumn('filter', 'jsonb')
    // Table-pair settings (spec section 3).
    .addColumn('match_on_field_id', 'uuid')
    .addColumn('match_on_secondary_field_id', 'uuid')
    .addColumn('conflict_winner_side', 'text', (c) =>
      c.notNull().defaultTo('left').check(sql`conflict_winner_side in ('left', 'right')`),
    )
    .addColumn('conflict_review', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('delete_protection', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('column_mapping')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('table_mapping_id', 'uuid', (c) =>
      c.notNull().references('table_mapping.id').onDelete('cascade'),
    )
    .addColumn('left_column_id', 'uuid', (c) =>
      c.notNull().references('external_column.id').onDelete('cascade'),
    )
    .addColumn('right_column_id', 'uuid', (c) =>
      c.notNull().references('external_column.id').onDelete('cascade'),
    )
    .addColumn('sync_direction', 'text', (c) =>
      c.notNull().defaultTo('both').check(sql`sync_direction in ('both', 'left_to_right', 'right_to_left')`),
    )
    .addColumn('owner_side', 'text', (c) => c.check(sql`owner_side in ('left', 'right')`))
    .execute();

  // A core meta record links one record of each side and holds the shadow (the last synced values).
  await db.schema
    .alterTable('core_meta_record')
    .addColumn('table_mapping_id', 'uuid', (c) => c.references('table_mapping.id').onDelete('cascade'))
    .addColumn('left_remote_id', 'text')
    .addColumn('right_remote_id', 'text')
    .addColumn('shadow', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('shadow_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sync_disabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('updated_at', 'timestamptz', now)
    .execute();
  await sql`create unique index core_meta_record_left_uq on core_meta_record (table_mapping_id, left_remote_id) where left_remote_id is not null`.execute(
    db,
  );
  await sql`create unique index core_meta_record_right_uq on core_meta_record (table_mapping_id, right_remote_id) where right_remote_id is not null`.execute(
    db,
  );

  await db.schema
    .createTable('sync_log')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('running').check(sql`status in ('running', 'done', 'failed', 'cancelled')`),
    )
    .addColumn('counts', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', now)
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('sync_log_base_idx')
    .on('sync_log')
    .columns(['core_base_id', 'started_at'])
    .execute();

  // Operations: every create/update/delete with before and after values; the record history too.
  await db.schema
    .createTable('sync_log_entry')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('sync_log_id', 'uuid', (c) => c.notNull().references('sync_log.id').onDelete('cascade'))
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('core_meta_record_id', 'uuid', (c) => c.references('core_meta_record.id').onDelete('set null'))
    .addColumn('side', 'text', (c) => c.notNull().check(sql`side in ('left', 'right')`))
    .addColumn('operation', 'text', (c) =>
      c.notNull().check(sql`operation in ('create', 'update', 'delete')`),
    )
    .addColumn('remote_id', 'text')
    .addColumn('before', 'jsonb')
    .addColumn('after', 'jsonb')
    .addColumn('created_at', 'timestamptz', now)
    .execute();
  await db.schema
    .createIndex('sync_log_entry_record_idx')
    .on('sync_log_entry')
    .columns(['core_meta_record_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('sync_error')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('core_meta_record_id', 'uuid', (c) => c.references('core_meta_record.id').onDelete('cascade'))
    .addColumn('external_connection_id', 'uuid', (c) =>
      c.references('external_connection.id').onDelete('cascade'),
    )
    .addColumn('side', 'text')
    .addColumn('remote_id', 'text')
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('user_facing_message', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('open').check(sql`status in ('open', 'retrying', 'resolved')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .execute();
  await db.schema
    .createIndex('sync_error_base_idx')
    .on('sync_error')
    .columns(['core_base_id', 'status'])
    .execute();

  await db.schema
    .createTable('trace_log')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'uuid')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', now)
    .execute();
  await db.schema
    .createIndex('trace_log_base_idx')
    .on('trace_log')
    .columns(['core_base_id', 'created_at'])
    .execute();
  await db.schema.createIndex('trace_log_trace_idx').on('trace_log').column('trace_id').execute();

  await db.schema
    .createTable('progress_tracker')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('PENDING')
        .check(sql`status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED')`),
    )
    .addColumn('done', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('total', 'bigint')
    .addColumn('message', 'text')
    .addColumn('result', 'jsonb')
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('sync_cursor')
    .addColumn('external_table_id', 'uuid', (c) =>
      c.primaryKey().references('external_table.id').onDelete('cascade'),
    )
    .addColumn('owner_id', 'text', owner)
    .addColumn('cursor', 'text')
    .addColumn('full_scan_complete', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('updated_at', 'timestamptz', now)
    .execute();

  // Recorded before calling an app, so a crash between the write and the shadow update is recognised.
  await db.schema
    .createTable('pending_write')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('core_meta_record_id', 'uuid', (c) => c.references('core_meta_record.id').onDelete('cascade'))
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('delete_approval')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('core_meta_record_id', 'uuid', (c) =>
      c.notNull().references('core_meta_record.id').onDelete('cascade'),
    )
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`status in ('pending', 'approved', 'rejected')`),
    )
    .addColumn('created_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('held_conflict')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('core_meta_record_id', 'uuid', (c) =>
      c.notNull().references('core_meta_record.id').onDelete('cascade'),
    )
    .addColumn('column_mapping_id', 'uuid', (c) => c.references('column_mapping.id').onDelete('cascade'))
    .addColumn('left_value', 'jsonb')
    .addColumn('right_value', 'jsonb')
    .addColumn('shadow_value', 'jsonb')
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('open').check(sql`status in ('open', 'resolved_left', 'resolved_right')`),
    )
    .addColumn('created_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('sync_preview')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('new'))
    .addColumn('core_table_ids', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('tracking_id', 'uuid', (c) => c.references('progress_tracker.id').onDelete('set null'))
    .addColumn('summary', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .execute();

  await db.schema
    .createTable('sync_preview_record')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('sync_preview_id', 'uuid', (c) =>
      c.notNull().references('sync_preview.id').onDelete('cascade'),
    )
    .addColumn('external_table_id', 'uuid', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('remote_id', 'text', (c) => c.notNull())
    .addColumn('fields', 'jsonb', (c) => c.notNull())
    .addColumn('match_key', 'text')
    .addColumn('plan', 'text')
    .execute();
  await db.schema
    .createIndex('sync_preview_record_idx')
    .on('sync_preview_record')
    .columns(['sync_preview_id', 'external_table_id'])
    .execute();

  await db.schema
    .createTable('sync_preview_problem')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('sync_preview_id', 'uuid', (c) =>
      c.notNull().references('sync_preview.id').onDelete('cascade'),
    )
    .addColumn('table_mapping_id', 'uuid')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();

  await db.schema
    .createTable('sync_log_export')
    .addColumn('id', 'uuid', id)
    .addColumn('owner_id', 'text', owner)
    .addColumn('core_base_id', 'uuid', coreBase)
    .addColumn('format', 'text', (c) => c.notNull().check(sql`format in ('csv', 'json')`))
    .addColumn('filters', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('PENDING'))
    .addColumn('row_count', 'integer')
    .addColumn('created_at', 'timestamptz', now)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'sync_log_export',
    'sync_preview_problem',
    'sync_preview_record',
    'sync_preview',
    'held_conflict',
    'delete_approval',
    'pending_write',
    'sync_cursor',
    'progress_tracker',
    'trace_log',
    'sync_error',
    'sync_log_entry',
    'sync_log',
    'column_mapping',
    'table_mapping',
    'external_column',
    'external_table',
    'external_base',
    'external_connection',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
