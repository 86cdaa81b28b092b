import { DropTolerantClient } from '@lockstep/connectors/postgresql';
import { Kysely, type Migration, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { migrations } from './migrations/index';
import type { Database } from './schema';

// int8 and numeric come back as strings by default; counts are int8, and we want numbers for them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = Kysely<Database>;

export function createPool(connectionString: string, max = 10): pg.Pool {
  // Checked-out clients too: pg-pool listens for 'error' only on idle ones, and a dropped
  // connection (a restart, pg_terminate_backend) emits 'error' mid-query, which unheard would crash
  // the process. The query fails on its own and the pool discards the dead client on release.
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: 'lockstep',
    Client: DropTolerantClient,
  });
  // An idle client losing its connection must not crash the process; the pool connects anew.
  pool.on('error', (error: Error & { code?: string }) => {
    // 57P01: the server is shutting down (Ctrl-C stops the embedded one alongside us).
    if (error.code !== '57P01') console.warn('PostgreSQL pool lost a connection:', error.message);
  });
  return pool;
}

export function createDb(pool: pg.Pool): Db {
  // The cursor lets large reads (exports, scans) stream instead of loading whole tables.
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
}

export async function migrateToLatest(db: Db): Promise<void> {
  // One process at a time, held on a session of its own: an api and a worker started together on
  // a new database both migrated it, and the second failed on "relation already exists".
  await db.connection().execute(async (session) => {
    await sql`select pg_advisory_lock(hashtext('lockstep-migrate'))`.execute(session);
    try {
      await runMigrations(db);
    } finally {
      await sql`select pg_advisory_unlock(hashtext('lockstep-migrate'))`.execute(session);
    }
  });
}

/** Runs the pending migrations of `list` (the product's by default); migrateToLatest holds the lock. */
export async function runMigrations(db: Db, list: Record<string, Migration> = migrations): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => list },
    // Numbers are handed out ahead (0009 shipped while 0008 was still being written): an install that
    // ran 0009 still runs 0008 when it arrives, instead of refusing it as out of order.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? '');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}

/** Creates a database on the server behind `adminUrl` unless it exists. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new DropTolerantClient({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}
