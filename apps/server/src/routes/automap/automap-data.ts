import { DropTolerantClient, type PgConnectionItems, tlsOptions } from '@lockstep/connectors/postgresql';
import type { AutomapSampleInfo } from '@lockstep/contract';
import type { AutomapColumn, SampleValues, TableInfo } from '@lockstep/engine';
import type pg from 'pg';
import { resolveEmbeddedItems } from '../../demo/embedded-items';
import type { AppContext } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { connectionItemsSaver } from '../../services/external-connections';

/** How many rows of each table are read to compare values. */
export const SAMPLE_ROWS = 50;
/** The table mapper reads samples of at most this many tables per side (the rest go by schema). */
export const MAX_SAMPLED_TABLES = 20;
const SAMPLE_TIMEOUT_MS = 5_000;

export type AutomapTable = TableInfo & { remoteId: string; unsyncable: string | null };
export type AutomapSide = {
  side: 'left' | 'right';
  externalBaseId: string;
  type: string;
  connectionId: string | null;
  tables: AutomapTable[];
};

/**
 * Both connected apps of a sync with their tables and fields as stored (removed ones left out),
 * in the engine's automap terms: primary keys and foreign keys marked, unsyncable tables noted.
 */
export async function loadAutomapSides(
  ctx: AppContext,
  coreBaseId: string,
): Promise<{ left: AutomapSide; right: AutomapSide }> {
  const bases = await ctx.db
    .selectFrom('external_base')
    .selectAll()
    .where('core_base_id', '=', coreBaseId)
    .execute();
  const left = bases.find((b) => b.side === 'left');
  const right = bases.find((b) => b.side === 'right');
  if (!left || !right) {
    throw new HttpError(
      409,
      'Both sides of the sync must be connected',
      'Connect an app on both sides of the sync before mapping tables.',
      'conflict',
    );
  }
  const tables = await ctx.db
    .selectFrom('external_table')
    .selectAll()
    .where('external_base_id', 'in', [left.id, right.id])
    .orderBy('name')
    .execute();
  const columns = tables.length
    ? await ctx.db
        .selectFrom('external_column')
        .selectAll()
        .where(
          'external_table_id',
          'in',
          tables.map((t) => t.id),
        )
        .orderBy('name')
        .execute()
    : [];
  const sideOf = (b: (typeof bases)[number]): AutomapSide => ({
    side: b.side,
    externalBaseId: b.id,
    type: b.type,
    connectionId: b.external_connection_id,
    tables: tables
      .filter((t) => t.external_base_id === b.id && t.extras.removed !== true)
      .map((t) => {
        const pk = Array.isArray(t.extras.primaryKey) ? (t.extras.primaryKey as string[]) : [];
        return {
          id: t.id,
          remoteId: t.remote_id,
          name: t.name,
          unsyncable: typeof t.extras.unsyncable === 'string' ? t.extras.unsyncable : null,
          columns: columns
            .filter((c) => c.external_table_id === t.id && c.options.removed !== true)
            .map(
              (c): AutomapColumn => ({
                id: c.id,
                name: c.name,
                type: c.field_type,
                readOnly: c.read_only,
                options: { ...c.options, remoteId: c.remote_id },
                primaryKey: pk.length === 1 && pk[0] === c.remote_id,
                unique: (pk.length === 1 && pk[0] === c.remote_id) || c.options.unique === true,
              }),
            ),
        };
      }),
  });
  return { left: sideOf(left), right: sideOf(right) };
}

const quoteIdent = (s: string) => `"${s.replaceAll('"', '""')}"`;

/** The same connection items as the PostgreSQL connector takes, for one short read-only session. */
function pgClientConfig(items: Record<string, string | undefined>): pg.ClientConfig {
  const ssl = tlsOptions(items as PgConnectionItems);
  const common = { ssl, connectionTimeoutMillis: SAMPLE_TIMEOUT_MS, statement_timeout: SAMPLE_TIMEOUT_MS };
  if (items.connectionString) return { connectionString: items.connectionString, ...common };
  return {
    host: items.host,
    port: items.port ? Number(items.port) : 5432,
    database: items.database,
    user: items.user,
    password: items.password,
    ...common,
  };
}

