import pg from 'pg';
import { ConnectorError } from '../sdk/connector';
import { DropTolerantClient, mapPgError, type PgConnectionItems, poolConfig } from './connection';
import { assertLogicalDecodingAvailable, releaseLogicalCapture } from './logical-decoding';
import { discoverTables } from './schema';

/** What the REST layer needs to connect a database and learn its schema. */
export const postgresqlPort = {
  async check(items: PgConnectionItems) {
    const client = new DropTolerantClient(poolConfig(items));
    try {
      await client.connect();
      const r = await client.query('select current_user as user, current_database() as db');
      // Logical decoding is refused now, with what to do, rather than at the sync's first read.
      if (items.changeCapture === 'logical') await assertLogicalDecodingAvailable(client);
      return { accountEmail: `${r.rows[0].user}@${r.rows[0].db}` };
    } catch (error) {
      throw error instanceof ConnectorError ? error : mapPgError(error);
    } finally {
      await client.end().catch(() => {});
    }
  },
  async listBases(items: PgConnectionItems) {
    const client = new DropTolerantClient(poolConfig(items));
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
    const client = new DropTolerantClient(poolConfig(items));
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
    const pool = new pg.Pool(poolConfig(items));
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
