import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { boot } from '../../apps/server/src/boot';
import { loadConfig } from '../../apps/server/src/config';
import { ensureDatabase } from '../../apps/server/src/db/database';
import { buildApp } from '../../apps/server/src/http/app';
import { handleSyncRun } from '../../apps/server/src/jobs/sync-run';
import { createSyncRunner } from '../../apps/server/src/sync/run-sync-chunk';
import { type BenchRow, runStandalone } from '../harness';

const ROWS = Number(process.env.LOCKSTEP_BENCH_ROWS ?? 20_000);

/**
 * PostgreSQL -> PostgreSQL first sync through the real runtime (runner, shadows, history, issues)
 * on the embedded PostgreSQL, 10 columns of mixed types, one side populated; and, in the same run,
 * a raw COPY TO | COPY FROM of the same table between the same two databases as the floor.
 */
export async function run(): Promise<BenchRow[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bench-'));
  const config = loadConfig({ LOCKSTEP_DATA_DIR: dir, LOCKSTEP_LOG_LEVEL: 'silent', PORT: '3998' }, [
    'node',
    'bench',
    '--role=all',
  ]);
  const booted = await boot(config, () => {}, { runWorkers: false });
  const { ctx } = booted;
  const embedded = booted.embedded;
  if (!embedded) throw new Error('embedded PostgreSQL expected');
  const app = await buildApp(ctx);
  try {
    const url = (db: string) => embedded.url(db);
    for (const db of ['bench_src', 'bench_dst', 'bench_copy']) await ensureDatabase(url('postgres'), db);
    const ddl = (name: string) =>
      `create table ${name} (id bigint primary key, email text not null, name text, score numeric(12,2), active boolean, born date, seen timestamptz, tags text[], note text, visits integer)`;
    const src = new pg.Client({ connectionString: url('bench_src') });
    await src.connect();
    await src.query(ddl('people'));
    await src.query(`insert into people select g, 'user' || g || '@example.com', 'Person ' || g, (g % 1000) / 7.0, g % 2 = 0,
      date '1970-01-01' + (g % 20000), timestamptz '2026-01-01' + g * interval '1 minute', array['t' || (g % 5)], 'note ' || g, g % 97
      from generate_series(1, ${ROWS}) g`);
    for (const db of ['bench_dst', 'bench_copy']) {
      const c = new pg.Client({ connectionString: url(db) });
      await c.connect();
      await c.query(db === 'bench_dst' ? ddl('people') : ddl('people'));
      await c.end();
    }

    // The floor: COPY out of one database into the other.
    const dst = new pg.Client({ connectionString: url('bench_copy') });
    await dst.connect();
    const t0 = process.hrtime.bigint();
    await pipeline(src.query(copyTo('copy people to stdout')), dst.query(copyFrom('copy people from stdin')));
    const copyMs = Number(process.hrtime.bigint() - t0) / 1e6;
    await dst.end();

    // A user, two connections, two bases, one mapping of the ten columns, as over REST.
    const origin = { origin: 'http://localhost:3998', 'content-type': 'application/json' };
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
      connectionItems: { connectionString: url('bench_src') },
    });
    const right = await call('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: url('bench_dst') },
    });
    const core = await call('POST', '/rest/core-bases', { name: 'bench' });
    await call('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'src',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: left.id,
      side: 'left',
    });
    const full = await call('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'dst',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: right.id,
      side: 'right',
    });
    const lt = full.leftExternalBase.externalTables[0];
    const rt = full.rightExternalBase.externalTables[0];
    const id = (t: { externalColumns: { name: string; id: string }[] }, n: string) =>
      t.externalColumns.find((c) => c.name === n)?.id as string;
    const cols = ['id', 'email', 'name', 'score', 'active', 'born', 'seen', 'tags', 'note', 'visits'];
    await call('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            syncDirection: 'left_to_right',
            columnMappings: cols.map((c) => ({ leftColumnId: id(lt, c), rightColumnId: id(rt, c) })),
          },
        ],
      },
    });
    await ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();

    const runner = createSyncRunner({
      db: ctx.db,
      secretBox: ctx.secretBox,
      connectors: ctx.runtimeConnectors,
    });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const startRss = process.memoryUsage().rss;
    const startHeap = process.memoryUsage().heapUsed;
    let peakRss = 0;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 100);
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < 100_000; i++) {
      const r = await handleSyncRun(
        ctx.db,
        ctx.boss,
        runner,
        { coreBaseId: core.id, trigger: 'bench' },
        { chain: false },
      );
      if (r !== 'more_work') break;
    }
    const syncMs = Number(process.hrtime.bigint() - t1) / 1e6;
    clearInterval(sampler);
    gc?.();
    // Live heap after the sync minus before: what a streamed sync keeps (should not grow with rows).
    const keptHeap = process.memoryUsage().heapUsed - startHeap;
    const copied = (await src.query('select 1')).rowCount;
    void copied;
    const check = new pg.Client({ connectionString: url('bench_dst') });
    await check.connect();
    const n = Number((await check.query('select count(*) from people')).rows[0].count);
    await check.end();
    await src.end();
    return [
      {
        name: `PostgreSQL first sync through the runtime, ${ROWS} rows x 10 columns`,
        value: ROWS / (syncMs / 1000),
        unit: 'rows/s',
        target: '>= 100,000 rows/s at 1M',
        note: `${(syncMs / 1000).toFixed(1)} s, ${n} rows arrived, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB (${(startRss / 2 ** 20).toFixed(0)} MiB before the sync; the server, workers and bench in one process)${gc ? `, live heap kept ${(keptHeap / 2 ** 20).toFixed(0)} MiB` : ''}`,
      },
      {
        name: `raw COPY TO | COPY FROM floor, ${ROWS} rows`,
        value: ROWS / (copyMs / 1000),
        unit: 'rows/s',
        note: `${copyMs.toFixed(0)} ms`,
      },
    ];
  } finally {
    await app.close();
    await booted.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await runStandalone(import.meta.url, run);
