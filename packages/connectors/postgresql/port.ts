import pg from 'pg';
import { ConnectorError } from '../sdk/connector';
import {
  DropTolerantClient,
  isTimeout,
  mapPgError as mapPgErrorAs,
  type PgConnectionItems,
  type PgErrorOptions,
  type PgTimeouts,
  poolConfig,
} from './connection';
import { assertLogicalDecodingAvailable, releaseLogicalCapture } from './logical-decoding';
import { assertUserSchema, discoverTables } from './schema';

/** Checks and schema discovery answer a person waiting on a page: none may take long. */
export const DEFAULT_PORT_QUERY_TIMEOUT_MS = 60_000;

/**
 * What the REST layer needs to connect a database and learn its schema. Every call has a connect
 * timeout (10 s unless told) and a timeout per query (60 s unless told), so a host that accepts the
 * connection but never answers cannot keep a request open. `errors` tells some errors the way the
 * connection's kind knows better (Supabase's certificate advice).
 */
export function createPostgresqlPort(timeouts: PgTimeouts = {}, errors: PgErrorOptions = {}) {
  const mapPgError = (error: unknown) => mapPgErrorAs(error, errors);
  const limits: PgTimeouts = { ...timeouts, queryMs: timeouts.queryMs ?? DEFAULT_PORT_QUERY_TIMEOUT_MS };
  const config = (items: PgConnectionItems) => poolConfig(items, limits);
  return {
    async check(items: PgConnectionItems) {
      const client = new DropTolerantClient(config(items));
      try {
        await client.connect();
        const r = await client.query('select current_user as user, current_database() as db');
        // Logical decoding is refused now, with what to do, rather than at the sync's first read.
        if (items.changeCapture === 'logical') await assertLogicalDecodingAvailable(client);
        return { accountEmail: `${r.rows[0].user}@${r.rows[0].db}` };
      } catch (error) {
        if (error instanceof ConnectorError) throw error;
        // The items given do not lead to a database that answers: the user's to correct, not a retry.
        if (isTimeout(error) && (error as { code?: string }).code !== '57014') {
          throw new ConnectorError(
            'validation',
            `connection timeout: ${(error as Error).message}`,
            'The database did not answer in time. Check the host and port, and that a PostgreSQL server listens there and accepts connections from Lockstep.',
          );
        }
        throw mapPgError(error);
      } finally {
        await client.end().catch(() => {});
      }
    },
    async listBases(items: PgConnectionItems) {
      const client = new DropTolerantClient(config(items));
      try {
        await client.connect();
        const r = await client.query(
          `select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname not in ('information_schema', 'lockstep') order by nspname`,
        );
        return r.rows.map((row) => ({ remoteId: String(row.nspname), name: String(row.nspname) }));
      } catch (error) {
        throw mapPgError(error);
      } finally {
        await client.end().catch(() => {});
      }
    },
    /**
     * Logical decoding only: drops the database's replication slot, so nothing keeps WAL for
     * Lockstep (the connection is deleted, or none of its syncs is on). A sync that reads again later
     * makes a new slot and scans its tables once. Triggers need nothing: they keep no WAL.
     */
    async releaseChangeCapture(items: PgConnectionItems): Promise<{ released: boolean }> {
      if (items.changeCapture !== 'logical') return { released: false };
      const client = new DropTolerantClient(config(items));
      try {
        await client.connect();
        return await releaseLogicalCapture(client);
      } catch (error) {
        throw error instanceof ConnectorError ? error : mapPgError(error);
      } finally {
        await client.end().catch(() => {});
      }
    },
    async discoverSchema(items: PgConnectionItems, schema: string) {
      assertUserSchema(schema);
      const pool = new pg.Pool(config(items));
      try {
        return (await discoverTables(pool, schema)).map((t) => ({
          remoteId: t.remoteId,
          name: t.name,
          extras: t.extras,
          fields: t.fields.map((f) => ({
            remoteId: f.remoteId,
            name: f.name,
            fieldType: f.fieldType,
            readOnly: f.readOnly,
            options: f.options,
          })),
        }));
      } catch (error) {
        throw mapPgError(error);
      } finally {
        await pool.end();
      }
    },
  };
}

export type PostgresqlPort = ReturnType<typeof createPostgresqlPort>;

export const postgresqlPort: PostgresqlPort = createPostgresqlPort();
