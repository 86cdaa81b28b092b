import { createHash } from 'node:crypto';
import { type HubSpotSimulator, startHubSpotSimulator } from '@lockstep/simulators';
import { afterEach, describe, expect, it } from 'vitest';
import { createHubSpotPort, createHubSpotRuntimeConnector, type HubSpotItems } from './port';

// The port's side of sign in with HubSpot against the simulator: the install URL, the code exchange,
// and the renewal of an expired access token (once for requests refused together), saved.
const app = {
  clientId: 'port-client',
  clientSecret: 'port-secret',
  redirectUris: ['http://localhost:5000/cb'],
};
const started: HubSpotSimulator[] = [];
afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

async function signedIn() {
  const sim = await startHubSpotSimulator({ rateLimit: false, seed: { contacts: 3 }, oauthApps: [app] });
  started.push(sim);
  const settings = {
    apiUrl: sim.url,
    oauthUrl: sim.url,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
  };
  const port = createHubSpotPort(settings);
  const verifier = 'v'.repeat(50);
  const url = port.authorizeUrl({
    redirectUri: app.redirectUris[0] as string,
    state: 's',
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
  });
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') as string);
  const items = await port.exchangeCode({
    code: back.searchParams.get('code') as string,
    codeVerifier: verifier,
    redirectUri: app.redirectUris[0] as string,
  });
  return { sim, settings, port, items };
}

const expire = (sim: HubSpotSimulator, token: string) => {
  const info = sim.state.tokens.get(token);
  if (info) info.expiresAt = 0;
};
const tokenCalls = (sim: HubSpotSimulator) =>
  sim.requestLog.count({ method: 'POST', path: '/oauth/v1/token' });

describe('HubSpot OAuth in the port', () => {
  it('exchanges the code for tokens and the hub id; the port reads the account with them', async () => {
    const { sim, port, items } = await signedIn();
    expect(items).toMatchObject({
      hubId: String(sim.state.portalId),
      refreshToken: expect.stringMatching(/^na1-/),
    });
    expect(Date.parse(items.accessTokenExpiresAt as string)).toBeGreaterThan(Date.now() + 1_700_000);
    expect(await port.listBases(items)).toEqual([
      expect.objectContaining({ remoteId: String(sim.state.portalId) }),
    ]);
  });

  it('renews an expired token once for requests refused together and saves the new items', async () => {
    const { sim, settings, items } = await signedIn();
    const saved: HubSpotItems[] = [];
    const connector = createHubSpotRuntimeConnector(settings, items, async (i) => {
      saved.push(i);
    });
    expire(sim, items.accessToken as string);
    const before = tokenCalls(sim);
    const reads = await Promise.all([
      connector.readRecords('contacts', []).then(() => connector.fieldsOf('contacts')),
      connector.fieldsOf('companies'),
      connector.fieldsOf('deals'),
    ]);
    expect(reads.every((r) => r.length > 0)).toBe(true);
    expect(tokenCalls(sim)).toBe(before + 1);
    expect(saved).toHaveLength(1);
    expect(saved[0]?.accessToken).not.toBe(items.accessToken);
    expect(saved[0]?.refreshToken).toBe(items.refreshToken);
    expect(sim.state.tokens.check(saved[0]?.accessToken).ok).toBe(true);
  });

  it('does not renew a private app token (no refresh token): the 401 reaches the caller', async () => {
    const { sim, settings } = await signedIn();
    const token = 'pat-na1-expired';
    sim.state.tokens.add({ token, scopes: [], kind: 'pat', userId: '1', expiresAt: 0 });
    const port = createHubSpotPort(settings);
    await expect(port.check({ accessToken: token })).rejects.toMatchObject({ code: 'auth_invalid' });
    expect(tokenCalls(sim)).toBe(1);
  });
});
