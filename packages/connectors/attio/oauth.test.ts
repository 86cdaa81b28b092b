import { type AttioSimulator, startAttioSimulator } from '@lockstep/simulators';
import { afterEach, describe, expect, it } from 'vitest';
import { createAttioPort } from './port';

// The port's side of sign in with Attio against the simulator: the authorize URL, the code
// exchange and its refusals, and the token it gives reading the workspace.
const app = {
  clientId: 'attio-port-client',
  clientSecret: 'attio-port-secret',
  redirectUris: ['http://localhost:5000/cb'],
};
const redirectUri = app.redirectUris[0] as string;
const started: AttioSimulator[] = [];
afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

async function setUp() {
  const sim = await startAttioSimulator({ rateLimit: false, seed: false, defaultToken: false, oauth: app });
  started.push(sim);
  const settings = {
    apiUrl: sim.url,
    oauthUrl: sim.url,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
  };
  const code = async (port = createAttioPort(settings)) => {
    const url = port.authorizeUrl({ redirectUri, state: 'st' });
    const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') as string);
    return back.searchParams.get('code') as string;
  };
  return { sim, settings, code };
}

describe('Attio OAuth in the port', () => {
  it('builds the authorize URL and exchanges the code for a token that reads the workspace', async () => {
    const { sim, settings, code } = await setUp();
    const port = createAttioPort(settings);
    const url = new URL(port.authorizeUrl({ redirectUri, state: 'st' }));
    expect(url.origin + url.pathname).toBe(`${sim.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: redirectUri,
      state: 'st',
    });
    const items = await port.exchangeCode({ code: await code(), redirectUri });
    expect(Object.keys(items)).toEqual(['accessToken']);
    expect(sim.state.tokens.get(items.accessToken as string)?.kind).toBe('oauth');
    expect(await port.listBases(items)).toEqual([
      expect.objectContaining({ remoteId: sim.state.workspace.id }),
    ]);
  });

  it('refuses a wrong client secret, another redirect URI and a spent code', async () => {
    const { settings, code } = await setUp();
    const wrong = createAttioPort({ ...settings, clientSecret: 'nope' });
    await expect(wrong.exchangeCode({ code: await code(), redirectUri })).rejects.toMatchObject({
      code: 'auth_invalid',
    });
    const port = createAttioPort(settings);
    await expect(
      port.exchangeCode({ code: await code(), redirectUri: 'http://localhost:5000/other' }),
    ).rejects.toMatchObject({
      code: 'validation',
      userFacingMessage: expect.stringMatching(/sign in with Attio again/),
    });
    const once = await code();
    await port.exchangeCode({ code: once, redirectUri });
    await expect(port.exchangeCode({ code: once, redirectUri })).rejects.toMatchObject({
      code: 'validation',
    });
  });

  it('says what to configure when the server has no Attio app', async () => {
    const port = createAttioPort({});
    expect(() => port.authorizeUrl({ redirectUri, state: 'st' })).toThrow(
      expect.objectContaining({ userFacingMessage: expect.stringMatching(/LOCKSTEP_ATTIO_CLIENT_ID/) }),
    );
  });
});
