import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ensureDatabase } from '../apps/server/src/db/database';
import { startEmbeddedPostgres } from '../apps/server/src/db/embedded-postgres';

const SERVER = path.resolve(import.meta.dirname, '../apps/server/src/main.ts');

/** The table synced both ways; `email` is not unique, so a duplicated record would show. */
export const DDL = `create table contacts (
  id bigint primary key, email text not null, name text, score integer, note text,
  updated timestamptz not null default now())`;
export const COLUMNS = ['id', 'email', 'name', 'score', 'note', 'updated'] as const;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/**
 * One real PostgreSQL server (the embedded binaries, in a temp dir) holding Lockstep's own database
 * and the two synced ones, and Lockstep as real OS processes: one `--role=api`, one
 * `--role=worker`, which the faults kill with SIGKILL and start again.
 */
export async function startCluster() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-chaos-'));
  const embedded = await startEmbeddedPostgres(dir, () => {});
  const admin = embedded.url('postgres');
  for (const db of ['chaos_lockstep', 'chaos_a', 'chaos_b']) await ensureDatabase(admin, db);
  const urls = {
    lockstep: embedded.url('chaos_lockstep'),
    a: embedded.url('chaos_a'),
    b: embedded.url('chaos_b'),
  };
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: urls.lockstep,
    LOCKSTEP_ENV: 'test',
    LOCKSTEP_SECRET_KEY: randomBytes(32).toString('base64'),
    BETTER_AUTH_SECRET: randomBytes(24).toString('hex'),
    LOCKSTEP_PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOCKSTEP_LOG_LEVEL: 'silent',
    LOCKSTEP_RUN_HEARTBEAT_SECONDS: '10',
    LOCKSTEP_SUPERVISE_SECONDS: '2',
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  const processes: Record<'api' | 'worker', ChildProcess | null> = { api: null, worker: null };
  const logs: string[] = [];
  const start = (role: 'api' | 'worker') => {
    const child = spawn(process.execPath, ['--import', 'tsx', SERVER, `--role=${role}`], {
      cwd: path.dirname(SERVER),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (b: Buffer) => {
      logs.push(`[${role}] ${b.toString().trim()}`);
      if (logs.length > 200) logs.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    processes[role] = child;
    return child;
  };
  const base = `http://127.0.0.1:${port}`;
  async function apiUp(timeoutMs = 60_000) {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      const ok = await fetch(`${base}/health`).then(
        (r) => r.status < 500,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the api did not start:\n${logs.slice(-20).join('\n')}`);
  }
  return {
    urls,
    base,
    logs,
    start,
    apiUp,
    /** SIGKILL, then a new process of the same role at once. */
    async kill(role: 'api' | 'worker') {
      processes[role]?.kill('SIGKILL');
      start(role);
      if (role === 'api') await apiUp();
    },
    async stop() {
      for (const p of Object.values(processes)) p?.kill('SIGKILL');
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>;

/** REST calls as a user, over real HTTP to the api process (retried while it restarts). */
export async function signIn(base: string) {
  const origin = { origin: base, 'content-type': 'application/json' };
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: origin,
    body: JSON.stringify({ email: 'chaos@example.com', password: 'chaos-password-1', name: 'Chaos' }),
  });
  if (!up.ok) throw new Error(`sign-up: ${up.status} ${await up.text()}`);
  const cookie = up.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const token = (
    (await (await fetch(`${base}/api/auth/token`, { headers: { cookie } })).json()) as { token: string }
  ).token;
  return async function call(method: string, url: string, body?: object) {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
        return (await res.json()) as Record<string, unknown> & { id: string };
      } catch (error) {
        if (attempt >= 20 || (error instanceof Error && /: \d{3} /.test(error.message))) throw error;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
}

type Table = { id: string; externalColumns: { id: string; name: string }[] };

/** The sync a user would set up: both databases connected, contacts mapped field by field, on. */
export async function setUpSync(base: string, urls: { a: string; b: string }) {
  const call = await signIn(base);
  await call('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  const conn = async (url: string) =>
    call('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: url },
    });
  const [left, right] = [await conn(urls.a), await conn(urls.b)];
  const core = await call('POST', '/rest/core-bases', { name: 'Chaos' });
  for (const [side, c] of [
    ['left', left],
    ['right', right],
  ] as const)
    await call('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: side,
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: c.id,
      side,
    });
  const full = await call('GET', `/rest/core-bases/${core.id}?detailLevel=fullBaseSchema`);
  const lt = (full.leftExternalBase as { externalTables: Table[] }).externalTables[0] as Table;
  const rt = (full.rightExternalBase as { externalTables: Table[] }).externalTables[0] as Table;
  const col = (t: Table, n: string) => t.externalColumns.find((c) => c.name === n)?.id as string;
  await call('PATCH', `/rest/core-bases/${core.id}`, {
    mappings: {
      tableMappings: [
        {
          leftTableId: lt.id,
          rightTableId: rt.id,
          syncDirection: 'both',
          conflictWinnerSide: 'left',
          matchOnFieldId: col(lt, 'id'),
          columnMappings: COLUMNS.map((c) => ({ leftColumnId: col(lt, c), rightColumnId: col(rt, c) })),
        },
      ],
    },
  });
  await call('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
  return { coreBaseId: core.id, call };
}

export async function connect(url: string) {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}
