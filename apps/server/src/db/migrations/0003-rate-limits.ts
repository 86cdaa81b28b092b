import { type Kysely, sql } from 'kysely';

// The shared rate limiter's sliding log (packages/connectors/sdk/rate-limiter.ts): one row per granted
// call, per key (base, token, account); rows older than the longest window are deleted as calls come.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('lockstep_rate_limit_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn('cost', 'integer', (c) => c.notNull().check(sql`cost > 0`))
    .execute();
  await db.schema
    .createIndex('lockstep_rate_limit_events_key_at_idx')
    .on('lockstep_rate_limit_events')
    .columns(['key', 'at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('lockstep_rate_limit_events').ifExists().execute();
}
