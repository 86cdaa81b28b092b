import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { STUCK_AFTER_MS } from '../../jobs/reap-stuck-syncs';
import { SYNC_RUN } from '../../jobs/sync-run';

// The operator's views of the job queue and of runs that stopped responding, with workers running.
let t: TestApp;
let staff: Record<string, string>;
let user: { auth: Record<string, string>; userId: string };

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_STAFF_EMAILS: 'ops@lockstep.test' });
  staff = (await signUp(t.app, 'ops@lockstep.test', 'Olga Ops')).auth;
  user = await signUp(t.app, 'someone@example.test');
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, 'content-type': 'application/json' },
    payload: { productType: 'enterprise' },
  });
});
afterAll(async () => t?.close());

const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>) =>
  t.app.inject({
    method,
    url,
    headers: method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers,
    ...(method === 'POST' ? { payload: {} } : {}),
  });

describe('operator tools', () => {
  it('lists every queue with its jobs by state, what it got through and what waits longest, and the live workers', async () => {
    await t.ctx.boss.send(
      SYNC_RUN,
      { coreBaseId: '00000000-0000-4000-8000-000000000000', trigger: 'test' },
      { startAfter: 3600 },
    );
    const res = await call('GET', '/rest/debug/queues', staff);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const run = body.queues.find((q: { name: string }) => q.name === SYNC_RUN);
    expect(run).toMatchObject({ created: expect.any(Number), active: expect.any(Number) });
    expect(run.created).toBeGreaterThanOrEqual(1);
    expect(Date.parse(run.oldestWaitingAt)).toBeLessThanOrEqual(Date.now());
    expect(body.queues.map((q: { name: string }) => q.name)).toEqual(
      expect.arrayContaining(['drift-check', 'schedule-due-syncs']),
    );
    // This test app runs its workers in process: one liveness lock is held.
    expect(body.workersAlive).toBeGreaterThanOrEqual(1);
    expect((await call('GET', '/rest/debug/queues', user.auth)).statusCode).toBe(403);
  });

  it('restarts a stuck run: the run ends as failed and its sync is queued again; a live run cannot be', async () => {
    const sync = (
      await t.app.inject({
        method: 'POST',
        url: '/rest/core-bases',
        headers: { ...user.auth, 'content-type': 'application/json' },
        payload: { name: 'Stuck' },
      })
    ).json();
    const old = new Date(Date.now() - STUCK_AFTER_MS - 60_000);
    const stuck = await t.ctx.db
      .insertInto('sync_log')
      .values({
        owner_id: user.userId,
        core_base_id: sync.id,
        status: 'running',
        trigger: 'test',
        started_at: old,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const fresh = await t.ctx.db
      .insertInto('sync_log')
      .values({ owner_id: user.userId, core_base_id: sync.id, status: 'running', trigger: 'test' })
      .returning('id')
      .executeTakeFirstOrThrow();

    const listed = (await call('GET', '/rest/debug/stuck-syncs', staff)).json();
    expect(listed.items.map((i: { syncLogId: string }) => i.syncLogId)).toEqual([stuck.id]);
    expect((await call('POST', `/rest/debug/stuck-syncs/${stuck.id}/restart`, user.auth)).statusCode).toBe(
      403,
    );
    expect((await call('POST', `/rest/debug/stuck-syncs/${fresh.id}/restart`, staff)).statusCode).toBe(404);

    const restarted = await call('POST', `/rest/debug/stuck-syncs/${stuck.id}/restart`, staff);
    expect(restarted.statusCode).toBe(200);
    expect(restarted.json()).toMatchObject({ coreBaseId: sync.id });
    const row = await t.ctx.db
      .selectFrom('sync_log')
      .select(['status', 'error'])
      .where('id', '=', stuck.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', error: expect.stringMatching(/Restarted by staff/) });
    const queued = await t.ctx.db
      .selectFrom('pgboss.job' as never)
      .select(['state' as never])
      .where('name' as never, '=', SYNC_RUN as never)
      .where('singleton_key' as never, '=', sync.id as never)
      .execute();
    expect(queued.length).toBeGreaterThanOrEqual(1);
    expect((await call('GET', '/rest/debug/stuck-syncs', staff)).json().items).toEqual([]);
  });

  it('finds users by a term in the path, for staff only', async () => {
    const found = await call('GET', '/rest/users/search/someone?take=5', staff);
    expect(found.statusCode).toBe(200);
    expect(found.json()).toMatchObject({ total: 1, items: [{ email: 'someone@example.test' }] });
    expect((await call('GET', '/rest/users/search/someone', user.auth)).statusCode).toBe(403);
  });

  it("deletes a user's syncs for testing, with everything they own; refused to users and in production", async () => {
    await t.app.inject({
      method: 'POST',
      url: '/rest/core-bases',
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: { name: 'To be cleared' },
    });
    const before = await t.ctx.db
      .selectFrom('core_base')
      .select('id')
      .where('owner_id', '=', user.userId)
      .execute();
    expect(before.length).toBeGreaterThanOrEqual(1);
    const asUser = await t.app.inject({
      method: 'POST',
      url: '/rest/debug/delete-all-bases',
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: {},
    });
    expect(asUser.statusCode).toBe(403);
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/debug/delete-all-bases',
      headers: { ...staff, 'content-type': 'application/json' },
      payload: { userId: user.userId },
    });
    expect(res.json()).toEqual({ deleted: before.length });
    expect(
      await t.ctx.db.selectFrom('core_base').select('id').where('owner_id', '=', user.userId).execute(),
    ).toEqual([]);

    const production = await createTestApp({
      LOCKSTEP_ENV: 'production',
      LOCKSTEP_STAFF_EMAILS: 'ops@lockstep.test',
      LOCKSTEP_EMAIL_VERIFICATION: 'off',
    });
    try {
      const prodStaff = (await signUp(production.app, 'ops@lockstep.test', 'Olga Ops')).auth;
      const refused = await production.app.inject({
        method: 'POST',
        url: '/rest/debug/delete-all-bases',
        headers: { ...prodStaff, 'content-type': 'application/json' },
        payload: {},
      });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().response.userFacingMessage).toMatch(/refused in production/);
    } finally {
      await production.close();
    }
  });
});
