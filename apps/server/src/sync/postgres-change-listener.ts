import { pumpDecodedChanges } from '@lockstep/connectors/postgresql';
import { sql } from 'kysely';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import { type ListenClient, openListenClient } from '../db/listen-client';
import { PRIORITY, requestSyncRun } from '../jobs/sync-run';
import type { SecretBox } from '../services/secret-box';
import { createWakeCoalescer } from './wake-coalescer';
import { type WalWatch, watchWal } from './wal-watch';

/** `wal`: a connection of the database chose logical decoding, so this listener pumps its slot. */
type Listener = {
  client: ListenClient | null;
  tables: Map<string, Set<string>>;
  wal: WalWatch | null;
};

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
 * Logical decoding has no trigger to NOTIFY: for those databases the listener polls the server's
 * WAL flush position every `capture.walPollMs` on its own connection and drains the slot when it
 * moved (`watchWal`), and the drain NOTIFYs what it stored. A change then reaches a run within about
 * one poll, and the slot keeps little WAL while a sync is on; an idle server costs one trivial
 * query per poll. A drain every `capture.safetyPumpMs` anyway is the safety net.
 */
export function createPostgresChangeListener(
  deps: {
    db: Db;
    boss: PgBoss;
    secretBox: SecretBox;
    lockstepDatabaseUrl?: string;
    /** Stored items to the items to connect with (a demo database's current address). */
    resolveItems?: (items: Record<string, string>) => Record<string, string>;
    log?: (line: string) => void;
  },
  refreshMs = 15_000,
  capture: { walPollMs?: number; safetyPumpMs?: number } = {},
) {
  const listeners = new Map<string, Listener>();
  let own: ListenClient | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;
  // Polls and pumps of listeners let go of (or turned to triggers), kept in the totals.
  const retired = { polls: 0, pumps: 0, failures: 0 };
  // Many commits on watched tables wake each sync once per window, not once per commit.
  const wakeUps = createWakeCoalescer((id) => requestSyncRun(deps.boss, id, 'change', PRIORITY.webhook));

  /** Starts or stops the listener's WAL watch as its database's change capture asks (resolves once a stopped watch's pump in flight ended). */
  function setLogical(l: Listener, logical: boolean): Promise<void> {
    if (logical && !l.wal && !stopped) {
      // A failed drain (the server away) is tried again with backoff; the sync's own read drains too.
      l.wal = watchWal({
        client: () => l.client?.current() ?? null,
        pump: (client) => pumpDecodedChanges(client),
        ...(capture.walPollMs !== undefined ? { pollMs: capture.walPollMs } : {}),
        ...(capture.safetyPumpMs !== undefined ? { safetyMs: capture.safetyPumpMs } : {}),
      });
    } else if (!logical && l.wal) {
      const s = l.wal.stats();
      retired.polls += s.polls;
      retired.pumps += s.pumps;
      retired.failures += s.failures;
      const stopping = l.wal.stop();
      l.wal = null;
      return stopping;
    }
    return Promise.resolve();
  }

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
      const stored = deps.secretBox.open<{ connectionItems: Record<string, string> }>(
        r.secrets,
      ).connectionItems;
      let items: Record<string, string>;
      try {
        items = deps.resolveItems ? deps.resolveItems(stored) : stored;
      } catch {
        continue; // Nowhere to listen (a demo database without its embedded server).
      }
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
        await setLogical(l, false);
        await l.client?.close();
      }
    }
    for (const [key, tables] of wanted) {
      const existing = listeners.get(key);
      if (existing) {
        existing.tables = tables;
        await setLogical(existing, logical.has(key));
        continue;
      }
      const runSyncs = (bases: Iterable<string>) => {
        for (const id of bases) wakeUps.wake(id);
      };
      // Set before connecting: a notification may arrive as soon as the LISTEN is in.
      const listener: Listener = { client: null, tables, wal: null };
      try {
        listener.client = await openListenClient({
          config: key.startsWith('{') ? (JSON.parse(key) as pg.ClientConfig) : { connectionString: key },
          channels: ['lockstep_changes'],
          onNotification: (msg) => runSyncs(listener.tables.get(msg.payload ?? '') ?? []),
          // Changes made while the connection was down were NOTIFYed to nobody: every sync of the
          // database runs once to catch up.
          onReconnect: () => runSyncs(new Set([...listener.tables.values()].flatMap((b) => [...b]))),
          ...(deps.log ? { log: deps.log } : {}),
        });
        listeners.set(key, listener);
        await setLogical(listener, logical.has(key));
        // A first LISTEN too: changes made while no worker listened (all were down, or this one just
        // started after a crash) were NOTIFYed to nobody, and the poll schedule is a minute away.
        runSyncs(new Set([...tables.values()].flatMap((b) => [...b])));
      } catch {
        // Unreachable now: tried again at the next refresh.
      }
    }
  }

  return {
    async start() {
      if (deps.lockstepDatabaseUrl) {
        const refreshNow = () => {
          if (!stopped) void refresh().catch(() => {});
        };
        // After a reconnect, a sync switched on meanwhile is picked up at once too.
        own = await openListenClient({
          config: { connectionString: deps.lockstepDatabaseUrl },
          channels: [SYNCS_CHANGED],
          onNotification: refreshNow,
          onReconnect: refreshNow,
          ...(deps.log ? { log: deps.log } : {}),
        });
      }
      await refresh().catch(() => {});
      timer = setInterval(() => {
        if (!stopped) void refresh().catch(() => {});
      }, refreshMs);
    },
    /** WAL polls and pumps of the logical-decoding listeners so far (for tests and benches). */
    walStats() {
      const total = { ...retired };
      for (const l of listeners.values()) {
        const s = l.wal?.stats();
        if (!s) continue;
        total.polls += s.polls;
        total.pumps += s.pumps;
        total.failures += s.failures;
      }
      return total;
    },
    async stop() {
      stopped = true;
      wakeUps.stop();
      if (timer) clearInterval(timer);
      // The watches' pumps end before their connections close.
      await Promise.all([...listeners.values()].map((l) => setLogical(l, false)));
      await own?.close();
      await Promise.all([...listeners.values()].map((l) => l.client?.close()));
      listeners.clear();
    },
  };
}
