import { createHash, randomBytes } from 'node:crypto';
import { type HubSpotSimulator, startHubSpotSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../../test/pg-pair';
import { settleSync, syncRuns } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { openSecrets } from '../../services/external-connections';

// Sign in with HubSpot (this server's app: install page with PKCE, code exchanged on the API host)
// through the real routes against the simulator; then a run whose access token expired renews it
// once with the refresh token and seals the new token into the connection.
let t: TestApp;
let sim: HubSpotSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
let pgUrl = '';
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/hubspot/callback';
const app = {
  clientId: 'lockstep-hubspot-test',
  clientSecret: 'hubspot-test-secret',
  redirectUris: [redirectUri],
};

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** The install page as the web app's popup opens it: the code and the verifier that goes with it. */
async function install(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const { url } = await api('POST', '/rest/external-connections/oauth/hubspot/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  const page = new URL(url);
  expect(page.origin + page.pathname).toBe(`${sim.url}/oauth/authorize`);
  expect(page.searchParams.get('scope')?.split(' ')).toEqual(
    expect.arrayContaining(['oauth', 'crm.objects.contacts.write', 'crm.schemas.deals.read']),
  );
  expect(page.searchParams.get('code_challenge_method')).toBe('S256');
  const consented = await fetch(url, { redirect: 'manual' });
  expect(consented.status).toBe(302);
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

async function stored(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return { row, items: openSecrets(t.ctx, row).connectionItems };
}

const tokenCalls = () => sim.requestLog.count({ method: 'POST', path: '/oauth/v1/token' });
/** HubSpot's 30 minutes have passed for this access token. */
const expire = (token: string) => {
  const info = sim.state.tokens.get(token);
  if (!info) throw new Error('unknown token');
  info.expiresAt = Date.now() - 1;
};

beforeAll(async () => {
  sim = await startHubSpotSimulator({ idSeed: 5, seed: { contacts: 5 }, searchLagMs: 100, oauthApps: [app] });
  t = await createTestApp({
    LOCKSTEP_HUBSPOT_API_URL: sim.url,
    LOCKSTEP_HUBSPOT_OAUTH_URL: sim.url,
    LOCKSTEP_HUBSPOT_CLIENT_ID: app.clientId,
    LOCKSTEP_HUBSPOT_CLIENT_SECRET: app.clientSecret,
  });
  user = await signUp(t.app, 'hubspot-oauth@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `hs_oauth_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql('create table people (id serial primary key, email text not null unique, first_name text)');
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('HubSpot OAuth (sign in with HubSpot)', () => {
  it('offers sign in with HubSpot, the private app token kept as an optional item', async () => {
    const info = await api('GET', '/rest/connector-info');
    const hubspot = info.find((c: { connectorType: string }) => c.connectorType === 'hubspot');
    expect(hubspot.auth).toMatchObject({ type: 'oauth2', signInAvailable: true });
    expect(hubspot.auth.requiredItems).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'accessToken', optional: true })]),
    );
  });

  it('exchanges the code with its PKCE verifier, stores the tokens sealed, and reads the account with them', async () => {
    const { code, verifier } = await install();
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/hubspot/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'hubspot', status: 'ok' });
    const { row, items } = await stored(res.json().id);
    expect(items.refreshToken).toMatch(/^na1-/);
    expect(items.hubId).toBe(String(sim.state.portalId));
    expect(row.secrets).not.toContain(items.accessToken as string);
    expect(res.body).not.toContain(items.accessToken as string);
    expect(sim.state.tokens.get(items.accessToken as string)?.kind).toBe('oauth');

    const bases = await api('PATCH', `/rest/external-connections/${res.json().id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toEqual([expect.objectContaining({ remoteId: String(sim.state.portalId) })]);

    // A code with another verifier than its challenge's is refused, and so is a spent one.
    const other = await install();
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/hubspot/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: {
        code: other.code,
        codeVerifier: verifier.replace(/.$/, 'x'),
        redirectUri,
        connectionItems: {},
      },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().response.userFacingMessage).toMatch(/HubSpot did not accept the authorization/);
    const spent = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/hubspot/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
    });
    expect(spent.statusCode).toBe(400);
  });

  it('a run after the access token expired renews it once and stores the new token; an uninstalled app asks to sign in again', async () => {
    const { code, verifier } = await install();
    const conn = await api('POST', '/rest/external-connections/oauth/hubspot/authorize-callback', {
      code,
      codeVerifier: verifier,
      redirectUri,
      connectionItems: {},
    });
    const core = await setUpAppPostgresSync(api, {
      name: 'HubSpot (OAuth) <-> people',
      app: { type: 'hubspot', name: 'HubSpot', connectionId: conn.id, remoteId: String(sim.state.portalId) },
      pgUrl,
      tables: [
        {
          left: 'Contacts',
          right: 'people',
          fields: [
            ['Email', 'email'],
            ['First Name', 'first_name'],
          ],
          matchOn: 'Email',
        },
      ],
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settleSync(
      t.ctx.db,
      core.id,
      async () => (await sql('select count(*)::int as n from people'))[0]?.n === 5,
      60_000,
    );
    const before = (await stored(conn.id)).items;

    // Thirty minutes later HubSpot refuses the access token (401 EXPIRED_AUTHENTICATION). Counted
    // from here (whatever asks first renews it), there is exactly one renewal.
    const calls = tokenCalls();
    expire(before.accessToken as string);
    const contact = sim.state.list('contacts')[0];
    sim.mutate('contacts', contact?.id as string, { firstname: 'Renamed after expiry' });
    await new Promise((r) => setTimeout(r, 300));
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (await sql('select first_name from people where email = $1', [contact?.properties.get('email')]))[0]
          ?.first_name === 'Renamed after expiry',
      60_000,
    );
    expect((await syncRuns(t.ctx.db, core.id)).map((r) => r.status)).not.toContain('failed');
    expect(tokenCalls()).toBe(calls + 1);
    const after = await stored(conn.id);
    expect(after.items.accessToken).not.toBe(before.accessToken);
    expect(sim.state.tokens.check(after.items.accessToken).ok).toBe(true);
    // HubSpot's refresh tokens do not rotate: the same one is kept.
    expect(after.items.refreshToken).toBe(before.refreshToken);
    expect(after.items.hubId).toBe(before.hubId);
    expect(after.row.secrets).not.toContain(after.items.accessToken as string);

    // The app is uninstalled (refresh token deleted) and the access token expires: the REST layer
    // asks the person to sign in again.
    await fetch(`${sim.url}/oauth/v1/refresh-tokens/${after.items.refreshToken}`, { method: 'DELETE' });
    expire(after.items.accessToken as string);
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${conn.id}/fetch-base-previews`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: 'HubSpot no longer accepts Lockstep’s sign-in. Sign in with HubSpot again.',
    });
  });
});
