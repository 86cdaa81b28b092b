import { createHash, randomBytes } from 'node:crypto';
import { type AirtableSimulator, startAirtableSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { openSecrets } from '../../services/external-connections';

// Sign in with Airtable (authorization code with PKCE) through the real routes, against the
// simulator's /oauth2/v1/authorize and /oauth2/v1/token, then the API with the OAuth tokens.
let t: TestApp;
let sim: AirtableSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/airtable/callback';

const post = (url: string, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { ...user.auth, ...json }, payload });

beforeAll(async () => {
  sim = await startAirtableSimulator({
    seed: { contacts: 3 },
    oauthClients: [{ clientId: 'lockstep-test', clientSecret: 'shh', redirectUris: [redirectUri] }],
  });
  t = await createTestApp({
    LOCKSTEP_AIRTABLE_API_URL: sim.url,
    LOCKSTEP_AIRTABLE_OAUTH_URL: sim.url,
    LOCKSTEP_AIRTABLE_CLIENT_ID: 'lockstep-test',
    LOCKSTEP_AIRTABLE_CLIENT_SECRET: 'shh',
  });
  user = await signUp(t.app, 'airtable-oauth@test.test');
});
afterAll(async () => {
  await t.close();
  await sim.close();
});

async function signIn(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const res = await post('/rest/external-connections/oauth/airtable/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  expect(res.statusCode).toBe(200);
  const url = new URL(res.json().url);
  expect(url.origin + url.pathname).toBe(`${sim.url}/oauth2/v1/authorize`);
  expect(url.searchParams.get('scope')).toContain('data.records:write');
  const consented = await fetch(url, { redirect: 'manual' });
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

describe('Airtable OAuth with PKCE', () => {
  it('exchanges the code with its verifier, stores the tokens sealed, and renews a refused access token', async () => {
    const { code } = await signIn();
    // A wrong verifier is refused by Airtable's token endpoint.
    const wrong = await post('/rest/external-connections/oauth/airtable/authorize-callback', {
      code,
      codeVerifier: randomBytes(32).toString('base64url'),
      redirectUri,
    });
    expect(wrong.statusCode).toBe(400);

    const again = await signIn();
    const res = await post('/rest/external-connections/oauth/airtable/authorize-callback', {
      code: again.code,
      codeVerifier: again.verifier,
      redirectUri,
      connectionItems: {},
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      type: 'airtable',
      name: 'Airtable',
      status: 'ok',
      connectionItems: {},
    });
    expect(res.body).not.toMatch(/oaa|oar/);
    const row = async () =>
      t.ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', res.json().id)
        .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, await row()).connectionItems;
    expect(items.accessToken).toMatch(/^oaa/);
    expect(items.refreshToken).toMatch(/^oar/);

    const bases = async () =>
      t.app.inject({
        method: 'PATCH',
        url: `/rest/external-connections/${res.json().id}/fetch-base-previews`,
        headers: { ...user.auth, ...json },
        payload: {},
      });
    expect((await bases()).json().basePreviews).toEqual([{ remoteId: sim.crm?.baseId, name: 'CRM' }]);

    // The access token is refused: one refresh (single-use refresh token, rotated), saved on the connection.
    sim.revokeToken(items.accessToken as string);
    expect((await bases()).statusCode).toBe(200);
    const renewed = openSecrets(t.ctx, await row()).connectionItems;
    expect(renewed.accessToken).not.toBe(items.accessToken);
    expect(renewed.refreshToken).not.toBe(items.refreshToken);
    expect((await bases()).statusCode).toBe(200);
  });

  it("saves the tokens a run's connector renews (Airtable's refresh tokens are single-use)", async () => {
    const { code, verifier } = await signIn();
    const res = await post('/rest/external-connections/oauth/airtable/authorize-callback', {
      code,
      codeVerifier: verifier,
      redirectUri,
      connectionItems: {},
    });
    expect(res.statusCode).toBe(201);
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, row).connectionItems;
    const saved: Record<string, string>[] = [];
    const runtime = t.ctx.runtimeConnectors.forConnection('airtable', items, async (next) => {
      saved.push(next);
    });
    const baseId = sim.crm?.baseId as string;
    const table = `${baseId}/${sim.crm?.tables.contacts}`;
    expect((await runtime?.read(table, null, { pageSize: 10 }))?.records.length).toBeGreaterThan(0);
    expect(saved).toEqual([]);
    // The access token is refused mid-run: renewed once, and the new pair handed over to be saved.
    sim.revokeToken(items.accessToken as string);
    expect((await runtime?.read(table, null, { pageSize: 10 }))?.records.length).toBeGreaterThan(0);
    expect(saved).toHaveLength(1);
    expect(saved[0]?.accessToken).not.toBe(items.accessToken);
    expect(saved[0]?.refreshToken).not.toBe(items.refreshToken);
    // The saved refresh token is the live one: another process starting from it gets through.
    sim.revokeToken(saved[0]?.accessToken as string);
    const later = t.ctx.runtimeConnectors.forConnection(
      'airtable',
      saved[0] as Record<string, string>,
      async () => {},
    );
    expect((await later?.read(table, null, { pageSize: 10 }))?.records.length).toBeGreaterThan(0);
  });

  it('refuses a sign-in that does not come back to its own callback page', async () => {
    const res = await post('/rest/external-connections/oauth/airtable/authorize-url', {
      codeChallenge: createHash('sha256').update('x'.repeat(43)).digest('base64url'),
      state: randomBytes(16).toString('hex'),
      redirectUri: 'https://evil.example/steal',
    });
    expect(res.statusCode).toBe(400);
  });
});
