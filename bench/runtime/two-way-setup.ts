import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { boot } from '../../apps/server/src/boot';
import { loadConfig } from '../../apps/server/src/config';
import { ensureDatabase } from '../../apps/server/src/db/database';
import { buildApp } from '../../apps/server/src/http/app';

/**
 * Shared by the propagation benches: a whole Lockstep (embedded PostgreSQL, pg-boss workers, the
 * PostgreSQL change listener) in this process, and two databases with one table `items` synced
 * both ways over the REST API, as a user would set it up. `rows` rows start on side A; side B starts
 * empty and is filled by the first sync, which this waits for.
 */
export async function startTwoWaySync(options: {
  rows: number;
  port: number;
  /** Change capture of both connections (the embedded PostgreSQL runs with wal_level=logical). */
  capture?: 'triggers' | 'logical';
}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bench-'));
  const config = loadConfig(
    {
      LOCKSTEP_DATA_DIR: dir,
      LOCKSTEP_LOG_LEVEL: 'silent',
      PORT: String(options.port),
      LOCKSTEP_EMBEDDED_STATEMENT_STATS: process.env.LOCKSTEP_BENCH_STATEMENTS === '1' ? '1' : '0',
    },
    ['node', 'bench', '--role=all'],
  );
  const booted = await boot(config, () => {}, { runWorkers: true });
  const { ctx } = booted;
  const embedded = booted.embedded;
  if (!embedded) throw new Error('embedded PostgreSQL expected');
  const app = await buildApp(ctx);
  const clients: pg.Client[] = [];
  const close = async () => {
    for (const c of clients) await c.end().catch(() => {});
    await app.close();
    await booted.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const url = (db: string) => embedded.url(db);
    for (const db of ['bench_a', 'bench_b']) await ensureDatabase(url('postgres'), db);
    const connect = async (db: string) => {
      const c = new pg.Client({ connectionString: url(db) });
      await c.connect();
      clients.push(c);
      return c;
    };
    const a = await connect('bench_a');
    const b = await connect('bench_b');
    const ddl =
      'create table items (id bigint primary key, name text not null, n integer not null, score numeric(12,2), seen timestamptz)';
    await a.query(ddl);
    await b.query(ddl);
    await a.query(
      `insert into items select g, 'item ' || g, 0, g / 7.0, timestamptz '2026-01-01' + g * interval '1 minute' from generate_series(1, ${options.rows}) g`,
    );

    const origin = { origin: `http://localhost:${options.port}`, 'content-type': 'application/json' };
    const signUp = await app.inject({
      method: 'POST',
      url: '/api/auth/sign-up/email',
      headers: origin,
      payload: { email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' },
    });
    const cookie = [signUp.headers['set-cookie']]
      .flat()
      .filter((c): c is string => typeof c === 'string')
      .map((c) => c.split(';')[0])
      .join('; ');
    const token = (await app.inject({ url: '/api/auth/token', headers: { cookie } })).json().token as string;
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async (method: 'POST' | 'PATCH', u: string, payload: object) => {
      const res = await app.inject({ method, url: u, headers: auth, payload });
      if (res.statusCode >= 300) throw new Error(`${u}: ${res.body}`);
      return res.json();
    };
    await call('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
    const left = await call('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: url('bench_a'), changeCapture: options.capture ?? 'triggers' },
    });
    const right = await call('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: url('bench_b'), changeCapture: options.capture ?? 'triggers' },
    });
    const core = await call('POST', '/rest/core-bases', { name: 'bench' });
    await call('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'a',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: left.id,
      side: 'left',
    });
    const full = await call('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'b',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: right.id,
      side: 'right',
    });
    const lt = full.leftExternalBase.externalTables[0];
    const rt = full.rightExternalBase.externalTables[0];
    const id = (t: { externalColumns: { name: string; id: string }[] }, n: string) =>
      t.externalColumns.find((c) => c.name === n)?.id as string;
    const cols = ['id', 'name', 'n', 'score', 'seen'];
    await call('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            syncDirection: 'both',
            columnMappings: cols.map((c) => ({ leftColumnId: id(lt, c), rightColumnId: id(rt, c) })),
          },
        ],
      },
    });
    // Switching on queues the first run and makes the workers LISTEN on both databases.
    const t0 = performance.now();
    await call('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await waitFor(async () => (await count(b)) === options.rows, 600_000);
    const firstSyncMs = performance.now() - t0;
    await quiet(ctx.db, core.id);
    return { ctx, a, b, connect, coreBaseId: core.id as string, firstSyncMs, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export const count = async (c: pg.Client) =>
  Number((await c.query('select count(*) from items')).rows[0].count);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it holds; returns the time it took, or throws after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 5,
): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await check()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`not reached within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** Waits until the sync has no run going and no run queued (echo runs finished). */
export async function quiet(db: import('../../apps/server/src/db/database').Db, coreBaseId: string) {
  const { sql } = await import('kysely');
  await waitFor(
    async () => {
      const running = await db
        .selectFrom('sync_log')
        .select('id')
        .where('core_base_id', '=', coreBaseId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      const queued = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
         where name = 'sync-run' and state in ('created', 'retry', 'active')`.execute(db);
      return !running && (queued.rows[0]?.n ?? 0) === 0;
    },
    120_000,
    50,
  );
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}
