import { type PipedriveSimulator, startPipedriveSimulator } from '@lockstep/simulators';
import { afterEach, describe, expect, it } from 'vitest';
import { createPipedrivePort, createPipedriveRuntimeConnector, type PipedriveItems } from './port';

// The port's side of sign in with Pipedrive against the simulator: the authorize URL, the code
// exchange (HTTP Basic client auth), the API on the company host the token answer names, and the
// renewal of an expired access token (once for requests refused together), saved.
const client = {
  clientId: 'pd-port-client',
  clientSecret: 'pd-port-secret',
  redirectUri: 'http://localhost:5000/oauth/pipedrive/callback',
};
const started: PipedriveSimulator[] = [];
afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

async function signedIn() {
  const sim = await startPipedriveSimulator({
    rateLimit: false,
    seed: { persons: 3 },
    oauthClients: [client],
  });
  started.push(sim);
  const settings = {
    apiUrl: sim.url,
    oauthUrl: sim.url,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    allowCustomBaseUrl: true,
    client: { perTwoSeconds: 0, maxAttempts: 1 },
  };
  const port = createPipedrivePort(settings);
  const url = new URL(port.authorizeUrl({ redirectUri: client.redirectUri, state: 'state-123' }));
  expect(url.origin + url.pathname).toBe(`${sim.url}/oauth/authorize`);
  expect(Object.fromEntries(url.searchParams)).toEqual({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    state: 'state-123',
  });
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') as string);
  expect(back.searchParams.get('state')).toBe('state-123');
  const items = await port.exchangeCode({
    code: back.searchParams.get('code') as string,
    redirectUri: client.redirectUri,
  });
  return { sim, settings, port, items };
}

const expire = (sim: PipedriveSimulator, token: string) => {
  const info = sim.state.tokens.get(token);
  if (info) info.expiresAt = 0;
};
const tokenCalls = (sim: PipedriveSimulator) =>
  sim.requestLog.count({ method: 'POST', path: '/oauth/token' });

describe('Pipedrive OAuth in the port', () => {
  it('exchanges the code for tokens and the company host; reads go there with the bearer token', async () => {
    const { sim, port, items } = await signedIn();
    expect(items).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      apiDomain: sim.companyUrl,
      scope: expect.stringContaining('contacts'),
    });
    expect(Date.parse(items.accessTokenExpiresAt as string)).toBeGreaterThan(Date.now() + 3_500_000);
    const onCompanyHost = sim.companyRequestLog.count({ path: '/api/' });
    expect(await port.listBases(items)).toEqual([
      expect.objectContaining({ remoteId: String(sim.state.companyId) }),
    ]);
    expect(sim.companyRequestLog.count({ method: 'GET', path: '/api/v1/users/me' })).toBe(1);
    expect(sim.companyRequestLog.count({ path: '/api/' })).toBe(onCompanyHost + 1);
  });

  it('refuses a spent code or a wrong client secret', async () => {
    const { sim, settings } = await signedIn();
    const code = sim.oauth.authorize(client.clientId, client.redirectUri);
    const wrong = createPipedrivePort({ ...settings, clientSecret: 'nope' });
    await expect(wrong.exchangeCode({ code, redirectUri: client.redirectUri })).rejects.toMatchObject({
      code: 'auth_invalid',
    });
    const port = createPipedrivePort(settings);
    await port.exchangeCode({ code, redirectUri: client.redirectUri });
    await expect(port.exchangeCode({ code, redirectUri: client.redirectUri })).rejects.toMatchObject({
      code: 'validation',
      userFacingMessage: expect.stringMatching(/did not accept the authorization/),
    });
  });

  it('renews an expired token once for requests refused together and saves the new items', async () => {
    const { sim, settings, items } = await signedIn();
    const saved: PipedriveItems[] = [];
    const connector = createPipedriveRuntimeConnector(settings, items, async (i) => {
      saved.push(i);
    });
    expire(sim, items.accessToken as string);
    const before = tokenCalls(sim);
    const reads = await Promise.all([
      connector.fieldsOf('persons'),
      connector.fieldsOf('organizations'),
      connector.fieldsOf('deals'),
    ]);
    expect(reads.every((r) => r.length > 0)).toBe(true);
    expect(tokenCalls(sim)).toBe(before + 1);
    expect(saved).toHaveLength(1);
    expect(saved[0]?.accessToken).not.toBe(items.accessToken);
    expect(saved[0]?.refreshToken).toBe(items.refreshToken);
    expect(saved[0]?.apiDomain).toBe(sim.companyUrl);
    expect(sim.state.tokens.check(saved[0]?.accessToken).ok).toBe(true);
  });

  it('an API token is sent as x-api-token to the API host and never renewed', async () => {
    const { sim, settings } = await signedIn();
    const port = createPipedrivePort(settings);
    const before = sim.companyRequestLog.total;
    expect(await port.check({ apiToken: sim.token })).toEqual({ accountEmail: expect.any(String) });
    expect(sim.companyRequestLog.total).toBe(before);
    sim.revokeToken(sim.token);
    await expect(port.check({ apiToken: sim.token })).rejects.toMatchObject({ code: 'auth_invalid' });
    expect(tokenCalls(sim)).toBe(1);
  });

  it('an uninstalled app (refresh token revoked) asks to sign in again', async () => {
    const { sim, port, items } = await signedIn();
    sim.oauth.refreshTokens.delete(items.refreshToken as string);
    expire(sim, items.accessToken as string);
    await expect(port.check(items)).rejects.toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: expect.stringMatching(/Sign in with Pipedrive again/),
    });
  });

  it('calls no company host outside pipedrive.com unless the server allows custom addresses', async () => {
    const { settings, items } = await signedIn();
    const production = createPipedrivePort({ ...settings, allowCustomBaseUrl: false });
    await expect(production.check({ ...items, apiDomain: 'http://169.254.169.254' })).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(
      production.check({ ...items, apiDomain: 'https://evil.example/.pipedrive.com' }),
    ).rejects.toMatchObject({ code: 'permission_denied' });
  });
});
