import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

let t: TestApp;
let staff: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_STAFF_EMAILS: 'Staff@Lockstep.test' });
  staff = await signUp(t.app, 'staff@lockstep.test', 'Stella Staff');
});
afterAll(async () => t.close());

const get = (url: string, headers: Record<string, string>) => t.app.inject({ url, headers });
const send = (
  method: 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  payload?: object,
) =>
  t.app.inject({
    method,
    url,
    headers: payload ? { ...headers, 'content-type': 'application/json' } : headers,
    ...(payload ? { payload } : {}),
  });

describe('users and plans', () => {
  it('returns the signed-in user with the fields of spec section 3', async () => {
    const u = await signUp(t.app, 'ada@example.test', 'Ada');
    const me = (await get('/rest/users/current', u.auth)).json();
    expect(me).toMatchObject({
      id: u.userId,
      displayName: 'Ada',
      email: 'ada@example.test',
      role: 'user',
      impersonatedBy: null,
      lockstepUser: {
        id: u.userId,
        mostRecentEmail: 'ada@example.test',
        experimentFlags: {},
        subscription: { status: 'none', daysRemaining: null, planDisplayName: 'No Plan' },
      },
    });
    expect(me.lockstepUser.intercomHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives no limits without a plan, and the tier limits after choosing one', async () => {
    const u = await signUp(t.app, 'bob@example.test');
    expect((await get('/rest/users/limit-data', u.auth)).json()).toEqual({
      baseCount: 0,
      recordCount: 0,
      baseLimit: 0,
      recordLimit: 0,
    });
    const chosen = await send('POST', '/rest/users/current/choose-plan', u.auth, {
      productType: 'startup_v2',
    });
    expect(chosen.json()).toEqual({
      status: 'trialing',
      daysRemaining: 14,
      planDisplayName: 'Startup',
      productType: 'startup_v2',
    });
    expect((await get('/rest/users/limit-data', u.auth)).json()).toEqual({
      baseCount: 0,
      recordCount: 0,
      baseLimit: 10,
      recordLimit: 100_000,
    });
    const again = await send('POST', '/rest/users/current/choose-plan', u.auth, {
      productType: 'enterprise',
    });
    expect(again.statusCode).toBe(409);
    expect((await get('/rest/users/current', u.auth)).json().lockstepUser.subscription.planDisplayName).toBe(
      'Startup',
    );
  });

  it("counts the user's own syncs and synced records", async () => {
    const u = await signUp(t.app, 'counter@example.test');
    const other = await signUp(t.app, 'other-counter@example.test');
    const base = await t.ctx.db
      .insertInto('core_base')
      .values({ owner_id: u.userId, config_extras: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.ctx.db.insertInto('core_base').values({ owner_id: other.userId, config_extras: '{}' }).execute();
    await t.ctx.db
      .insertInto('core_meta_record')
      .values([1, 2, 3].map(() => ({ core_base_id: base.id, owner_id: u.userId })))
      .execute();
    const limits = (await get('/rest/users/limit-data', u.auth)).json();
    expect(limits).toMatchObject({ baseCount: 1, recordCount: 3 });
    // The count is kept as links come and go: another user's links, deletes, and a sync deleted
    // with its links (a cascade) all move it.
    const second = await t.ctx.db
      .insertInto('core_base')
      .values({ owner_id: u.userId, config_extras: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.ctx.db
      .insertInto('core_meta_record')
      .values([1, 2].map(() => ({ core_base_id: second.id, owner_id: u.userId })))
      .execute();
    const [one] = await t.ctx.db
      .selectFrom('core_meta_record')
      .select('id')
      .where('core_base_id', '=', base.id)
      .execute();
    await t.ctx.db
      .deleteFrom('core_meta_record')
      .where('id', '=', one?.id as string)
      .execute();
    expect((await get('/rest/users/limit-data', u.auth)).json()).toMatchObject({ recordCount: 4 });
    await t.ctx.db.deleteFrom('core_base').where('id', '=', base.id).execute();
    expect((await get('/rest/users/limit-data', u.auth)).json()).toMatchObject({
      baseCount: 1,
      recordCount: 2,
    });
    expect((await get('/rest/users/limit-data', other.auth)).json()).toMatchObject({ recordCount: 0 });
  });

  it('marks a plan whose end has passed as expired with limits of 0', async () => {
    const u = await signUp(t.app, 'late@example.test');
    await t.ctx.db
      .insertInto('subscription')
      .values({
        user_id: u.userId,
        product_type: 'pro',
        status: 'active',
        expires_at: new Date(Date.now() - 1000),
      })
      .execute();
    const me = (await get('/rest/users/current', u.auth)).json();
    expect(me.lockstepUser.subscription).toMatchObject({
      status: 'expired',
      daysRemaining: 0,
      planDisplayName: 'Pro',
    });
    expect((await get('/rest/users/limit-data', u.auth)).json()).toMatchObject({
      baseLimit: 0,
      recordLimit: 0,
    });
  });

  it('gives staff to LOCKSTEP_STAFF_EMAILS, case-insensitively', async () => {
    expect((await get('/rest/users/current', staff.auth)).json().role).toBe('staff');
  });

  it('lets staff search users with paging, and nobody else', async () => {
    for (const n of [1, 2, 3]) await signUp(t.app, `paged-${n}@search.test`, `Paged ${n}`);
    const page1 = (await get('/rest/users?q=search.test&take=2', staff.auth)).json();
    expect(page1.total).toBe(3);
    expect(page1.items).toHaveLength(2);
    const page2 = (await get('/rest/users?q=search.test&take=2&skip=2', staff.auth)).json();
    expect(page2.items).toHaveLength(1);
    const ids = new Set([...page1.items, ...page2.items].map((u: { id: string }) => u.id));
    expect(ids.size).toBe(3);
    // Search by name, and wildcard characters are taken literally.
    expect((await get('/rest/users?q=Paged%202', staff.auth)).json().total).toBe(1);
    expect((await get('/rest/users?q=%25', staff.auth)).json().total).toBe(0);

    const u = await signUp(t.app, 'nosy@example.test');
    expect((await get('/rest/users?q=', u.auth)).statusCode).toBe(403);
  });

  it("hides another user's record from a non-staff user (404) and shows it to staff", async () => {
    const a = await signUp(t.app, 'a@owner.test');
    const b = await signUp(t.app, 'b@owner.test');
    expect((await get(`/rest/users/${b.userId}`, a.auth)).statusCode).toBe(404);
    expect((await get(`/rest/users/${a.userId}`, a.auth)).json().email).toBe('a@owner.test');
    expect((await get(`/rest/users/${b.userId}`, staff.auth)).json().email).toBe('b@owner.test');
  });

  it('lets staff assign a plan, set flags and delete a user; the deleted token stops working', async () => {
    const u = await signUp(t.app, 'target@example.test');
    expect(
      (await send('POST', `/rest/users/${u.userId}/plan`, u.auth, { productType: 'pro', days: 30 }))
        .statusCode,
    ).toBe(403);
    const bad = await send('POST', `/rest/users/${u.userId}/plan`, staff.auth, {
      productType: 'gold',
      days: 30,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().response.userFacingMessage).toMatch(/"gold" is not a plan/);
    const ok = await send('POST', `/rest/users/${u.userId}/plan`, staff.auth, {
      productType: 'business',
      days: 30,
    });
    expect(ok.json()).toMatchObject({ status: 'active', daysRemaining: 30, planDisplayName: 'Business' });

    const flags = { SELECT_A_PLAN_URL: true, BETA_CONNECTORS: ['hubspot'] };
    expect(
      (await send('PUT', `/rest/users/${u.userId}/flags`, staff.auth, { experimentFlags: flags })).statusCode,
    ).toBe(200);
    expect((await get('/rest/users/current', u.auth)).json().lockstepUser.experimentFlags).toEqual(flags);
    const badFlags = await send('PUT', `/rest/users/${u.userId}/flags`, staff.auth, {
      experimentFlags: { X: 3 },
    });
    expect(badFlags.statusCode).toBe(400);

    expect((await send('DELETE', `/rest/users/${u.userId}`, u.auth)).statusCode).toBe(403);
    expect((await send('DELETE', `/rest/users/${u.userId}`, staff.auth)).json()).toEqual({ deleted: true });
    expect((await send('DELETE', `/rest/users/${u.userId}`, staff.auth)).statusCode).toBe(404);
    const after = await get('/rest/users/current', u.auth);
    expect(after.statusCode).toBe(401);
    expect(after.json().response.userFacingMessage).toBe('This account no longer exists.');
  });

  it('marks an impersonated session, and the JWT carries it', async () => {
    const u = await signUp(t.app, 'impersonated@example.test');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/admin/impersonate-user',
      headers: { cookie: staff.cookie, origin: 'http://localhost:3999', 'content-type': 'application/json' },
      payload: { userId: u.userId },
    });
    expect(res.statusCode).toBe(200);
    // better-auth first expires the old cookies: keep the last value per cookie name.
    const jar = new Map<string, string>();
    for (const line of [res.headers['set-cookie']].flat()) {
      if (typeof line !== 'string') continue;
      const [pair] = line.split(';');
      const [name, ...rest] = (pair ?? '').split('=');
      if (name) jar.set(name, rest.join('='));
    }
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const token = (await t.app.inject({ url: '/api/auth/token', headers: { cookie } })).json()
      .token as string;
    const me = (await get('/rest/users/current', { authorization: `Bearer ${token}` })).json();
    expect(me.id).toBe(u.userId);
    expect(me.impersonatedBy).toBe(staff.userId);
    expect(me.role).toBe('user');
  });
});
