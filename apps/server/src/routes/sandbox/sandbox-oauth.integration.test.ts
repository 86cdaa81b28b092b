import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { openSecrets } from '../../services/external-connections';

// With this server's Notion and Google OAuth clients configured, the sandbox apps connect as signing
// in does: access and refresh tokens issued by the simulators to those clients, renewed there when
// refused, and the renewed tokens saved on the connection. Each user still sees only their own data.
let t: TestApp;
let ada: Awaited<ReturnType<typeof signUp>>;
let bob: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await createTestApp({
    LOCKSTEP_SANDBOX: '1',
    LOCKSTEP_NOTION_CLIENT_ID: 'lockstep-notion-sandbox',
    LOCKSTEP_NOTION_CLIENT_SECRET: 'secret_notion_sandbox',
    LOCKSTEP_GOOGLE_CLIENT_ID: 'lockstep-sandbox.apps.googleusercontent.com',
    LOCKSTEP_GOOGLE_CLIENT_SECRET: 'GOCSPX-sandbox',
  });
  ada = await signUp(t.app, 'sandbox-oauth-ada@test.test');
  bob = await signUp(t.app, 'sandbox-oauth-bob@test.test');
});
afterAll(async () => t.close());

/** REST calls as one of the two users. */
const api = (user: typeof ada, ...call: Parameters<Api>) => apiAs(t.app, user.auth)(...call);

async function stored(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return openSecrets(t.ctx, row).connectionItems;
}

const bases = async (user: typeof ada, id: string) =>
  (await api(user, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews as {
    remoteId: string;
    name: string;
  }[];

describe('sandbox apps signed in with OAuth', () => {
  it('gives a Notion sandbox OAuth tokens limited to its own workspace, renewed and saved when refused', async () => {
    const conn = await api(ada, 'POST', '/rest/sandbox-apps/notion/connect');
    expect(conn).toMatchObject({ type: 'notion', name: 'Notion Sandbox', status: 'ok' });
    expect(conn.connectionItems.accessToken).toBeUndefined();
    const items = await stored(conn.id);
    expect(items).toMatchObject({
      accessToken: expect.stringMatching(/^ntn_/),
      refreshToken: expect.stringMatching(/^nrt_/),
    });
    expect(items.internalToken).toBeUndefined();
    const mine = await bases(ada, conn.id);
    expect(mine.map((b) => b.name).sort()).toEqual(['Companies', 'People']);
    const other = await api(bob, 'POST', '/rest/sandbox-apps/notion/connect');
    for (const b of await bases(bob, other.id)) expect(mine.map((x) => x.remoteId)).not.toContain(b.remoteId);

    t.ctx.sandbox?.notion?.revokeToken(items.accessToken as string);
    expect(await bases(ada, conn.id)).toEqual(mine);
    const renewed = await stored(conn.id);
    expect(renewed.accessToken).not.toBe(items.accessToken);
    expect(renewed.refreshToken).not.toBe(items.refreshToken);
    // The renewed grant keeps to the same workspace.
    expect(await bases(ada, conn.id)).toEqual(mine);
  });

  it('gives a Google Sheets sandbox an offline grant, its access token renewed at the simulator and saved', async () => {
    const conn = await api(ada, 'POST', '/rest/sandbox-apps/google_sheets/connect');
    expect(conn).toMatchObject({ type: 'google_sheets', name: 'Google Sheets Sandbox', status: 'ok' });
    const items = await stored(conn.id);
    expect(items).toMatchObject({
      accessToken: expect.stringMatching(/^ya29\./),
      refreshToken: expect.stringMatching(/^1\/\/0/),
      baseUrl: conn.connectionItems.baseUrl,
    });
    const mine = await bases(ada, conn.id);
    expect(mine.map((b) => b.name)).toContain('Sales pipeline');
    const sim = t.ctx.sandbox?.googleSheets.find((s) => s.url === conn.connectionItems.baseUrl);
    sim?.revokeToken(items.accessToken as string);
    expect(await bases(ada, conn.id)).toEqual(mine);
    const renewed = await stored(conn.id);
    expect(renewed.accessToken).toMatch(/^ya29\./);
    expect(renewed.accessToken).not.toBe(items.accessToken);
    expect(renewed.refreshToken).toBe(items.refreshToken);
    const email = await api(ada, 'GET', `/rest/connector-rpc/get-user-email?externalConnectionId=${conn.id}`);
    expect(email.email).toBe('user-simulator@example.com');
  });
});
