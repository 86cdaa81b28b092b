import { createHash, randomBytes } from 'node:crypto';
import { startWebflowSimulator, type WebflowSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../../test/pg-pair';
import { settleSync, syncRuns } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { openSecrets } from '../../services/external-connections';
import { webflowRuntimeFactory } from '../../sync/runtime-connectors';

// Sign in with Webflow (this server's Data Client app: authorize page on webflow.com, the code
// exchanged at api.webflow.com/oauth/access_token, no PKCE, a token that does not expire) through
// the real routes against the simulator; then a sync reads the site's contacts with that token.
let t: TestApp;
let sim: WebflowSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
let pgUrl = '';
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/webflow/callback';
const app = {
  clientId: 'lockstep-webflow-test-client',
  clientSecret: 'webflow-test-client-secret',
  redirectUri,
};

const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** The authorize page as the web app's popup opens it: the code Webflow redirects back with. */
async function authorize(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const { url } = await api('POST', '/rest/external-connections/oauth/webflow/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  const page = new URL(url);
  expect(page.origin + page.pathname).toBe(`${sim.url}/oauth/authorize`);
  expect(page.searchParams.get('response_type')).toBe('code');
  expect(page.searchParams.get('client_id')).toBe(app.clientId);
  expect(page.searchParams.get('scope')?.split(' ')).toEqual(
    expect.arrayContaining(['sites:read', 'cms:read', 'cms:write']),
  );
  // Webflow takes no PKCE: no challenge goes to it.
  expect(page.searchParams.has('code_challenge')).toBe(false);
  const consented = await fetch(url, { redirect: 'manual' });
  expect(consented.status).toBe(302);
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

const callback = (code: string, verifier: string) =>
  t.app.inject({
    method: 'POST',
    url: '/rest/external-connections/oauth/webflow/authorize-callback',
    headers: { ...user.auth, ...json },
    payload: { code, codeVerifier: verifier, redirectUri, connectionItems: {} },
  });

beforeAll(async () => {
  sim = await startWebflowSimulator({
    idSeed: 31,
    seed: { companies: 2, contacts: 6, deals: 0 },
    rateLimit: false,
    oauthApps: [app],
  });
  t = await createTestApp({
    LOCKSTEP_WEBFLOW_API_URL: sim.url,
    LOCKSTEP_WEBFLOW_OAUTH_URL: sim.url,
    LOCKSTEP_WEBFLOW_CLIENT_ID: app.clientId,
    LOCKSTEP_WEBFLOW_CLIENT_SECRET: app.clientSecret,
  });
  t.ctx.runtimeConnectors.register(
    'webflow',
    webflowRuntimeFactory({ apiUrl: sim.url, client: { perMinute: 0 } }),
  );
  user = await signUp(t.app, 'webflow-oauth@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `wf_oauth_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql('create table people (id serial primary key, email text not null unique, name text)');
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Webflow OAuth (sign in with Webflow)', () => {
  it('offers sign in with Webflow, the site token kept as an optional item', async () => {
    const info = await api('GET', '/rest/connector-info');
    const webflow = info.find((c: { connectorType: string }) => c.connectorType === 'webflow');
    expect(webflow.auth).toMatchObject({ type: 'oauth2', signInAvailable: true });
    expect(webflow.auth.requiredItems).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'apiToken', optional: true })]),
    );
  });

  it('exchanges the code for a token stored sealed, named after the authorizing user; a spent code is refused', async () => {
    const { code, verifier } = await authorize();
    const res = await callback(code, verifier);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      type: 'webflow',
      status: 'ok',
      name: `Webflow (${sim.oauth.user.email})`,
    });
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, row).connectionItems;
    expect(Object.keys(items)).toEqual(['accessToken']);
    expect(row.secrets).not.toContain(items.accessToken as string);
    expect(res.body).not.toContain(items.accessToken as string);
    // The simulator knows it as our app's token.
    expect(sim.oauth.appOfToken(items.accessToken as string)?.clientId).toBe(app.clientId);

    const spent = await callback(code, verifier);
    expect(spent.statusCode).toBe(400);
    expect(spent.json().response.userFacingMessage).toBe(
      'Webflow did not accept the authorization. Please sign in with Webflow again.',
    );
  });

  it('a sync reads the site with the signed-in token; a revoked authorization asks to sign in again', async () => {
    const { code, verifier } = await authorize();
    const conn = (await callback(code, verifier)).json();
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    expect(base?.remoteId).toBe(sim.siteId);
    const core = await setUpAppPostgresSync(api, {
      name: 'Webflow (OAuth) <-> people',
      app: { type: 'webflow', name: 'Webflow', connectionId: conn.id, remoteId: sim.siteId },
      pgUrl,
      tables: [
        {
          left: 'Contacts',
          right: 'people',
          fields: [
            ['Email', 'email'],
            ['Name', 'name'],
          ],
          matchOn: 'Email',
        },
      ],
    });
    const before = sim.requestLog.count({ path: `/v2/collections/${sim.crm?.collections.contacts}/items` });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settleSync(
      t.ctx.db,
      core.id,
      async () => (await sql('select count(*)::int as n from people'))[0]?.n === 6,
      60_000,
    );
    expect((await syncRuns(t.ctx.db, core.id)).map((r) => r.status)).not.toContain('failed');
    expect(
      sim.requestLog.count({ path: `/v2/collections/${sim.crm?.collections.contacts}/items` }),
    ).toBeGreaterThan(before);
    const names = (await sql('select name from people order by name')).map((r) => r.name);
    const staged = [...(sim.state.items.get(sim.crm?.collections.contacts as string)?.values() ?? [])];
    expect(names).toEqual(staged.map((i) => i.fieldData.name).sort());

    // The person removes the app in Webflow: the token is refused and they are asked to sign in again.
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', conn.id)
      .executeTakeFirstOrThrow();
    sim.revokeToken(openSecrets(t.ctx, row).connectionItems.accessToken as string);
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${conn.id}/fetch-base-previews`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: expect.stringMatching(/Sign in with Webflow again/),
    });
  });
});
