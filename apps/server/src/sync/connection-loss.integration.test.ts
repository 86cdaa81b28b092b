import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// PostgreSQL terminates every connection of Lockstep's own database and of a synced database (a
// restart, an admin's pg_terminate_backend): a real `--role=worker` process must stay up, and a
// change made afterwards must still reach the other side in real time (the LISTENs come back).
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '', lockstep: '' };
const secretKey = randomBytes(32).toString('base64');
const authSecret = 'test-secret-test-secret-test-secret-0000';
let worker: ChildProcess | null = null;
let workerOutput = '';

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
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Kept to explain a crash in the failure message.
  child.stdout?.on('data', (d) => {
    workerOutput += String(d);
  });
  child.stderr?.on('data', (d) => {
    workerOutput += String(d);
  });
  return child;
}

const terminateOthers = (url: string) =>
  query(
    url,
    'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await check()) return true;
  }
  return check();
}

const ROWS = 20_000;
const count = async () => Number((await query(urls.right, 'select count(*)::int as n from people'))[0]?.n);

/** No run of the sync going, and none queued or waiting to be retried. */
const idle = async (coreBaseId: string) => {
  const running = await query(
    urls.lockstep,
    `select 1 from sync_log where core_base_id = $1 and status = 'running'`,
    [coreBaseId],
  );
  const queued = await query(
    urls.lockstep,
    `select 1 from pgboss.job where name = 'sync-run' and singleton_key = $1 and state in ('created', 'retry', 'active')`,
    [coreBaseId],
  );
  return running.length === 0 && queued.length === 0;
};

const arrived = (email: string) => async () =>
  (await query(urls.right, 'select 1 from people where email = $1', [email])).length > 0;

beforeAll(async () => {
  t = await createTestApp(
    { LOCKSTEP_SECRET_KEY: secretKey, BETTER_AUTH_SECRET: authSecret },
    { runWorkers: false },
  );
  urls.lockstep = databaseUrl(String((await t.ctx.pool.query('select current_database() as d')).rows[0].d));
  api = apiAs(t.app, (await signUp(t.app, 'loss@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `loss_${side}_${suffix}`);
    urls[side] = databaseUrl(`loss_${side}_${suffix}`);
    await query(
      urls[side],
      'create table people (id serial primary key, email text not null unique, name text)',
    );
  }
  await query(
    urls.left,
    `insert into people (email, name) select 'p' || g || '@example.com', 'Person ' || g from generate_series(1, ${ROWS}) g`,
  );
});

afterAll(async () => {
  worker?.kill('SIGKILL');
  await t.close();
});

describe('PostgreSQL terminating the connections', () => {
  it('leaves the worker running, and later changes still sync in real time', async () => {
    const core = await setUpPeopleSync(api, urls, { name: 'Connection loss' });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    worker = startWorker();

    // In the middle of the first run: connections are checked out of every pool, mid-query.
    expect(await waitFor(async () => (await count()) > 0, 60_000)).toBe(true);
    await Promise.all([urls.lockstep, urls.left, urls.right].map(terminateOthers));
    await waitFor(async () => false, 2_000);
    expect(worker.exitCode, workerOutput).toBeNull();
    expect(worker.signalCode, workerOutput).toBeNull();
    // The run is tried again and the table arrives whole.
    expect(await waitFor(async () => (await count()) === ROWS, 90_000), workerOutput).toBe(true);

    // Idle now (the run that wrote the last rows has ended and nothing is queued: a run cut here
    // would be retried after the queue's backoff, which is not what this checks): what follows
    // reaches the right side in time only if the LISTENs came back (the schedule's safety net runs
    // once a minute).
    expect(await waitFor(() => idle(core.id), 30_000), workerOutput).toBe(true);
    await terminateOthers(urls.lockstep);
    await terminateOthers(urls.left);
    await terminateOthers(urls.right);
    // Long enough for every kind of crash to happen, and for the listeners to come back.
    await waitFor(async () => false, 3_000);
    expect(worker.exitCode, workerOutput).toBeNull();
    expect(worker.signalCode).toBeNull();

    // A new address per attempt: vitest's retry runs this again on the same tables.
    const after = `after-${Date.now()}@example.com`;
    await query(urls.left, `insert into people (email, name) values ($1, 'After')`, [after]);
    // Within the listener's backoff, well before the 15 s refresh or the minute's schedule.
    expect(await waitFor(arrived(after), 10_000), workerOutput).toBe(true);
    expect(worker.exitCode, workerOutput).toBeNull();
  }, 200_000);
});
