import { createHash, randomBytes } from 'node:crypto';
import { type PipedriveSimulator, startPipedriveSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../../test/pg-pair';
import { settleSync, syncRuns } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { openSecrets } from '../../services/external-connections';

// Sign in with Pipedrive (this server's app: the authorize page and the token endpoint on the OAuth
// host, HTTP Basic client auth) through the real routes against the simulator; the API then goes to
// the company's host the token answer names (api_domain, the simulator's second listener) with the
// bearer token. A run whose access token expired renews it once with the refresh token and seals
// the new token into the connection. The company's API token still connects, on the API host.
let t: TestApp;
let sim: PipedriveSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
let pgUrl = '';
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/pipedrive/callback';
const app = { clientId: 'lockstep-pipedrive-test', clientSecret: 'pipedrive-test-secret', redirectUri };

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** Pipedrive's authorize page as the web app's popup opens it: the code (and the verifier the routes ask for). */
async function authorize(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const { url } = await api('POST', '/rest/external-connections/oauth/pipedrive/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  const page = new URL(url);
  expect(page.origin + page.pathname).toBe(`${sim.url}/oauth/authorize`);
  expect(page.searchParams.get('client_id')).toBe(app.clientId);
  expect(page.searchParams.get('redirect_uri')).toBe(redirectUri);
  const consented = await fetch(url, { redirect: 'manual' });
  expect(consented.status).toBe(302);
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

async function signIn() {
  const { code, verifier } = await authorize();
  return api('POST', '/rest/external-connections/oauth/pipedrive/authorize-callback', {
    code,
    codeVerifier: verifier,
    redirectUri,
    connectionItems: {},
  });
}

async function stored(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return { row, items: openSecrets(t.ctx, row).connectionItems };
}

const tokenCalls = () => sim.requestLog.count({ method: 'POST', path: '/oauth/token' });
/** Pipedrive's hour has passed for this access token. */
const expire = (token: string) => {
  const info = sim.state.tokens.get(token);
  if (!info) throw new Error('unknown token');
  info.expiresAt = Date.now() - 1;
};

beforeAll(async () => {
  sim = await startPipedriveSimulator({ seed: { persons: 5 }, oauthClients: [app] });
  t = await createTestApp({
    LOCKSTEP_PIPEDRIVE_API_URL: sim.url,
    LOCKSTEP_PIPEDRIVE_OAUTH_URL: sim.url,
    LOCKSTEP_PIPEDRIVE_CLIENT_ID: app.clientId,
    LOCKSTEP_PIPEDRIVE_CLIENT_SECRET: app.clientSecret,
  });
  user = await signUp(t.app, 'pipedrive-oauth@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `pd_oauth_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql('create table people (id serial primary key, email text not null unique, full_name text)');
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Pipedrive OAuth (sign in with Pipedrive)', () => {
  it('offers sign in with Pipedrive, the API token kept as an optional item', async () => {
    const info = await api('GET', '/rest/connector-info');
    const pipedrive = info.find((c: { connectorType: string }) => c.connectorType === 'pipedrive');
    expect(pipedrive.auth).toMatchObject({ type: 'oauth2', signInAvailable: true });
    expect(pipedrive.auth.requiredItems).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'apiToken', optional: true })]),
    );
  });

  it('exchanges the code, stores the tokens and the company host sealed, and reads the company there', async () => {
    const { code, verifier } = await authorize();
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/pipedrive/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'pipedrive', status: 'ok' });
    const { row, items } = await stored(res.json().id);
    expect(items).toMatchObject({ refreshToken: expect.any(String), apiDomain: sim.companyUrl });
    expect(row.secrets).not.toContain(items.accessToken as string);
    expect(res.body).not.toContain(items.accessToken as string);
    expect(sim.state.tokens.get(items.accessToken as string)?.kind).toBe('oauth');

    const onCompanyHost = sim.companyRequestLog.count({ path: '/api/v1/users/me' });
    const bases = await api('PATCH', `/rest/external-connections/${res.json().id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toEqual([expect.objectContaining({ remoteId: String(sim.state.companyId) })]);
    expect(sim.companyRequestLog.count({ path: '/api/v1/users/me' })).toBe(onCompanyHost + 1);

    // A spent code is refused.
    const spent = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections/oauth/pipedrive/authorize-callback',
      headers: { ...user.auth, ...json },
      payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
    });
    expect(spent.statusCode).toBe(400);
    expect(spent.json().response.userFacingMessage).toMatch(/Pipedrive did not accept the authorization/);
  });

  it('the API token still connects, on the API host', async () => {
    const before = sim.companyRequestLog.total;
    const conn = await api('POST', '/rest/external-connections', {
      type: 'pipedrive',
      connectionItems: { apiToken: sim.token },
    });
    expect(conn).toMatchObject({ type: 'pipedrive', status: 'ok' });
    const bases = await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toEqual([expect.objectContaining({ remoteId: String(sim.state.companyId) })]);
    expect(sim.companyRequestLog.total).toBe(before);
  });

  it('a run after the access token expired renews it once and stores the new token; an uninstalled app asks to sign in again', async () => {
    const conn = await signIn();
    const core = await setUpAppPostgresSync(api, {
      name: 'Pipedrive (OAuth) <-> people',
      app: {
        type: 'pipedrive',
        name: 'Pipedrive',
        connectionId: conn.id,
        remoteId: String(sim.state.companyId),
      },
      pgUrl,
      tables: [
        {
          left: 'Persons',
          right: 'people',
          fields: [
            ['Email', 'email'],
            ['Name', 'full_name'],
          ],
          matchOn: 'Email',
        },
      ],
    });
    const personReads = () => sim.companyRequestLog.count({ method: 'GET', path: '/api/v2/persons' });
    const readsBefore = personReads();
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settleSync(
      t.ctx.db,
      core.id,
      async () => (await sql('select count(*)::int as n from people'))[0]?.n === 5,
      60_000,
    );
    // The records were read through the OAuth token, on the company's host.
    expect(personReads()).toBeGreaterThan(readsBefore);
    const before = (await stored(conn.id)).items;

    // An hour later Pipedrive refuses the access token (401 "access token is expired"). Whatever
    // asks first after that (the run below, or the webhook set-up the sync's start queued) renews
    // it: counted from here, there is exactly one renewal.
    const calls = tokenCalls();
    expire(before.accessToken as string);
    const person = sim.state.list('persons').find((p) => !p.deleted);
    if (!person) throw new Error('no person');
    const email = ((person.values.emails ?? []) as { value: string }[])[0]?.value;
    // Pipedrive's update_time has whole seconds: the edit lands in a second after the last read.
    await new Promise((r) => setTimeout(r, 1_100));
    sim.update('persons', person.id, { name: 'Renamed after expiry' });
    await new Promise((r) => setTimeout(r, 1_100));
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (await sql('select full_name from people where email = $1', [email]))[0]?.full_name ===
        'Renamed after expiry',
      60_000,
    );
    expect((await syncRuns(t.ctx.db, core.id)).map((r) => r.status)).not.toContain('failed');
    expect(tokenCalls()).toBe(calls + 1);
    const after = await stored(conn.id);
    expect(after.items.accessToken).not.toBe(before.accessToken);
    expect(sim.state.tokens.check(after.items.accessToken).ok).toBe(true);
    expect(after.items.refreshToken).toBe(before.refreshToken);
    expect(after.items.apiDomain).toBe(sim.companyUrl);
    expect(Date.parse(after.items.accessTokenExpiresAt as string)).toBeGreaterThan(
      Date.parse(before.accessTokenExpiresAt as string),
    );
    expect(after.row.secrets).not.toContain(after.items.accessToken as string);

    // The app is uninstalled (the refresh token revoked, which ends its access tokens): the REST
    // layer asks the person to sign in again.
    await fetch(`${sim.url}/oauth/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: after.items.refreshToken as string }).toString(),
    });
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${conn.id}/fetch-base-previews`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: expect.stringMatching(
        /no longer accepts Lockstep’s sign-in.*Sign in with Pipedrive again/,
      ),
    });
  });
});
