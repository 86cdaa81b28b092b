import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// A worker process killed (SIGKILL) in the middle of a first sync between two real PostgreSQL
// databases, and a new worker started: the run resumes from what was recorded, and every row
// arrives exactly once. The API runs in this process; the workers are real `--role=worker` servers.
const ROWS = 12_000;
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '', lockstep: '' };
const secretKey = randomBytes(32).toString('base64');
const authSecret = 'test-secret-test-secret-test-secret-0000';
const workers: ChildProcess[] = [];

const sql = query;

function startWorker(): ChildProcess {
  const server = path.resolve(import.meta.dirname, '..');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(server, 'main.ts'), '--role=worker'], {
    cwd: path.resolve(server, '..'),
    env: {
      ...process.env,
      DATABASE_URL: urls.lockstep,
      LOCKSTEP_ENV: 'test',
      LOCKSTEP_SECRET_KEY: secretKey,
      BETTER_AUTH_SECRET: authSecret,
      LOCKSTEP_LOG_LEVEL: 'silent',
      // Long on purpose: the queue's heartbeat monitor cannot rescue the run within the test's
      // bound, so only the liveness takeover (seconds) can.
      LOCKSTEP_RUN_HEARTBEAT_SECONDS: '120',
      LOCKSTEP_SUPERVISE_SECONDS: '2',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.resume();
  child.stderr?.resume();
  workers.push(child);
  return child;
}

const count = async () => Number((await sql(urls.right, 'select count(*)::int as n from people'))[0]?.n);

beforeAll(async () => {
  t = await createTestApp(
    { LOCKSTEP_SECRET_KEY: secretKey, BETTER_AUTH_SECRET: authSecret },
    { runWorkers: false },
  );
  await t.ctx.boss.updateQueue('sync-run', { heartbeatSeconds: 120 });
  urls.lockstep = databaseUrl(String((await t.ctx.pool.query('select current_database() as d')).rows[0].d));
  api = apiAs(t.app, (await signUp(t.app, 'crash@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `crash_${side}_${suffix}`);
    urls[side] = databaseUrl(`crash_${side}_${suffix}`);
    await sql(
      urls[side],
      'create table people (id serial primary key, email text not null unique, name text)',
    );
  }
  await sql(
    urls.left,
    `insert into people (email, name) select 'p' || g || '@example.com', 'Person ' || g from generate_series(1, ${ROWS}) g`,
  );
});

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await t.close();
});

describe('a worker killed mid-run', () => {
  it('loses nothing and duplicates nothing once another worker takes over', async () => {
    // An empty target each attempt: a retried attempt must not find the first one's rows.
    await sql(urls.right, 'truncate people');
    for (const w of workers.splice(0)) w.kill('SIGKILL');
    const core = await setUpPeopleSync(api, urls, { name: 'Crash test' });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });

    // The first worker starts the run; it is killed once part of the table has arrived.
    const first = startWorker();
    for (let i = 0; i < 3000 && (await count()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const atKill = await count();
    first.kill('SIGKILL');
    const killedAt = Date.now();
    expect(atKill).toBeGreaterThan(0);
    expect(atKill).toBeLessThan(ROWS);

    // A new worker sees the dead one's liveness lock gone and takes its run over at once.
    startWorker();
    const finished = async () =>
      (
        await t.ctx.db
          .selectFrom('sync_log')
          .select('id')
          .where('core_base_id', '=', core.id)
          .where('status', '=', 'done')
          .execute()
      ).length > 0;
    for (let i = 0; i < 1800 && !(await finished()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await finished()).toBe(true);
    // Resumed in seconds: a worker's start, the takeover (~2.5 s) and the rest of the copy, far
    // below the 120 s heartbeat the queue would otherwise wait for.
    expect(Date.now() - killedAt).toBeLessThan(40_000);
    const rows = await sql(
      urls.right,
      'select count(*)::int as n, count(distinct email)::int as d from people',
    );
    expect(rows[0]).toEqual({ n: ROWS, d: ROWS });
    // Every row linked once; the left side got nothing back (no echo, no duplicate).
    const links = await t.ctx.db
      .selectFrom('core_meta_record')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('core_base_id', '=', core.id)
      .executeTakeFirstOrThrow();
    expect(Number(links.n)).toBe(ROWS);
    expect(Number((await sql(urls.left, 'select count(*)::int as n from people'))[0]?.n)).toBe(ROWS);
  }, 240_000);
});
