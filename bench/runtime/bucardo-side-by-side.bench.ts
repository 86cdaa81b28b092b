import { type ChildProcess, execFile, execFileSync, fork } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { appendFile, chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { boot } from '../../apps/server/src/boot';
import { loadConfig } from '../../apps/server/src/config';
import { buildApp } from '../../apps/server/src/http/app';
import { type BenchRow, runStandalone } from '../harness';
import { percentile, quiet, sleep, waitFor } from './two-way-setup';

const run$ = promisify(execFile);

const ROWS = Number(process.env.LOCKSTEP_BENCH_ROWS ?? 100_000);
const PG_BIN = '/usr/lib/postgresql/15/bin';
const INSTALL = 'DEBIAN_FRONTEND=noninteractive apt-get install -y bucardo postgresql-plperl-15';
const BULK = 10_000;
const SINGLE_UPDATES = 50;
const AUTOCOMMIT_INSERTS = 10_000;
const FIRST_COPY_TIMEOUT_MS = 15 * 60_000;
const BULK_TIMEOUT_MS = 5 * 60_000;

/**
 * Lockstep and Bucardo 5.6 side by side on one throwaway PostgreSQL 15 cluster: the same table
 * (`contacts`, ROWS rows x 10 columns) copied one way from a source database into an empty target,
 * then the same changes on the source with the sync running. Each system has a source and a target
 * database of its own (both add triggers to their source); the content starts identical.
 * Bucardo runs as its own daemons; Lockstep runs in this process (embedded PostgreSQL for its own
 * database, pg-boss workers, the change listener), set up and started over its REST API as a user
 * would: a sync preview, reviewed, then applied. The writes and the watching are done by a forked
 * client process, so Lockstep's event loop in this process does not hold up their timings.
 */
export async function run(): Promise<BenchRow[]> {
  const pgMissing = missingPostgres15();
  if (pgMissing) {
    console.log(`Bucardo side-by-side skipped: ${pgMissing}`);
    return [];
  }
  const bucardoMissing = missingBucardo();
  if (bucardoMissing)
    console.log(`Bucardo side-by-side: ${bucardoMissing}; Bucardo rows skipped (install with: ${INSTALL}).`);

  const cluster = await startCluster();
  const client = startClient();
  let bucardo: Figures | null = null;
  let lockstep: Figures | null = null;
  let floorMs = 0;
  let cleanInsertsMs = 0;
  try {
    await prepareDatabases(cluster);
    floorMs = await floor(cluster);
    // The writer on the trigger-free copy before either sync exists: the machine's own pace
    // (after a checkpoint, so the load's dirty pages are not written under it).
    await cluster.query('postgres', 'checkpoint');
    cleanInsertsMs = await client.call<number>('autocommitInserts', {
      url: cluster.url('dst_floor'),
      from: 9_000_000,
      n: AUTOCOMMIT_INSERTS,
    });
    if (!bucardoMissing) bucardo = await measureBucardo(cluster, client);
    lockstep = await measureLockstep(cluster, client);
  } finally {
    client.close();
    await cluster.stop();
  }
  return report(floorMs, cleanInsertsMs, bucardo, lockstep);
}

/** Why run-all should skip this bench, or null. */
export function skipReason(): string | null {
  const missing = missingPostgres15() ?? missingBucardo();
  return missing ? `${missing} (install with: ${INSTALL})` : null;
}

function missingPostgres15(): string | null {
  const absent = ['initdb', 'pg_ctl', 'pg_dump', 'psql'].filter((b) => !existsSync(path.join(PG_BIN, b)));
  return absent.length ? `PostgreSQL 15 binaries missing in ${PG_BIN}: ${absent.join(', ')}` : null;
}

function missingBucardo(): string | null {
  const missing: string[] = [];
  if (!findOnPath('bucardo')) missing.push('bucardo (package bucardo)');
  if (!existsSync('/usr/lib/postgresql/15/lib/plperl.so'))
    missing.push('PL/Perl for PostgreSQL 15 (postgresql-plperl-15)');
  if (!perlHas('DBD::Pg')) missing.push('perl DBD::Pg (libdbd-pg-perl)');
  return missing.length ? `missing ${missing.join(', ')}` : null;
}

function findOnPath(bin: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, bin);
    if (dir && existsSync(p)) return p;
  }
  return null;
}

