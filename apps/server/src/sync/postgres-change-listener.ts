import { pumpDecodedChanges } from '@lockstep/connectors/postgresql';
import { sql } from 'kysely';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { PRIORITY, requestSyncRun } from '../jobs/sync-run';
import type { SecretBox } from '../services/secret-box';

/** `logical`: a connection of the database chose logical decoding, so this listener pumps its slot. */
type Listener = { client: pg.Client; tables: Map<string, Set<string>>; logical: boolean; pumping: boolean };

const SYNCS_CHANGED = 'lockstep_syncs_changed';

/**
 * Tells the change listeners of every worker process that a sync was switched on or off or got a
 * base, so they LISTEN on its databases at once instead of at their next timed refresh.
 */
export async function announceSyncsChanged(db: Db): Promise<void> {
  await sql`select pg_notify(${SYNCS_CHANGED}, '')`.execute(db);
}

/**
 * Real time for PostgreSQL: LISTENs on `lockstep_changes` in every database an active sync uses,
 * and queues a run of the syncs whose table changed (the change-capture trigger NOTIFYs). Runs on
 * worker processes; the poll schedule stays as the safety net for a missed notification.
 *
 * Logical decoding has no trigger to NOTIFY: for those databases the listener drains the slot every
 * `pumpMs` on its own connection, and the drain NOTIFYs what it stored (so a change reaches a run
 * within about that long, and the slot keeps little WAL while a sync is on).
 */
export function createPostgresChangeListener(
  deps: { db: Db; boss: PgBoss; secretBox: SecretBox; lockstepDatabaseUrl?: string },
  refreshMs = 15_000,
  pumpMs = 500,
) {
  const listeners = new Map<string, Listener>();
  let own: pg.Client | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let pumpTimer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;

  async function refresh() {
    const rows = await deps.db
      .selectFrom('external_base')
      .innerJoin('core_base', 'core_base.id', 'external_base.core_base_id')
      .innerJoin('external_connection', 'external_connection.id', 'external_base.external_connection_id')
      .innerJoin('external_table', 'external_table.external_base_id', 'external_base.id')
      .select(['core_base.id as core_base_id', 'external_connection.secrets', 'external_table.remote_id'])
      // Supabase's data path is PostgreSQL with the same triggers.
      .where('external_base.type', 'in', ['postgresql', 'supabase'])
      .where('core_base.sync_state', '=', 'on')
      .execute();
    const wanted = new Map<string, Map<string, Set<string>>>();
    const logical = new Set<string>();
    for (const r of rows) {
      const items = deps.secretBox.open<{ connectionItems: Record<string, string> }>(
        r.secrets,
      ).connectionItems;
      const key = items.connectionString ?? JSON.stringify(items);
      if (items.changeCapture === 'logical') logical.add(key);
      const tables = wanted.get(key) ?? new Map<string, Set<string>>();
      const bases = tables.get(r.remote_id) ?? new Set<string>();
      bases.add(r.core_base_id);
      tables.set(r.remote_id, bases);
      wanted.set(key, tables);
    }
    for (const [key, l] of listeners) {
      if (!wanted.has(key)) {
        listeners.delete(key);
        await l.client.end().catch(() => {});
      }
    }
    for (const [key, tables] of wanted) {
      const existing = listeners.get(key);
      if (existing) {
        existing.tables = tables;
        existing.logical = logical.has(key);
        continue;
      }
      const client = new pg.Client(
        key.startsWith('{') ? (JSON.parse(key) as pg.ClientConfig) : { connectionString: key },
      );
      const listener: Listener = { client, tables, logical: logical.has(key), pumping: false };
      client.on('notification', (msg) => {
        for (const id of listener.tables.get(msg.payload ?? '') ?? []) {
          void requestSyncRun(deps.boss, id, 'change', PRIORITY.webhook).catch(() => {});
        }
      });
      // A dropped connection is opened again at the next refresh.
      client.on('error', () => listeners.delete(key));
      try {
        await client.connect();
        await client.query('listen lockstep_changes');
        listeners.set(key, listener);
      } catch {
        await client.end().catch(() => {});
      }
    }
  }

  return {
    async start() {
      if (deps.lockstepDatabaseUrl) {
        own = new pg.Client({ connectionString: deps.lockstepDatabaseUrl });
        own.on('notification', () => {
          if (!stopped) void refresh().catch(() => {});
        });
        own.on('error', () => {});
        await own.connect();
        await own.query(`listen ${SYNCS_CHANGED}`);
      }
      await refresh().catch(() => {});
      timer = setInterval(() => {
        if (!stopped) void refresh().catch(() => {});
      }, refreshMs);
      pumpTimer = setInterval(() => {
        for (const l of listeners.values()) {
          if (stopped || !l.logical || l.pumping) continue;
          l.pumping = true;
          // A failed drain (the slot busy, the server away) is tried again at the next tick; the
          // sync's own read drains it too.
          void pumpDecodedChanges(l.client)
            .catch(() => {})
            .finally(() => {
              l.pumping = false;
            });
        }
      }, pumpMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      if (pumpTimer) clearInterval(pumpTimer);
      await own?.end().catch(() => {});
      await Promise.all([...listeners.values()].map((l) => l.client.end().catch(() => {})));
      listeners.clear();
    },
  };
}
