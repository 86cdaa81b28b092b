import { createHash, randomBytes } from 'node:crypto';
import { type StripeSimulator, startStripeSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../../test/pg-pair';
import { settleSync, syncRuns } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { openSecrets } from '../../services/external-connections';

// Sign in with Stripe (Stripe Connect, Standard accounts: this server is the platform) through the
// real routes against the simulator: the code is exchanged with the platform's secret key for the
// connected account's id, and every call is then made with the platform key and Stripe-Account.
// A sync reads the connected account's customers (not the platform's); deleting the connection
// disconnects the account.
let t: TestApp;
let sim: StripeSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
let pgUrl = '';
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/stripe/callback';
const shopId = 'acct_1LockstepShop0001';

const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** Stripe's authorize page as the web app's popup opens it: the code it redirects back with. */
async function authorize(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const { url } = await api('POST', '/rest/external-connections/oauth/stripe/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  const page = new URL(url);
  expect(page.origin + page.pathname).toBe(`${sim.url}/oauth/authorize`);
  expect(Object.fromEntries(page.searchParams)).toEqual({
    response_type: 'code',
    client_id: sim.connect.clientId,
    scope: 'read_write',
    state,
    redirect_uri: redirectUri,
  });
  const consented = await fetch(url, { redirect: 'manual' });
  expect(consented.status).toBe(302);
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

const callback = (code: string, verifier: string) =>
  t.app.inject({
    method: 'POST',
    url: '/rest/external-connections/oauth/stripe/authorize-callback',
    headers: { ...user.auth, ...json },
    payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
  });

async function itemsOf(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return { row, items: openSecrets(t.ctx, row).connectionItems };
}

beforeAll(async () => {
  sim = await startStripeSimulator({
    idSeed: 41,
    rateLimit: false,
    connect: { redirectUris: [redirectUri], accounts: [{ id: shopId, seed: { customers: 4 } }] },
  });
  t = await createTestApp({
    LOCKSTEP_STRIPE_API_URL: sim.url,
    LOCKSTEP_STRIPE_CONNECT_URL: sim.url,
    LOCKSTEP_STRIPE_CONNECT_CLIENT_ID: sim.connect.clientId,
    LOCKSTEP_STRIPE_CONNECT_SECRET_KEY: sim.token,
  });
  user = await signUp(t.app, 'stripe-connect@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `st_connect_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql('create table customers (id serial primary key, email text not null unique, name text)');
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Stripe Connect OAuth (sign in with Stripe)', () => {
  it('offers sign in with Stripe, the secret or restricted key kept as an optional item', async () => {
    const info = await api('GET', '/rest/connector-info');
    const stripe = info.find((c: { connectorType: string }) => c.connectorType === 'stripe');
    expect(stripe.auth).toMatchObject({ type: 'oauth2', signInAvailable: true });
    expect(stripe.auth.requiredItems).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'secretKey', optional: true })]),
    );
  });

  it('stores the connected account (no key), reads it through Stripe-Account; a connected account cannot be named by hand', async () => {
    const { code, verifier } = await authorize();
    const res = await callback(code, verifier);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      type: 'stripe',
      status: 'ok',
      connectionItems: { stripeUserId: shopId },
    });
    const { row, items } = await itemsOf(res.json().id);
    expect(items).toEqual({ stripeUserId: shopId, livemode: 'false', scope: 'read_write' });
    expect(row.secrets).not.toContain(sim.token);
    expect(sim.connect.connected.has(shopId)).toBe(true);
    const bases = await api('PATCH', `/rest/external-connections/${res.json().id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toEqual([expect.objectContaining({ remoteId: shopId })]);

    // Naming an account connected to the platform would borrow the platform's key: refused.
    const forged = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: { ...user.auth, ...json },
      payload: { type: 'stripe', connectionItems: { stripeUserId: shopId } },
    });
    expect(forged.statusCode).toBe(400);
    expect(forged.json().response.userFacingMessage).toBe('stripeUserId cannot be set on a connection.');

    const spent = await callback(code, verifier);
    expect(spent.statusCode).toBe(400);
    expect(spent.json().response.userFacingMessage).toBe(
      'Stripe did not accept the authorization. Please sign in with Stripe again.',
    );
  });

  it("a sync reads and writes the connected account's customers; a disconnect asks to sign in again", async () => {
    const shop = sim.connectedAccount(shopId);
    shop.create('customer', { email: 'only.in.shop@example.com', name: 'Shop Only' });
    const { code, verifier } = await authorize();
    const conn = (await callback(code, verifier)).json();
    const core = await setUpAppPostgresSync(api, {
      name: 'Stripe (Connect) <-> customers',
      app: { type: 'stripe', name: 'Stripe', connectionId: conn.id, remoteId: shopId },
      pgUrl,
      tables: [
        {
          left: 'Customers',
          right: 'customers',
          fields: [
            ['Email', 'email'],
            ['Name', 'name'],
          ],
          matchOn: 'Email',
        },
      ],
    });
    const theirs = shop.state.all('customer', false).map((c) => c.email as string);
    expect(theirs).toHaveLength(5);
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settleSync(
      t.ctx.db,
      core.id,
      async () => (await sql('select count(*)::int as n from customers'))[0]?.n === 5,
      60_000,
    );
    expect((await syncRuns(t.ctx.db, core.id)).map((r) => r.status)).not.toContain('failed');
    const emails = (await sql('select email from customers order by email')).map((r) => r.email);
    expect(emails).toEqual([...theirs].sort());
    // The platform's own 25 customers stayed out.
    const platformEmails = sim.state.all('customer', false).map((c) => c.email as string);
    expect(emails.filter((e) => platformEmails.includes(e) && !theirs.includes(e))).toEqual([]);

    // A row added in PostgreSQL is written to the connected account, not the platform.
    await sql(`insert into customers (email, name) values ('pg.made@example.com', 'From PG')`);
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await settleSync(
      t.ctx.db,
      core.id,
      () => shop.state.all('customer', false).some((c) => c.email === 'pg.made@example.com'),
      60_000,
    );
    expect(sim.state.all('customer', false).some((c) => c.email === 'pg.made@example.com')).toBe(false);

    // The user disconnects Lockstep in their Stripe Dashboard: they are asked to sign in again.
    sim.connect.revoke(shopId);
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${conn.id}/fetch-base-previews`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: expect.stringMatching(/Sign in with Stripe again/),
    });
  });

  it('deleting a Connect connection disconnects the account from the platform', async () => {
    const { code, verifier } = await authorize();
    const conn = (await callback(code, verifier)).json();
    expect(sim.connect.connected.has(shopId)).toBe(true);
    const deauthorized = () =>
      sim.requestLog.count({ method: 'POST', path: '/oauth/deauthorize', status: 200 });
    const before = deauthorized();
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/rest/external-connections/${conn.id}`,
      headers: user.auth,
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    expect(deauthorized()).toBe(before + 1);
    expect(sim.connect.connected.has(shopId)).toBe(false);
  });
});