function perlHas(module: string): boolean {
  try {
    execFileSync('perl', [`-M${module}`, '-e1'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The PostgreSQL 15 cluster

type Cluster = {
  dir: string;
  port: number;
  url: (db: string) => string;
  query: (db: string, sql: string, params?: unknown[]) => Promise<pg.QueryResult>;
  /** Registered by the phases, run (newest first) by stop(), even on failure. */
  cleanups: (() => Promise<void>)[];
  stop: () => Promise<void>;
};

const asRoot = process.getuid?.() === 0;

/** A command as the cluster's OS user: `postgres` when we are root (initdb refuses root). */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startCluster(): Promise<Cluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bucardo-'));
  const data = path.join(dir, 'data');
  const cleanups: (() => Promise<void>)[] = [];
  let started = false;
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch((e) => console.error(`cleanup: ${e}`));
    if (started)
      await run$(...asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', 'fast', '-w', 'stop'])).catch((e) =>
        console.error(`pg_ctl stop: ${e}`),
      );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    if (asRoot) {
      const uid = Number((await run$('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run$('id', ['-g', 'postgres'])).stdout.trim());
      await chown(dir, uid, gid);
    }
    await chmod(dir, 0o755);
    await run$(
      ...asPostgres(`${PG_BIN}/initdb`, [
        '-D',
        data,
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--locale=C',
      ]),
    );
    const port = await freePort();
    await appendFile(
      path.join(data, 'postgresql.conf'),
      [
        `port = ${port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${dir}'`,
        'wal_level = logical',
        'max_replication_slots = 10',
        'max_wal_senders = 10',
        '',
      ].join('\n'),
    );
    await run$(
      ...asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-l', path.join(dir, 'pg.log'), '-w', 'start']),
    );
    started = true;
    const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
    const query = async (db: string, sql: string, params?: unknown[]) => {
      const c = new pg.Client({ connectionString: url(db) });
      await c.connect();
      try {
        return await c.query(sql, params);
      } finally {
        await c.end();
      }
    };
    return { dir, port, url, query, cleanups, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

const DDL = `create table contacts (id bigint primary key, email text not null, name text, company text,
  score numeric(12,2), active boolean, created_at timestamptz, updated_at timestamptz, note text, visits integer)`;

/** src_bucardo with ROWS rows; src_lockstep its copy; empty tables in dst_floor, dst_bucardo, dst_lockstep. */
async function prepareDatabases(c: Cluster) {
  await c.query('postgres', 'create database src_bucardo');
  await c.query('src_bucardo', DDL);
  await c.query(
    'src_bucardo',
    `insert into contacts select g, 'user' || g || '@example.com', 'Person ' || g, 'Company ' || (g % 1000), (g % 1000) / 7.0,
      g % 2 = 0, timestamptz '2026-01-01' + g * interval '1 minute', timestamptz '2026-02-01' + g * interval '1 second',
      'note ' || g, g % 97 from generate_series(1, ${ROWS}) g`,
  );
  await c.query('src_bucardo', 'vacuum analyze contacts');
  await c.query('postgres', 'create database src_lockstep template src_bucardo');
  await c.query('postgres', 'create database dst_floor');
  await c.query('dst_floor', DDL);
  for (const db of ['dst_bucardo', 'dst_lockstep'])
    await c.query('postgres', `create database ${db} template dst_floor`);
}

const HASH = `select count(*)::int as n, md5(string_agg(c::text, ',' order by id)) as h from contacts c`;

async function sameContent(c: Cluster, a: string, b: string) {
  const [x, y] = await Promise.all([c.query(a, HASH), c.query(b, HASH)]);
  return { equal: x.rows[0].h === y.rows[0].h && x.rows[0].n === y.rows[0].n, rows: y.rows[0].n as number };
}

/** The floor: pg_dump --data-only of the table piped into psql, PG 15 binaries. */
async function floor(c: Cluster): Promise<number> {
  const conn = `-h 127.0.0.1 -p ${c.port} -U postgres`;
  const t0 = performance.now();
  await run$('bash', [
    '-c',
    `set -o pipefail; ${PG_BIN}/pg_dump ${conn} -t contacts --data-only src_bucardo | ${PG_BIN}/psql -X -q -v ON_ERROR_STOP=1 ${conn} dst_floor`,
  ]);
  const ms = performance.now() - t0;
  const same = await sameContent(c, 'src_bucardo', 'dst_floor');
  if (!same.equal) throw new Error('floor copy differs from the source');
  return ms;
}

// ---------------------------------------------------------------------------------------------
// The client process (writes on the source, watches the target)

type Client = { call: <T>(op: string, args: Record<string, unknown>) => Promise<T>; close: () => void };

function startClient(): Client {
  const child: ChildProcess = fork(new URL('./side-by-side-client.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error) w?.reject(new Error(m.error));
    else w?.resolve(m.result);
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`client process exited (${code})`));
    waiting.clear();
  });
  return {
    call: <T>(op: string, args: Record<string, unknown>) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, op, args });
      }),
    close: () => {
      if (child.connected) child.disconnect();
      child.kill();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Memory, from /proc

type Proc = { pid: number; ppid: number; cmd: string };

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(entry), ppid, cmd });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** A field of /proc/<pid>/status or smaps_rollup in KiB (0 when the process is gone). */
function kib(pid: number, file: 'status' | 'smaps_rollup', field: string): number {
  try {
    const m = readFileSync(`/proc/${pid}/${file}`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Samples the summed PSS (proportional set size: shared pages split between their processes, so
 * PostgreSQL's shared buffers are not counted once per backend) of a set of processes; the peak.
 */
function pssSampler(select: (all: Proc[]) => number[], everyMs = 250) {
  let peak = 0;
  const sample = () => {
    const pids = select(processes());
    peak = Math.max(
      peak,
      pids.reduce((s, pid) => s + kib(pid, 'smaps_rollup', 'Pss'), 0),
    );
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The workload, the same for both

type Figures = {
  firstCopyMs: number;
  previewMs?: number;
  applyMs?: number;
  firstCopyEqual: boolean;
  bulkUpdateMs: number | null;
  bulkInsertMs: number | null;
  single: number[];
  singleMissed: number;
  insertsRunningMs: number;
  insertsStoppedMs: number;
  insertsPlainMs: number;
  finalEqual: boolean;
  /** KiB: the sync's own process(es). */
  rssKiB: number;
  rssNote: string;
  /** KiB: peak summed PSS of the sync's processes and its own database's processes. */
  pssKiB: number;
  pssNote: string;
};

/** (a) (b) (c) and the running half of (d), with the sync running. */
async function changesWhileRunning(
  c: Cluster,
  client: Client,
  src: string,
  dst: string,
  /** Waits until the sync has nothing left to do from the step before. */
  settle: () => Promise<void>,
) {
  const urls = { src: c.url(src), dst: c.url(dst) };
  await settle();
  const bulkUpdateMs = await client.call<number | null>('bulkUpdate', {
    ...urls,
    from: 1,
    to: BULK,
    timeoutMs: BULK_TIMEOUT_MS,
  });
  await settle();
  const bulkInsertMs = await client.call<number | null>('bulkInsert', {
    ...urls,
    from: ROWS + 1,
    n: BULK,
    timeoutMs: BULK_TIMEOUT_MS,
  });
  await settle();
  const times = await client.call<(number | null)[]>('singleUpdates', {
    ...urls,
    n: SINGLE_UPDATES,
    rows: ROWS,
    spacingMs: 50,
    timeoutMs: 10_000,
  });
  const single = times.filter((t): t is number => t !== null);
  // The same autocommit inserts into the trigger-free copy in dst_floor, then into the source.
  await settle();
  const insertsPlainMs = await client.call<number>('autocommitInserts', {
    url: c.url('dst_floor'),
    from: 10_000_000 + (src.includes('lockstep') ? 1_000_000 : 0),
    n: AUTOCOMMIT_INSERTS,
  });
  await settle();
  const insertsRunningMs = await client.call<number>('autocommitInserts', {
    url: urls.src,
    from: 2_000_000,
    n: AUTOCOMMIT_INSERTS,
  });
  return {
    bulkUpdateMs,
    bulkInsertMs,
    single,
    singleMissed: times.length - single.length,
    insertsPlainMs,
    insertsRunningMs,
  };
}

/** Waits until the target holds what the source holds (after the autocommit inserts); false on timeout. */
async function caughtUp(c: Cluster, src: string, dst: string, timeoutMs = BULK_TIMEOUT_MS) {
  try {
    await waitFor(async () => (await sameContent(c, src, dst)).equal, timeoutMs, 200);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Bucardo

async function measureBucardo(c: Cluster, client: Client): Promise<Figures> {
  const home = path.join(c.dir, 'bucardo-home');
  const piddir = path.join(c.dir, 'bucardo-run');
  const logdir = path.join(c.dir, 'bucardo-log');
  for (const d of [home, piddir, logdir]) await mkdir(d, { recursive: true });
  const rc = path.join(c.dir, 'bucardorc');
  await writeFile(
    rc,
    `dbhost = 127.0.0.1\ndbport = ${c.port}\ndbname = bucardo\ndbuser = bucardo\npiddir = ${piddir}\nlogdest = ${logdir}\n`,
  );
  // HOME: `bucardo install` appends the new role's password to ~/.pgpass.
  const env = { ...process.env, HOME: home, PGBINDIR: PG_BIN };
  const bucardo = async (...args: string[]) => {
    try {
      return (await run$('bucardo', ['--bucardorc', rc, ...args], { env, cwd: c.dir })).stdout;
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`bucardo ${args.join(' ')}: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  };
  const bucardoPids = () =>
    processes()
      .filter((p) => p.cmd.includes('Bucardo'))
      .map((p) => p.pid);
  const stopBucardo = async () => {
    await bucardo('stop').catch((e) => console.error(String(e)));
    await waitFor(async () => bucardoPids().length === 0, 30_000, 100).catch(() => {
      for (const pid of bucardoPids()) process.kill(pid, 'SIGKILL');
    });
  };
  let running = false;
  c.cleanups.push(async () => {
    if (running) await stopBucardo();
  });

  await bucardo('install', '--batch', '--dbuser', 'postgres', '--dbname', 'postgres');
  const dbArgs = ['host=127.0.0.1', `port=${c.port}`, 'user=postgres'];
  await bucardo('add', 'db', 'src_b', 'dbname=src_bucardo', ...dbArgs);
  await bucardo('add', 'db', 'dst_b', 'dbname=dst_bucardo', ...dbArgs);
  await bucardo('add', 'table', 'public.contacts', 'db=src_b', 'relgroup=bench');
  await bucardo('add', 'sync', 'bench', 'relgroup=bench', 'dbs=src_b:source,dst_b:target', 'onetimecopy=2');

  // Bucardo's Perl processes, and the backends of its own `bucardo` database.
  const pss = pssSampler((all) =>
    all
      .filter((p) => p.cmd.includes('Bucardo') || p.cmd.startsWith('postgres: bucardo bucardo '))
      .map((p) => p.pid),
  );
  const t0 = performance.now();
  running = true;
  await bucardo('start');
  await waitFor(
    async () =>
      Number((await c.query('dst_bucardo', 'select count(*) from contacts')).rows[0].count) === ROWS,
    FIRST_COPY_TIMEOUT_MS,
    5,
  );
  const firstCopyMs = performance.now() - t0;
  const firstCopyEqual = (await sameContent(c, 'src_bucardo', 'dst_bucardo')).equal;

  // Bucardo has no "idle" to ask for: the target equal to the source, then a second for its kid.
  const settle = async () => {
    await caughtUp(c, 'src_bucardo', 'dst_bucardo');
    await sleep(1000);
  };
  const changes = await changesWhileRunning(c, client, 'src_bucardo', 'dst_bucardo', settle);
  const finalEqual = await caughtUp(c, 'src_bucardo', 'dst_bucardo');
  const perl = processes().filter((p) => p.cmd.includes('Bucardo'));
  const rssKiB = perl.reduce((s, p) => s + kib(p.pid, 'status', 'VmHWM'), 0);
  const pssKiB = pss.stop();
  await stopBucardo();
  running = false;
  const insertsStoppedMs = await client.call<number>('autocommitInserts', {
    url: c.url('src_bucardo'),
    from: 3_000_000,
    n: AUTOCOMMIT_INSERTS,
  });
  return {
    firstCopyMs,
    firstCopyEqual,
    ...changes,
    insertsStoppedMs,
    finalEqual,
    rssKiB,
    rssNote: `sum of VmHWM of the ${perl.length} Bucardo Perl processes alive at the end (${perl.map((p) => p.cmd.split('.')[0]).join('; ')})`,
    pssKiB,
    pssNote: 'Bucardo Perl processes + backends of its `bucardo` database, sampled every 250 ms',
  };
}

// ---------------------------------------------------------------------------------------------
// Lockstep

async function measureLockstep(c: Cluster, client: Client): Promise<Figures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bench-'));
  const port = await freePort();
  const config = loadConfig({ LOCKSTEP_DATA_DIR: dir, LOCKSTEP_LOG_LEVEL: 'silent', PORT: String(port) }, [
    'node',
    'bench',
    '--role=all',
  ]);
  const booted = await boot(config, () => {}, { runWorkers: true });
  const { ctx } = booted;
  const app = await buildApp(ctx);
  c.cleanups.push(async () => {
    await app.close();
    await booted.close();
    await rm(dir, { recursive: true, force: true });
  });

  const origin = { origin: `http://localhost:${port}`, 'content-type': 'application/json' };
  const signUp = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    headers: origin,
    payload: { email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' },
  });
  const cookie = [signUp.headers['set-cookie']]
    .flat()
    .filter((x): x is string => typeof x === 'string')
    .map((x) => x.split(';')[0])
    .join('; ');
  const token = (await app.inject({ url: '/api/auth/token', headers: { cookie } })).json().token as string;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const call = async (method: 'POST' | 'PATCH' | 'GET', u: string, payload?: object) => {
    const res = await app.inject({
      method,
      url: u,
      headers: payload ? auth : { authorization: auth.authorization },
      ...(payload ? { payload } : {}),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${u}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  await call('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  const left = await call('POST', '/rest/external-connections', {
    type: 'postgresql',
    connectionItems: { connectionString: c.url('src_lockstep'), changeCapture: 'triggers' },
  });
  const right = await call('POST', '/rest/external-connections', {
    type: 'postgresql',
    connectionItems: { connectionString: c.url('dst_lockstep'), changeCapture: 'triggers' },
  });
  const core = await call('POST', '/rest/core-bases', { name: 'bucardo side by side' });
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
  const col = (t: { externalColumns: { name: string; id: string }[] }, n: string) =>
    t.externalColumns.find((x) => x.name === n)?.id as string;
  const cols = [
    'id',
    'email',
    'name',
    'company',
    'score',
    'active',
    'created_at',
    'updated_at',
    'note',
    'visits',
  ];
  // One way, source to target, as the Bucardo sync.
  await call('PATCH', `/rest/core-bases/${core.id}`, {
    mappings: {
      tableMappings: [
        {
          leftTableId: lt.id,
          rightTableId: rt.id,
          syncDirection: 'left_to_right',
          columnMappings: cols.map((x) => ({ leftColumnId: col(lt, x), rightColumnId: col(rt, x) })),
        },
      ],
    },
  });

  // This process, and Lockstep's embedded PostgreSQL (the postmaster in <dir>/pg and its children).
  const postmaster = Number(readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const embeddedPids = (all: Proc[]) =>
    all.filter((p) => p.pid === postmaster || p.ppid === postmaster).map((p) => p.pid);
  const pss = pssSampler((all) => [process.pid, ...embeddedPids(all)]);

  // The user's path: preview, wait for review, apply, wait until done.
  const previewUntil = async (id: string, statuses: string[]) => {
    let p: { status: string; summary?: unknown } = { status: '' };
    await waitFor(
      async () => {
        p = await call('GET', `/rest/sync-preview/${id}`);
        return statuses.includes(p.status);
      },
      FIRST_COPY_TIMEOUT_MS,
      50,
    );
    return p;
  };
  const t0 = performance.now();
  const created = await call('POST', '/rest/sync-preview/create', { coreBaseId: core.id });
  const reviewed = await previewUntil(created.id, ['in_review', 'planning_problem', 'download_failed']);
  const previewMs = performance.now() - t0;
  if (reviewed.status !== 'in_review')
    throw new Error(`preview ended ${reviewed.status}: ${JSON.stringify(reviewed.summary)}`);
  const t1 = performance.now();
  await call('PATCH', `/rest/sync-preview/${created.id}`, { status: 'applying' });
  const applied = await previewUntil(created.id, ['done', 'applying_failed']);
  const applyMs = performance.now() - t1;
  if (applied.status !== 'done')
    throw new Error(`apply ended ${applied.status}: ${JSON.stringify(applied.summary)}`);
  const firstCopyEqual = (await sameContent(c, 'src_lockstep', 'dst_lockstep')).equal;
  await quiet(ctx.db, core.id);

  const settle = async () => {
    await caughtUp(c, 'src_lockstep', 'dst_lockstep');
    await quiet(ctx.db, core.id);
  };
  const changes = await changesWhileRunning(c, client, 'src_lockstep', 'dst_lockstep', settle);
  const finalEqual = await caughtUp(c, 'src_lockstep', 'dst_lockstep');
  const pssKiB = pss.stop();
  const rssKiB = process.resourceUsage().maxRSS;
  const embeddedHwm = embeddedPids(processes()).reduce((s, pid) => s + kib(pid, 'status', 'VmHWM'), 0);
  await quiet(ctx.db, core.id);
  await call('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'off' });
  await quiet(ctx.db, core.id);
  const insertsStoppedMs = await client.call<number>('autocommitInserts', {
    url: c.url('src_lockstep'),
    from: 3_000_000,
    n: AUTOCOMMIT_INSERTS,
  });
  return {
    firstCopyMs: previewMs + applyMs,
    previewMs,
    applyMs,
    firstCopyEqual,
    ...changes,
    insertsStoppedMs,
    finalEqual,
    rssKiB,
    rssNote: `maxRSS of this node process (Lockstep's server, workers and listener; the bench's orchestration too); its embedded PostgreSQL's processes add ${Math.round(embeddedHwm / 1024)} MiB summed VmHWM (shared buffers counted per process)`,
    pssKiB,
    pssNote: 'this node process + its embedded PostgreSQL, sampled every 250 ms',
  };
}

// ---------------------------------------------------------------------------------------------
// The report

function report(floorMs: number, cleanInsertsMs: number, b: Figures | null, l: Figures | null): BenchRow[] {
  const perInsert = (ms: number) => (ms * 1000) / (AUTOCOMMIT_INSERTS - 1);
  type Line = {
    name: string;
    unit: string;
    get: (f: Figures) => number | null | undefined;
    note?: (f: Figures) => string;
  };
  const lines: Line[] = [
    {
      name: `first copy, ${ROWS} rows x 10 columns (Lockstep: preview + apply)`,
      unit: 'ms',
      get: (f) => f.firstCopyMs,
      note: (f) =>
        `content ${f.firstCopyEqual ? 'equal (md5)' : 'DIFFERS'}; floor pg_dump | psql ${Math.round(floorMs)} ms`,
    },
    { name: 'first copy throughput', unit: 'rows/s', get: (f) => ROWS / (f.firstCopyMs / 1000) },
    { name: 'first copy / pg_dump | psql floor', unit: 'x', get: (f) => f.firstCopyMs / floorMs },
    { name: 'Lockstep preview (create -> in_review)', unit: 'ms', get: (f) => f.previewMs },
    { name: 'Lockstep apply (applying -> done)', unit: 'ms', get: (f) => f.applyMs },
    {
      name: `${BULK}-row UPDATE in one transaction, commit -> all visible`,
      unit: 'ms',
      get: (f) => f.bulkUpdateMs,
    },
    {
      name: `${BULK}-row INSERT in one transaction, commit -> all visible`,
      unit: 'ms',
      get: (f) => f.bulkInsertMs,
    },
    {
      name: `single-row update latency p50 (${SINGLE_UPDATES} updates)`,
      unit: 'ms',
      get: (f) => (f.single.length ? percentile(f.single, 50) : null),
      note: (f) => (f.singleMissed ? `${f.singleMissed} not seen within 10 s` : 'all seen'),
    },
    {
      name: 'single-row update latency p95',
      unit: 'ms',
      get: (f) => (f.single.length ? percentile(f.single, 95) : null),
      note: (f) => (f.single.length ? `max ${Math.max(...f.single).toFixed(1)} ms` : ''),
    },
    {
      name: `writer: ${AUTOCOMMIT_INSERTS} autocommit INSERTs, sync running`,
      unit: 'us/insert',
      get: (f) => perInsert(f.insertsRunningMs),
    },
    {
      name: 'writer: same, sync stopped (its triggers still there)',
      unit: 'us/insert',
      get: (f) => perInsert(f.insertsStoppedMs),
    },
    {
      name: 'writer: same into a trigger-free copy (dst_floor), sync running',
      unit: 'us/insert',
      get: (f) => perInsert(f.insertsPlainMs),
    },
    {
      name: 'writer slowdown, running / stopped',
      unit: 'x',
      get: (f) => f.insertsRunningMs / f.insertsStoppedMs,
    },
    {
      name: 'writer slowdown, running / trigger-free',
      unit: 'x',
      get: (f) => f.insertsRunningMs / f.insertsPlainMs,
      note: (f) =>
        `target ${f.finalEqual ? 'caught up, content equal (md5)' : 'NOT equal to the source after 5 min'}`,
    },
    {
      name: 'peak RSS of the sync process(es)',
      unit: 'MiB',
      get: (f) => f.rssKiB / 1024,
      note: (f) => f.rssNote,
    },
    {
      name: 'peak PSS, sync + its own metadata database',
      unit: 'MiB',
      get: (f) => f.pssKiB / 1024,
      note: (f) => f.pssNote,
    },
  ];
  const rows: BenchRow[] = [];
  const table: string[][] = [];
  const fmt = (v: number | null | undefined) =>
    v === null || v === undefined || !Number.isFinite(v)
      ? '-'
      : v >= 100
        ? Math.round(v).toLocaleString('en-US')
        : v.toFixed(2);
  for (const line of lines) {
    const bv = b ? line.get(b) : null;
    const lv = l ? line.get(l) : null;
    const ratio = typeof bv === 'number' && typeof lv === 'number' && bv !== 0 ? lv / bv : null;
    table.push([line.name, line.unit, fmt(bv), fmt(lv), ratio === null ? '-' : `${ratio.toFixed(2)}x`]);
    if (typeof bv === 'number')
      rows.push({
        name: `Bucardo 5.6: ${line.name}`,
        value: bv,
        unit: line.unit,
        note: b && line.note ? line.note(b) : undefined,
      });
    if (typeof lv === 'number')
      rows.push({
        name: `Lockstep: ${line.name}`,
        value: lv,
        unit: line.unit,
        note: l && line.note ? line.note(l) : undefined,
      });
    if (ratio !== null) rows.push({ name: `Lockstep/Bucardo: ${line.name}`, value: ratio, unit: 'x' });
  }
  rows.unshift(
    { name: `pg_dump --data-only | psql floor, ${ROWS} rows`, value: floorMs, unit: 'ms' },
    {
      name: `writer: ${AUTOCOMMIT_INSERTS} autocommit INSERTs into a trigger-free copy, no sync process up`,
      value: perInsert(cleanInsertsMs),
      unit: 'us/insert',
    },
  );
  console.log(
    `\nSide by side, ${ROWS} rows (pg_dump | psql floor: ${Math.round(floorMs)} ms; writer on a trigger-free copy with no sync process up: ${perInsert(cleanInsertsMs).toFixed(0)} us/insert)\n`,
  );
  const widths = [0, 1, 2, 3, 4].map((i) =>
    Math.max(
      ...[['figure', 'unit', 'Bucardo 5.6', 'Lockstep', 'Lockstep/Bucardo'], ...table].map(
        (r) => (r[i] as string).length,
      ),
    ),
  );
  const row = (r: string[]) => `| ${r.map((x, i) => x.padEnd(widths[i] as number)).join(' | ')} |`;
  console.log(row(['figure', 'unit', 'Bucardo 5.6', 'Lockstep', 'Lockstep/Bucardo']));
  console.log(row(widths.map((w) => '-'.repeat(w))));
  for (const r of table) console.log(row(r));
  console.log('');
  return rows;
}

await runStandalone(import.meta.url, run);
