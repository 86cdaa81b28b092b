import { ManualClock, type NotionSimulator, startNotionSimulator } from '@lockstep/simulators';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorError } from '../sdk/connector';
import {
  createNotionPort,
  createNotionRuntimeConnector,
  type NotionItems,
  type NotionSettings,
} from './port';

// Notion OAuth tokens in the port and the runtime connector: an access token Notion refuses (401) is
// renewed once with the refresh token, the rotated pair handed to `save`; a refresh token Notion no
// longer accepts is an auth_invalid the user can act on; an internal token is never "renewed".
const client = { clientId: 'lockstep-port-test', clientSecret: 'secret_port_test' };
const sims: NotionSimulator[] = [];
afterEach(async () => {
  while (sims.length) await sims.pop()?.close();
});

async function start(clock = new ManualClock()) {
  const sim = await startNotionSimulator({
    clock,
    seed: { people: 3 },
    rateLimit: false,
    oauthClients: [{ ...client, redirectUris: [] }],
    oauthAccessTokenTtlMs: 3_600_000,
  });
  sims.push(sim);
  const settings: NotionSettings = {
    apiUrl: sim.url,
    ...client,
    rateLimit: { scope: 'token', windows: [{ limit: 1000, windowMs: 1000 }] },
    http: { sleep: async () => {} },
  };
  const grant = sim.state.grantOAuth({ clientId: client.clientId });
  const items: NotionItems = { accessToken: grant.access_token, refreshToken: grant.refresh_token };
  return { sim, clock, settings, items };
}

const refreshes = (sim: NotionSimulator) => sim.requestLog.count({ method: 'POST', path: '/v1/oauth/token' });

describe('Notion OAuth token renewal', () => {
  it('renews an expired access token once for concurrent reads and saves the rotated pair', async () => {
    const { sim, clock, settings, items } = await start();
    const saved: NotionItems[] = [];
    const connector = createNotionRuntimeConnector(settings, items, async (next) => {
      saved.push(next);
    });
    const ds = sim.workspace?.peopleDataSourceId as string;
    expect((await connector.read(ds, null, { pageSize: 10 })).records).toHaveLength(3);
    expect(saved).toEqual([]);

    clock.advance(3_600_000);
    const pages = await Promise.all([1, 2, 3].map(() => connector.read(ds, null, { pageSize: 10 })));
    for (const page of pages) expect(page.records).toHaveLength(3);
    expect(refreshes(sim)).toBe(1);
    expect(saved).toHaveLength(1);
    expect(saved[0]?.accessToken).toMatch(/^ntn_/);
    expect(saved[0]?.accessToken).not.toBe(items.accessToken);
    expect(saved[0]?.refreshToken).not.toBe(items.refreshToken);

    // A connector built later from the items it was given (not yet reloaded) starts from the newest pair.
    const later = createNotionRuntimeConnector(settings, items, async () => {});
    expect((await later.read(ds, null, { pageSize: 10 })).records).toHaveLength(3);
    expect(refreshes(sim)).toBe(1);
  });

  it('turns a refused refresh token into auth_invalid with a message to sign in again', async () => {
    const { sim, settings, items } = await start();
    const port = createNotionPort(settings);
    const saved: NotionItems[] = [];
    expect((await port.listBases(items, async (n) => void saved.push(n))).length).toBeGreaterThan(0);
    // The refresh token is spent by someone else, then the access token is refused.
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
    const spent = await fetch(`${sim.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: items.refreshToken }),
    });
    expect(spent.status).toBe(200);
    sim.revokeToken(items.accessToken as string);
    const error = await port.listBases(items).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error).toMatchObject({
      code: 'auth_invalid',
      userFacingMessage: 'Notion no longer accepts Lockstep’s sign-in. Sign in with Notion again.',
    });
    expect((error as Error).message).toMatch(/invalid_grant/);
    expect(saved).toEqual([]);
  });

  it('does not try to renew an internal integration token, nor without the OAuth client', async () => {
    const { sim, settings, items } = await start();
    sim.revokeToken(sim.token);
    const internal = createNotionPort(settings).check({ internalToken: sim.token, refreshToken: 'nrt_x' });
    await expect(internal).rejects.toMatchObject({ code: 'auth_invalid' });
    sim.revokeToken(items.accessToken as string);
    const noClient = createNotionPort({ ...settings, clientId: undefined, clientSecret: undefined });
    await expect(noClient.check(items)).rejects.toMatchObject({ code: 'auth_invalid' });
    expect(refreshes(sim)).toBe(0);
  });

  it('reads the token answer of a code exchange, and says when Notion refuses the code', async () => {
    const { sim, settings } = await start();
    const port = createNotionPort(settings);
    const authorize = await fetch(
      port.authorizeUrl({ redirectUri: 'http://localhost/oauth/notion/callback', state: 's'.repeat(16) }),
      { redirect: 'manual' },
    );
    const code = new URL(authorize.headers.get('location') as string).searchParams.get('code') as string;
    const items = await port.exchangeCode({ code, redirectUri: 'http://localhost/oauth/notion/callback' });
    expect(items).toMatchObject({
      accessToken: expect.stringMatching(/^ntn_/),
      refreshToken: expect.stringMatching(/^nrt_/),
      workspaceName: sim.state.workspaceName,
      workspaceId: sim.state.workspaceId,
      botId: expect.any(String),
    });
    await expect(
      port.exchangeCode({ code, redirectUri: 'http://localhost/oauth/notion/callback' }),
    ).rejects.toMatchObject({
      code: 'validation',
      message: expect.stringMatching(/^invalid_grant: /),
      userFacingMessage: 'Notion did not accept the authorization. Please sign in with Notion again.',
    });
  });
});
