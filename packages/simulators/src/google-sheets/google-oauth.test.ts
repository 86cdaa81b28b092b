import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { googleSubject } from './google-oauth.ts';
import { type GoogleSheetsSimulator, SCOPES, startGoogleSheetsSimulator } from './index.ts';

// Google's OAuth as the server's Google sign-in uses it: consent with PKCE and offline access,
// the code for tokens, the refresh grant and its errors, and the userinfo endpoint that names the account.
const started: GoogleSheetsSimulator[] = [];
afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

const client = {
  clientId: 'lockstep-test.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-test',
  redirectUris: ['http://localhost/cb'],
};
const enc = encodeURIComponent;

async function start() {
  const sim = await startGoogleSheetsSimulator({ quota: false, oauthClients: [client] });
  started.push(sim);
  return sim;
}

async function token(sim: GoogleSheetsSimulator, form: Record<string, string>) {
  const res = await fetch(`${sim.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function userinfo(sim: GoogleSheetsSimulator, accessToken: string | null) {
  const res = await fetch(`${sim.url}/oauth2/v3/userinfo`, {
    headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {},
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Consent (approved) for `scope`; the code and the verifier it was asked with. */
async function consent(sim: GoogleSheetsSimulator, scope: string) {
  const verifier = 'k'.repeat(64);
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const res = await fetch(
    `${sim.url}/o/oauth2/v2/auth?client_id=${enc(client.clientId)}&redirect_uri=${enc('http://localhost/cb')}&response_type=code&access_type=offline&prompt=consent&state=st&scope=${enc(scope)}&code_challenge=${challenge}&code_challenge_method=S256`,
    { redirect: 'manual' },
  );
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe('st');
  return { code: back.searchParams.get('code') as string, verifier };
}

describe('Google OAuth in the simulator', () => {
  it('names the account through userinfo when the email scope was granted, with the renewed token too', async () => {
    const sim = await start();
    const { code, verifier } = await consent(sim, `${SCOPES.driveFile} openid email`);
    const granted = await token(sim, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'http://localhost/cb',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    const me = await userinfo(sim, granted.body.access_token as string);
    expect(me).toEqual({
      status: 200,
      body: {
        sub: googleSubject('user-simulator@example.com'),
        email: 'user-simulator@example.com',
        email_verified: true,
      },
    });

    // The access token is revoked: refused by userinfo too; the refresh token gives a new one.
    sim.revokeToken(granted.body.access_token as string);
    expect(await userinfo(sim, granted.body.access_token as string)).toEqual({
      status: 401,
      body: { error: 'invalid_request', error_description: 'Invalid Credentials' },
    });
    const refreshed = await token(sim, {
      grant_type: 'refresh_token',
      refresh_token: granted.body.refresh_token as string,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(refreshed.status).toBe(200);
    expect((await userinfo(sim, refreshed.body.access_token as string)).body.email).toBe(
      'user-simulator@example.com',
    );

    // Revoking the refresh token ends the grant: invalid_grant, as Google says it.
    const revoked = await fetch(`${sim.url}/revoke?token=${enc(granted.body.refresh_token as string)}`, {
      method: 'POST',
    });
    expect(revoked.status).toBe(200);
    expect(
      await token(sim, {
        grant_type: 'refresh_token',
        refresh_token: granted.body.refresh_token as string,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    ).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' },
    });
  });

  it('says nothing of the account without the openid or email scopes, and refuses a wrong client secret', async () => {
    const sim = await start();
    expect((await userinfo(sim, sim.token)).status).toBe(403);
    expect((await userinfo(sim, null)).status).toBe(401);
    const { code, verifier } = await consent(sim, `${SCOPES.driveFile} openid`);
    const wrong = await token(sim, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'http://localhost/cb',
      client_id: client.clientId,
      client_secret: 'GOCSPX-wrong',
    });
    expect(wrong).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'Unauthorized' },
    });
    const granted = await token(sim, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'http://localhost/cb',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    const me = await userinfo(sim, granted.body.access_token as string);
    expect(me.status).toBe(200);
    expect(me.body.email).toBeUndefined();
    expect(me.body.sub).toMatch(/^\d{21}$/);
  });
});