type Sampled = { values: Record<string, SampleValues>; info: AutomapSampleInfo[] };

const byColumnId = (table: AutomapTable, rows: Record<string, unknown>[]): SampleValues => {
  const out: Record<string, unknown[]> = {};
  for (const c of table.columns) {
    const remote = String(c.options?.remoteId ?? c.name);
    out[c.id] = rows.map((r) => r[remote]);
  }
  return out;
};

/**
 * Up to SAMPLE_ROWS rows of each table, by column id. PostgreSQL is read in a read-only
 * transaction with plain SELECTs (a connector's first read would install change capture on the
 * user's tables, which a proposal must not do); other apps through the runtime connector's first
 * page. Anything that fails is skipped with a note: proposals then go by names and types only.
 */
export async function readSamples(
  ctx: AppContext,
  side: AutomapSide,
  tables: AutomapTable[],
): Promise<Sampled> {
  const values: Record<string, SampleValues> = {};
  const info: AutomapSampleInfo[] = [];
  const note = (t: AutomapTable, status: AutomapSampleInfo['status'], rows: number, message: string | null) =>
    info.push({ side: side.side, tableId: t.id, status, rows, message });
  const unavailable = (message: string) => {
    for (const t of tables) note(t, 'unavailable', 0, message);
    return { values, info };
  };
  let secrets: Record<string, string> = {};
  if (side.connectionId) {
    const conn = await ctx.db
      .selectFrom('external_connection')
      .select(['secrets', 'status'])
      .where('id', '=', side.connectionId)
      .executeTakeFirst();
    if (!conn) return unavailable('The connection was deleted.');
    if (conn.status === 'broken') return unavailable('The connection is broken; reconnect the app.');
    try {
      secrets = ctx.secretBox.open<{ connectionItems: Record<string, string> }>(conn.secrets).connectionItems;
    } catch {
      return unavailable('The saved credentials could not be read.');
    }
  }

  if (side.type === 'postgresql') {
    let items: Record<string, string>;
    try {
      items = resolveEmbeddedItems(secrets, ctx.embeddedDatabaseUrl);
    } catch {
      return unavailable('The demo database is not on this server.');
    }
    const client = new DropTolerantClient(pgClientConfig(items));
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('begin read only');
    } catch (error) {
      await client.end().catch(() => {});
      return unavailable(`The database could not be reached: ${(error as Error).message}`);
    }
    try {
      for (const t of tables) {
        const [schema, name] = t.remoteId.includes('.')
          ? t.remoteId.split(/\.(.*)/s)
          : ['public', t.remoteId];
        try {
          await client.query('savepoint sample');
          const rows = (
            await client.query(
              `select * from ${quoteIdent(schema ?? 'public')}.${quoteIdent(name ?? '')} limit ${SAMPLE_ROWS}`,
            )
          ).rows as Record<string, unknown>[];
          await client.query('release savepoint sample');
          values[t.id] = byColumnId(t, rows);
          note(t, 'used', rows.length, null);
        } catch (error) {
          await client.query('rollback to savepoint sample').catch(() => {});
          note(t, 'failed', 0, (error as Error).message);
        }
      }
    } finally {
      await client.query('rollback').catch(() => {});
      await client.end().catch(() => {});
    }
    return { values, info };
  }

  const connector = ctx.runtimeConnectors.forConnection(
    side.type,
    secrets,
    side.connectionId ? connectionItemsSaver(ctx, side.connectionId) : undefined,
  );
  if (!connector) return unavailable(`Sample rows of ${side.type} apps are not read yet.`);
  for (const t of tables) {
    try {
      const page = await connector.read(t.remoteId, null, { pageSize: SAMPLE_ROWS });
      const records = page.records.slice(0, SAMPLE_ROWS);
      values[t.id] = byColumnId(
        t,
        records.map((r) => r.fields),
      );
      note(t, 'used', records.length, null);
    } catch (error) {
      note(t, 'failed', 0, (error as Error).message);
    }
  }
  return { values, info };
}

export const notRequested = (side: AutomapSide, tables: AutomapTable[]): AutomapSampleInfo[] =>
  tables.map((t) => ({ side: side.side, tableId: t.id, status: 'not_requested', rows: 0, message: null }));
