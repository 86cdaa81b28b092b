import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { openSecrets } from '../services/external-connections';
import { resolveEmbeddedItems } from './embedded-items';

// Issue 18 item 1: outside local mode, demo databases only when LOCKSTEP_DEMO=1, and then each
// user gets copies of their own through a role that can touch nothing else (not the superuser,
// not another tenant's copy, not the maintenance database); nobody can name an embedded database.
let off: TestApp;
let on: TestApp;
const json = { 'content-type': 'application/json' };

// These users sign up and in at once: email verification (sign-up-enumeration test) is not the point here.
const production = { LOCKSTEP_ENV: 'production', LOCKSTEP_EMAIL_VERIFICATION: 'off' };

beforeAll(async () => {
  off = await createTestApp(production);
  on = await createTestApp({ ...production, LOCKSTEP_DEMO: '1' });
});
afterAll(async () => {
  await off?.close();
  await on?.close();
  // The shared test cluster's maintenance database stays open to the other tests' roles.
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  for (const db of ['postgres', 'demo_crm', 'demo_newsletter'])
    await admin.query(`grant connect, temporary on database ${db} to public`).catch(() => {});
  await admin.end();
});

async function connectDemo(t: TestApp, email: string) {
  const user = await signUp(t.app, email);
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, ...json },
    payload: { productType: 'pro' },
  });
  const res = await t.app.inject({
    method: 'POST',
    url: '/rest/demo-databases/demo_crm/connect',
    headers: user.auth,
  });
  return { user, res };
}

async function tryConnect(url: string) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return 'connected';
  } catch (e) {
    return (e as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

describe('demo databases outside local mode', () => {
  it('are not offered unless LOCKSTEP_DEMO=1', async () => {
    const { user, res } = await connectDemo(off, 'demo-off@test.test');
    expect(res.statusCode).toBe(404);
    expect(res.json().response.userFacingMessage).toMatch(/LOCKSTEP_DEMO=1/);
    const list = await off.app.inject({ url: '/rest/demo-databases', headers: user.auth });
    expect(list.json().available).toBe(false);
  });

  it('give each user a copy of their own through a role that reaches nothing else', async () => {
    const a = await connectDemo(on, 'demo-tenant-a@test.test');
    const b = await connectDemo(on, 'demo-tenant-b@test.test');
    expect(a.res.statusCode, a.res.body).toBe(201);
    expect(b.res.statusCode, b.res.body).toBe(201);
    // The role's password never leaves the server.
    expect(JSON.stringify(a.res.json())).not.toMatch(/embeddedPassword/);
    const urlOf = async (id: string) => {
      const row = await on.ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return resolveEmbeddedItems(openSecrets(on.ctx, row).connectionItems, on.ctx.embeddedDatabaseUrl)
        .connectionString as string;
    };
    const [urlA, urlB] = [await urlOf(a.res.json().id), await urlOf(b.res.json().id)];
    const roleA = decodeURIComponent(new URL(urlA).username);
    expect(roleA).toMatch(/^lockstep_demo_t[0-9a-f]{16}$/);
    expect(new URL(urlA).pathname).not.toBe(new URL(urlB).pathname);

    // A's role: its own seeded copy, not a superuser; B's copy and the maintenance database refused.
    const own = new pg.Client({ connectionString: urlA });
    await own.connect();
    const [facts] = (
      await own.query(
        `select (select count(*)::int from contacts) as contacts, (select rolsuper from pg_roles where rolname = current_user) as su`,
      )
    ).rows;
    await own.end();
    expect(facts).toEqual({ contacts: 120, su: false });
    const other = new URL(urlB);
    other.username = new URL(urlA).username;
    other.password = new URL(urlA).password;
    expect(await tryConnect(other.toString())).toMatch(/permission denied for database/);
    const maintenance = new URL(urlA);
    maintenance.pathname = '/postgres';
    expect(await tryConnect(maintenance.toString())).toMatch(/permission denied for database/);

    // The sync side works through that role: the app's tables are discovered.
    const core = await on.app.inject({
      method: 'POST',
      url: '/rest/core-bases',
      headers: { ...a.user.auth, ...json },
      payload: { name: 'demo' },
    });
    const attached = await on.app.inject({
      method: 'POST',
      url: '/rest/external-bases',
      headers: { ...a.user.auth, ...json },
      payload: {
        type: 'postgresql',
        name: 'CRM',
        remoteId: 'public',
        coreBaseId: core.json().id,
        externalConnectionId: a.res.json().id,
        side: 'left',
      },
    });
    expect(attached.statusCode, attached.body).toBe(201);
    expect(
      attached.json().leftExternalBase.externalTables.map((x: { remoteId: string }) => x.remoteId),
    ).toContain('public.contacts');
  });

  it('refuses a connection that names an embedded database itself', async () => {
    const user = await signUp(on.app, 'demo-forger@test.test');
    const res = await on.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: { ...user.auth, ...json },
      payload: { type: 'postgresql', name: 'mine', connectionItems: { embedded: 'postgres' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().response.userFacingMessage).toMatch(/embedded cannot be set/);
  });
});
