import { randomBytes } from 'node:crypto';
import { type NotionSimulator, startNotionSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { openSecrets } from '../../services/external-connections';

// Sign in with Notion (a public integration: authorization code, client credentials as Basic auth)
// through the real routes, against the simulator's /v1/oauth/authorize and /v1/oauth/token; then
// the API with the access token it gave.
let t: TestApp;
let sim: NotionSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/notion/callback';
const client = { clientId: 'lockstep-notion-test', clientSecret: 'secret_notion_test' };
const verifier = 'v'.repeat(43);

const post = (url: string, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { ...user.auth, ...json }, payload });

beforeAll(async () => {
  sim = await startNotionSimulator({ oauthClients: [{ ...client, redirectUris: [redirectUri] }] });
  t = await createTestApp({
    LOCKSTEP_NOTION_API_URL: sim.url,
    LOCKSTEP_NOTION_CLIENT_ID: client.clientId,
    LOCKSTEP_NOTION_CLIENT_SECRET: client.clientSecret,
  });
  user = await signUp(t.app, 'notion-oauth@test.test');
});
afterAll(async () => {
  await t.close();
  await sim.close();
});

async function signIn(): Promise<string> {
  const state = randomBytes(16).toString('hex');
  const res = await post('/rest/external-connections/oauth/notion/authorize-url', {
    codeChallenge: 'c'.repeat(43),
    state,
    redirectUri,
  });
  expect(res.statusCode, res.body).toBe(200);
  const url = new URL(res.json().url);
  expect(url.origin + url.pathname).toBe(`${sim.url}/v1/oauth/authorize`);
  expect(url.searchParams.get('owner')).toBe('user');
  const consented = await fetch(url, { redirect: 'manual' });
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return back.searchParams.get('code') as string;
}

describe('Notion OAuth (public integration)', () => {
  it('exchanges the code, stores the token sealed, and reads the shared databases with it', async () => {
    const res = await post('/rest/external-connections/oauth/notion/authorize-callback', {
      code: await signIn(),
      codeVerifier: verifier,
      redirectUri,
      connectionItems: {},
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'notion', status: 'ok' });
    expect(res.body).not.toMatch(/ntn_|nrt_/);
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, row).connectionItems;
    expect(items.accessToken).toMatch(/^ntn_/);
    expect(items.workspaceName).toBeTruthy();

    const bases = await t.app.inject({
      method: 'PATCH',
      url: `/rest/external-connections/${res.json().id}/fetch-base-previews`,
      headers: { ...user.auth, ...json },
      payload: {},
    });
    expect(bases.statusCode, bases.body).toBe(200);
    expect(bases.json().basePreviews.length).toBeGreaterThan(0);

    // A code is good once.
    const code = await signIn();
    const first = await post('/rest/external-connections/oauth/notion/authorize-callback', {
      code,
      codeVerifier: verifier,
      redirectUri,
    });
    expect(first.statusCode).toBe(201);
    const spent = await post('/rest/external-connections/oauth/notion/authorize-callback', {
      code,
      codeVerifier: verifier,
      redirectUri,
    });
    expect(spent.statusCode).toBe(400);
    expect(spent.json().response.userFacingMessage).toMatch(/did not accept the authorization/);
  });

  it('shows a refused consent with the text of the spec', async () => {
    const res = await post('/rest/external-connections/oauth/notion/authorize-callback', {
      error: 'access_denied',
      connectionItems: {},
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().response.userFacingMessage).toBe('Notion authorization was denied. Please try again.');
  });

  it('hands on what Notion answers when the person cancels on its consent screen', async () => {
    const state = randomBytes(16).toString('hex');
    const start = await post('/rest/external-connections/oauth/notion/authorize-url', {
      codeChallenge: 'c'.repeat(43),
      state,
      redirectUri,
    });
    sim.state.oauthConsent = 'deny';
    try {
      const consented = await fetch(start.json().url, { redirect: 'manual' });
      const back = new URL(consented.headers.get('location') as string);
      expect(back.searchParams.get('state')).toBe(state);
      expect(back.searchParams.get('code')).toBeNull();
      const res = await post('/rest/external-connections/oauth/notion/authorize-callback', {
        error: back.searchParams.get('error'),
        redirectUri,
        connectionItems: {},
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().response).toMatchObject({
        code: 'access_denied',
        userFacingMessage: 'Notion authorization was denied. Please try again.',
      });
    } finally {
      sim.state.oauthConsent = 'allow';
    }
  });

  it('renews a refused access token with the refresh token and saves the rotated pair; a spent one asks to sign in again', async () => {
    const res = await post('/rest/external-connections/oauth/notion/authorize-callback', {
      code: await signIn(),
      codeVerifier: verifier,
      redirectUri,
      connectionItems: {},
    });
    expect(res.statusCode, res.body).toBe(201);
    const stored = async () => {
      const row = await t.ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', res.json().id)
        .executeTakeFirstOrThrow();
      return openSecrets(t.ctx, row).connectionItems;
    };
    const items = await stored();
    expect(items.refreshToken).toMatch(/^nrt_/);
    const bases = () =>
      t.app.inject({
        method: 'PATCH',
        url: `/rest/external-connections/${res.json().id}/fetch-base-previews`,
        headers: { ...user.auth, ...json },
        payload: {},
      });
    const first = await bases();
    expect(first.statusCode, first.body).toBe(200);

    // Notion refuses the access token: one refresh, the new pair sealed into the connection at once.
    sim.revokeToken(items.accessToken as string);
    const refreshes = () => sim.requestLog.count({ method: 'POST', path: '/v1/oauth/token' });
    const before = refreshes();
    const renewed = await bases();
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect(renewed.json().basePreviews).toEqual(first.json().basePreviews);
    expect(refreshes()).toBe(before + 1);
    const next = await stored();
    expect(next.accessToken).toMatch(/^ntn_/);
    expect(next.accessToken).not.toBe(items.accessToken);
    expect(next.refreshToken).not.toBe(items.refreshToken);
    expect(next.workspaceName).toBe(items.workspaceName);
    expect((await bases()).statusCode).toBe(200);
    expect(refreshes()).toBe(before + 1);

    // The refresh token is spent elsewhere (rotated out) and the access token refused: invalid_grant.
    const spent = await fetch(`${sim.url}/v1/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: next.refreshToken }),
    });
    expect(spent.status).toBe(200);
    sim.revokeToken(next.accessToken as string);
    const refused = await bases();
    expect(refused.statusCode).toBe(400);
    expect(refused.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: 'Notion no longer accepts Lockstep’s sign-in. Sign in with Notion again.',
    });
  });
});
