import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { boot } from '../../apps/server/src/boot';
import { loadConfig } from '../../apps/server/src/config';
import { ensureDatabase } from '../../apps/server/src/db/database';
import { buildApp } from '../../apps/server/src/http/app';
import { type BenchRow, median, runStandalone } from '../harness';

const ROWS = Number(process.env.LOCKSTEP_BENCH_SCALE_ROWS ?? 20_000);
const SYNCS = Number(process.env.LOCKSTEP_BENCH_SCALE_SYNCS ?? 20);
const SYNC_ROWS = Number(process.env.LOCKSTEP_BENCH_SCALE_SYNC_ROWS ?? 1_000);
const server = path.resolve(import.meta.dirname, '../../apps/server');

/**
 * Scale-out: the API in this process, the sync runs in 1 or 2 separate `--role=worker` processes on
 * the same PostgreSQL (the embedded one, as a server). Measures one big first sync, and many small
 * syncs switched on at once (throughput, and how evenly the scheduler serves them).
 */
export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const workers of [1, 2]) rows.push(...(await oneBigSync(workers)));
  for (const workers of [1, 2]) rows.push(...(await manySmallSyncs(workers)));
  return rows;
}

type Env = Awaited<ReturnType<typeof startLockstep>>;

async function startLockstep(workerCount: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bench-scale-'));
  const secrets = {
    LOCKSTEP_SECRET_KEY: randomBytes(32).toString('base64'),
    BETTER_AUTH_SECRET: randomBytes(24).toString('hex'),
  };
  const config = loadConfig(
    { LOCKSTEP_DATA_DIR: dir, LOCKSTEP_LOG_LEVEL: 'silent', PORT: '3994', ...secrets },
    ['node', 'bench', '--role=all'],
  );
  const booted = await boot(config, () => {}, { runWorkers: false });
  const embedded = booted.embedded;
  if (!embedded) throw new Error('embedded PostgreSQL expected');
  const app = await buildApp(booted.ctx);
  const children: ChildProcess[] = [];
  const close = async () => {
    for (const c of children) c.kill('SIGKILL');
    await app.close();
    await booted.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < workerCount; i++) {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(server, 'src/main.ts'), '--role=worker'],
        {
          cwd: server,
          env: {
            ...process.env,
            ...secrets,
            DATABASE_URL: embedded.url('lockstep'),
            LOCKSTEP_ENV: 'test',
            LOCKSTEP_LOG_LEVEL: 'silent',
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(child);
    }
    // The clock starts once every worker says it is running (a tsx boot takes a few seconds).
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve, reject) => {
            let seen = '';
            child.stdout?.on('data', (chunk: Buffer) => {
              seen += chunk.toString();
              if (seen.includes('worker is running')) resolve();
            });
            child.once('exit', (code) => reject(new Error(`a worker exited (${code}) before it was ready`)));
          }),
      ),
    );
    const origin = { origin: 'http://localhost:3994', 'content-type': 'application/json' };
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
    // biome-ignore lint/suspicious/noExplicitAny: untyped JSON answers of the REST API
    const call = async (method: 'POST' | 'PATCH', u: string, payload: object): Promise<any> => {
      const res = await app.inject({ method, url: u, headers: auth, payload });
      if (res.statusCode >= 300) throw new Error(`${u}: ${res.body}`);
      return res.json();
    };
    await call('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
    return { url: (db: string) => embedded.url(db), call, close };
  } catch (error) {
    await close();
    throw error;
  }
}

const DDL = (table: string) =>
  `create table ${table} (id bigint primary key, email text not null, name text, score numeric(12,2), active boolean, born date, seen timestamptz, tags text[], note text, visits integer)`;
const FILL = (table: string, n: number) =>
  `insert into ${table} select g, 'user' || g || '@example.com', 'Person ' || g, (g % 1000) / 7.0, g % 2 = 0,
    date '1970-01-01' + (g % 20000), timestamptz '2026-01-01' + g * interval '1 minute', array['t' || (g % 5)], 'note ' || g, g % 97
    from generate_series(1, ${n}) g`;
const COLUMNS = ['id', 'email', 'name', 'score', 'active', 'born', 'seen', 'tags', 'note', 'visits'];

