import { DropTolerantClient, type PgConnectionItems, poolConfig } from '@lockstep/connectors/postgresql';
import { supabaseDatabaseItems } from '@lockstep/connectors/supabase';
import type { ConnectorType } from '@lockstep/contract';
import type pg from 'pg';
import { resolveEmbeddedItems } from '../demo/embedded-items';
import type { AppContext } from '../http/context';
import { openSecrets } from './external-connections';

export type Mechanism = 'postgres_trigger_notify' | 'postgres_logical_decoding' | 'polling';

/**
 * A base's connection as the debug routes use it: its type and opened items (and, for Supabase,
 * the operator's root CA its database's TLS verifies against).
 */
export type OpenedConnection = {
  type: string;
  items: Record<string, string>;
  supabaseRootCa?: string | undefined;
};

/** The real-time mechanism a connection uses, as the sync runtime has it today. */
export function realTimeMechanism(type: string, connection: OpenedConnection | undefined): Mechanism {
  if (type !== 'postgresql' && type !== 'supabase') return 'polling';
  return type === 'postgresql' && connection?.items.changeCapture === 'logical'
    ? 'postgres_logical_decoding'
    : 'postgres_trigger_notify';
}

/** The connection behind a base, its secrets opened once (none for a base without one). */
export async function baseConnection(
  ctx: AppContext,
  connectionId: string | null,
): Promise<OpenedConnection | undefined> {
  if (!connectionId) return undefined;
  const row = await ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirst();
  return row
    ? {
        type: row.type,
        items: resolveEmbeddedItems(openSecrets(ctx, row).connectionItems, ctx.embeddedDatabaseUrl),
        supabaseRootCa: ctx.config.supabase.rootCa,
      }
    : undefined;
}

/** Only these are LISTENed to by the worker's change listener; the others rely on the poll schedule. */
export const LISTENED_TYPES = new Set(['postgresql']);

export type CaptureTableState = {
  remoteId: string;
  triggerInstalled: boolean;
  triggerEnabled: boolean;
  latestChangeId: string | null;
  lastChangeAt: string | null;
  /** Changes recorded after the sync's cursor for this table (null without a change cursor). */
  pendingChanges: number | null;
};
export type CaptureState = {
  installed: boolean;
  latestChangeId: string | null;
  /** Sessions of the connection's user that LISTEN on lockstep_changes (the worker's listener). */
  listeners: number | null;
  tables: Map<string, CaptureTableState>;
  /** Logical decoding's slot in this database (null with triggers): how much WAL it keeps. */
  logicalSlot: { name: string; walStatus: string | null; retainedBytes: number | null } | null;
};

/** The database items of a PostgreSQL or Supabase connection. */
function databaseItems(connection: OpenedConnection): PgConnectionItems {
  return (connection.type as ConnectorType) === 'supabase'
    ? supabaseDatabaseItems(connection.items, { rootCa: connection.supabaseRootCa })
    : (connection.items as PgConnectionItems);
}

/** Reads the change-capture state (trigger table, triggers, listeners) from the app's database. */
export async function readCaptureState(
  connection: OpenedConnection,
  tableRemoteIds: string[],
  sinceByTable: Map<string, { since: string; xid?: string }> = new Map(),
): Promise<CaptureState> {
  const items = databaseItems(connection);
  const client = new DropTolerantClient({
    ...poolConfig(items),
    connectionTimeoutMillis: 5_000,
  } as pg.ClientConfig);
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`set statement_timeout = '5s'`);
    const triggers = await client.query<{ table_name: string; enabled: string }>(
      // One row per table: its update trigger stands for the three (insert, update, delete).
      `select n.nspname || '.' || c.relname as table_name, t.tgenabled as enabled
         from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
        where t.tgname in ('lockstep_capture', 'lockstep_capture_update')`,
    );
    const listeners = await client
      .query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and usename = current_user and query = 'listen lockstep_changes'`,
      )
      .then((r) => r.rows[0]?.n ?? 0)
      .catch(() => null);
    const installed =
      (await client.query<{ t: string | null }>(`select to_regclass('lockstep.changes')::text as t`)).rows[0]
        ?.t != null;
    const perTable = new Map<string, { id: string; at: string }>();
    const pending = new Map<string, number>();
    let latest: string | null = null;
    if (installed) {
      const rows = await client.query<{ table_name: string; id: string; at: string }>(
        `select table_name, max(id)::text as id, max(changed_at)::text as at from lockstep.changes
          where table_name = any($1::text[]) group by table_name`,
        [tableRemoteIds],
      );
      for (const r of rows.rows) perTable.set(r.table_name, { id: r.id, at: r.at });
      for (const [remoteId, { since, xid }] of sinceByTable) {
        // In commit order, as the reader goes (see the PostgreSQL connector's read).
        const n = await client.query<{ n: number }>(
          xid === undefined
            ? 'select count(*)::int as n from lockstep.changes where table_name = $1 and id > $2::bigint'
            : 'select count(*)::int as n from lockstep.changes where table_name = $1 and (xid, id) > ($3::xid8, $2::bigint)',
          xid === undefined ? [remoteId, since] : [remoteId, since, xid],
        );
        pending.set(remoteId, n.rows[0]?.n ?? 0);
      }
      latest =
        (await client.query<{ id: string | null }>('select max(id)::text as id from lockstep.changes'))
          .rows[0]?.id ?? null;
    }
    const slot = await client
      .query<{ name: string; wal_status: string | null; retained: string | null }>(
        `select slot_name as name, wal_status, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text as retained
           from pg_replication_slots where database = current_database() and slot_name like 'lockstep\\_%'`,
      )
      .then((r) => r.rows[0] ?? null)
      .catch(() => null);
    const trig = new Map(triggers.rows.map((r) => [r.table_name, r.enabled]));
    return {
      logicalSlot: slot
        ? {
            name: slot.name,
            walStatus: slot.wal_status,
            retainedBytes: slot.retained === null ? null : Number(slot.retained),
          }
        : null,
      installed,
      latestChangeId: latest,
      listeners,
      tables: new Map(
        tableRemoteIds.map((remoteId) => [
          remoteId,
          {
            remoteId,
            triggerInstalled: trig.has(remoteId),
            triggerEnabled: trig.has(remoteId) && trig.get(remoteId) !== 'D',
            latestChangeId: perTable.get(remoteId)?.id ?? null,
            lastChangeAt: perTable.get(remoteId)?.at ?? null,
            pendingChanges: pending.get(remoteId) ?? null,
          },
        ]),
      ),
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** How many changes wait after a PostgreSQL cursor (`{mode, since}`, base64url JSON); null if unreadable. */
export function cursorSince(cursor: string | null): { mode: string; since: string; xid?: string } | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      mode?: string;
      since?: string;
      xid?: string;
    };
    return typeof c.since === 'string' && typeof c.mode === 'string'
      ? { mode: c.mode, since: c.since, ...(typeof c.xid === 'string' ? { xid: c.xid } : {}) }
      : null;
  } catch {
    return null;
  }
}
