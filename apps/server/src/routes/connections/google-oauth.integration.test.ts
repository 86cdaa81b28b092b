import { createHash, randomBytes } from 'node:crypto';
import { type GoogleSheetsSimulator, startGoogleSheetsSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { openSecrets } from '../../services/external-connections';

// Sign in with Google for Sheets (a web server app: authorization code with PKCE, offline access)
// through the real routes, against the simulator's consent and token endpoints; then the Sheets
// and Drive APIs with the tokens, and a refused access token renewed with the refresh token.
let t: TestApp;
let sim: GoogleSheetsSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };
const redirectUri = 'http://localhost:3999/oauth/google_sheets/callback';
const client = { clientId: 'lockstep-test.apps.googleusercontent.com', clientSecret: 'GOCSPX-test' };

const post = (url: string, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { ...user.auth, ...json }, payload });

beforeAll(async () => {
  sim = await startGoogleSheetsSimulator({ oauthClients: [{ ...client, redirectUris: [redirectUri] }] });
  t = await createTestApp({
    LOCKSTEP_GOOGLE_API_URL: sim.url,
    LOCKSTEP_GOOGLE_CLIENT_ID: client.clientId,
    LOCKSTEP_GOOGLE_CLIENT_SECRET: client.clientSecret,
  });
  user = await signUp(t.app, 'google-oauth@test.test');
});
afterAll(async () => {
  await t.close();
  await sim.close();
});

async function signIn(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('hex');
  const res = await post('/rest/external-connections/oauth/google_sheets/authorize-url', {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state,
    redirectUri,
  });
  expect(res.statusCode, res.body).toBe(200);
  const url = new URL(res.json().url);
  expect(url.origin + url.pathname).toBe(`${sim.url}/o/oauth2/v2/auth`);
  expect(url.searchParams.get('access_type')).toBe('offline');
  expect(url.searchParams.get('scope')).toContain('https://www.googleapis.com/auth/drive.file');
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  const consented = await fetch(url, { redirect: 'manual' });
  const back = new URL(consented.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code') as string, verifier };
}

describe('Google OAuth for Sheets', () => {
  it('exchanges the code with its verifier, stores the tokens sealed, reads the spreadsheets, and renews a refused token', async () => {
    const { code } = await signIn();
    const wrong = await post('/rest/external-connections/oauth/google_sheets/authorize-callback', {
      code,
      codeVerifier: randomBytes(32).toString('base64url'),
      redirectUri,
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().response.userFacingMessage).toMatch(/did not accept the authorization/);

    const again = await signIn();
    const res = await post('/rest/external-connections/oauth/google_sheets/authorize-callback', {
      code: again.code,
      codeVerifier: again.verifier,
      redirectUri,
      connectionItems: {},
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'google_sheets', status: 'ok', connectionItems: {} });
    // userinfo (openid and email scopes) names the connection after the Google account.
    expect(res.json().name).toBe('Google Sheets (user-simulator@example.com)');
    expect(res.body).not.toMatch(/ya29|1\/\/0/);
    const row = await t.ctx.db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    const items = openSecrets(t.ctx, row).connectionItems;
    expect(items.accessToken).toMatch(/^ya29\./);
    expect(items.refreshToken).toMatch(/^1\/\/0/);

    const bases = () =>
      t.app.inject({
        method: 'PATCH',
        url: `/rest/external-connections/${res.json().id}/fetch-base-previews`,
        headers: { ...user.auth, ...json },
        payload: {},
      });
    const first = await bases();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().basePreviews.map((b: { name: string }) => b.name)).toContain('Sales pipeline');

    // Google refuses the access token (expired or revoked): the refresh token gets a new one.
    sim.revokeToken(items.accessToken as string);
    const tokenCalls = sim.requestLog.count({ method: 'POST', path: '/token' });
    const refused = sim.requestLog.count({ status: 401 });
    const renewed = await bases();
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect(sim.requestLog.count({ status: 401 })).toBeGreaterThan(refused);
    expect(sim.requestLog.count({ method: 'POST', path: '/token' })).toBe(tokenCalls + 1);
    expect(renewed.json().basePreviews).toEqual(first.json().basePreviews);
    // The renewed access token is sealed into the connection: the next call starts from it.
    const stored = async () =>
      openSecrets(
        t.ctx,
        await t.ctx.db
          .selectFrom('external_connection')
          .selectAll()
          .where('id', '=', res.json().id)
          .executeTakeFirstOrThrow(),
      ).connectionItems;
    const next = await stored();
    expect(next.accessToken).toMatch(/^ya29\./);
    expect(next.accessToken).not.toBe(items.accessToken);
    expect(next.refreshToken).toBe(items.refreshToken);
    expect(Number(next.tokenExpiresAt)).toBeGreaterThan(Date.now());
    expect((await bases()).statusCode).toBe(200);
    expect(sim.requestLog.count({ method: 'POST', path: '/token' })).toBe(tokenCalls + 1);

    // The person takes Lockstep's access back in their Google account: invalid_grant, sign in again.
    const revoked = await fetch(
      `${sim.url}/revoke?token=${encodeURIComponent(next.refreshToken as string)}`,
      {
        method: 'POST',
      },
    );
    expect(revoked.status).toBe(200);
    const ended = await bases();
    expect(ended.statusCode).toBe(400);
    expect(ended.json().response).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: 'Google refused the access. Reconnect your Google account.',
    });
  });

  it('shows a refused consent with the text of the spec', async () => {
    const res = await post('/rest/external-connections/oauth/google_sheets/authorize-callback', {
      error: 'access_denied',
      redirectUri,
      connectionItems: {},
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().response).toMatchObject({
      code: 'access_denied',
      userFacingMessage: 'Google Sheets authorization was denied. Please try again.',
    });
  });

  it('refuses a sign-in that does not come back to its own callback page', async () => {
    const res = await post('/rest/external-connections/oauth/google_sheets/authorize-url', {
      codeChallenge: createHash('sha256').update('x'.repeat(43)).digest('base64url'),
      state: randomBytes(16).toString('hex'),
      redirectUri: 'https://evil.example/steal',
    });
    expect(res.statusCode).toBe(400);
  });
});