/** A one-way sync of schema `schema`'s `people` between the two databases, set up over REST; left off. */
async function setUpSync(env: Env, connections: { left: string; right: string }, schema: string) {
  const core = await env.call('POST', '/rest/core-bases', { name: `scale ${schema}` });
  let full: {
    leftExternalBase: { externalTables: { id: string; externalColumns: { id: string; name: string }[] }[] };
    rightExternalBase: { externalTables: { id: string; externalColumns: { id: string; name: string }[] }[] };
  } = await env.call('POST', '/rest/external-bases', {
    type: 'postgresql',
    name: `src ${schema}`,
    remoteId: schema,
    coreBaseId: core.id,
    externalConnectionId: connections.left,
    side: 'left',
  });
  full = await env.call('POST', '/rest/external-bases', {
    type: 'postgresql',
    name: `dst ${schema}`,
    remoteId: schema,
    coreBaseId: core.id,
    externalConnectionId: connections.right,
    side: 'right',
  });
  const lt = full.leftExternalBase.externalTables[0];
  const rt = full.rightExternalBase.externalTables[0];
  if (!lt || !rt) throw new Error(`tables of ${schema} not discovered`);
  const col = (t: typeof lt, n: string) => t.externalColumns.find((c) => c.name === n)?.id as string;
  await env.call('PATCH', `/rest/core-bases/${core.id}`, {
    mappings: {
      tableMappings: [
        {
          leftTableId: lt.id,
          rightTableId: rt.id,
          syncDirection: 'left_to_right',
          columnMappings: COLUMNS.map((c) => ({ leftColumnId: col(lt, c), rightColumnId: col(rt, c) })),
        },
      ],
    },
  });
  return core.id as string;
}

async function databases(env: Env, schemas: string[], rowsPer: number) {
  for (const db of ['scale_src', 'scale_dst']) await ensureDatabase(env.url('postgres'), db);
  const src = new pg.Client({ connectionString: env.url('scale_src') });
  const dst = new pg.Client({ connectionString: env.url('scale_dst') });
  await src.connect();
  await dst.connect();
  for (const s of schemas) {
    await src.query(`create schema ${s}; ${DDL(`${s}.people`)}; ${FILL(`${s}.people`, rowsPer)}`);
    await dst.query(`create schema ${s}; ${DDL(`${s}.people`)}`);
  }
  const connections = {
    left: (
      await env.call('POST', '/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString: env.url('scale_src') },
      })
    ).id as string,
    right: (
      await env.call('POST', '/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString: env.url('scale_dst') },
      })
    ).id as string,
  };
  return { src, dst, connections };
}

/** Counts of every schema's `people` on the target, in one query. */
async function counts(dst: pg.Client, schemas: string[]) {
  const q = schemas.map((s) => `select '${s}' as s, count(*)::int as n from ${s}.people`).join(' union all ');
  return new Map((await dst.query(q)).rows.map((r) => [r.s as string, r.n as number]));
}

async function oneBigSync(workers: number): Promise<BenchRow[]> {
  const env = await startLockstep(workers);
  try {
    const { src, dst, connections } = await databases(env, ['big'], ROWS);
    const id = await setUpSync(env, connections, 'big');
    const t0 = performance.now();
    await env.call('PATCH', `/rest/core-bases/${id}`, { syncState: 'on' });
    for (;;) {
      if ((await counts(dst, ['big'])).get('big') === ROWS) break;
      if (performance.now() - t0 > 900_000) throw new Error('the big sync did not finish');
      await new Promise((r) => setTimeout(r, 50));
    }
    const ms = performance.now() - t0;
    await src.end();
    await dst.end();
    return [
      {
        name: `scale-out: one first sync of ${ROWS} rows x 10 columns, ${workers} worker process${workers > 1 ? 'es' : ''}`,
        value: ROWS / (ms / 1000),
        unit: 'rows/s',
        note: `${(ms / 1000).toFixed(1)} s from switch-on, through the queue`,
      },
    ];
  } finally {
    await env.close();
  }
}

async function manySmallSyncs(workers: number): Promise<BenchRow[]> {
  const env = await startLockstep(workers);
  try {
    const schemas = Array.from({ length: SYNCS }, (_, i) => `s${i + 1}`);
    const { src, dst, connections } = await databases(env, schemas, SYNC_ROWS);
    const ids: string[] = [];
    for (const s of schemas) ids.push(await setUpSync(env, connections, s));
    const t0 = performance.now();
    // Switched on together (as fast as the API answers), as after a deploy or a bulk import.
    await Promise.all(ids.map((id) => env.call('PATCH', `/rest/core-bases/${id}`, { syncState: 'on' })));
    const done = new Map<string, number>();
    while (done.size < schemas.length) {
      const c = await counts(dst, schemas);
      const now = performance.now() - t0;
      for (const s of schemas) if (!done.has(s) && c.get(s) === SYNC_ROWS) done.set(s, now);
      if (now > 900_000) throw new Error(`only ${done.size} of ${schemas.length} syncs finished`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const times = [...done.values()].sort((a, b) => a - b);
    const total = times.at(-1) as number;
    const p95 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)] as number;
    await src.end();
    await dst.end();
    return [
      {
        name: `scale-out: ${SYNCS} syncs of ${SYNC_ROWS} rows switched on at once, ${workers} worker process${workers > 1 ? 'es' : ''}`,
        value: (SYNCS * SYNC_ROWS) / (total / 1000),
        unit: 'rows/s',
        note: `all done in ${(total / 1000).toFixed(1)} s; each sync done after min ${((times[0] as number) / 1000).toFixed(1)} s, median ${(median(times) / 1000).toFixed(1)} s, p95 ${(p95 / 1000).toFixed(1)} s, max ${(total / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await env.close();
  }
}

await runStandalone(import.meta.url, run);
