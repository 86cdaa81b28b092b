import { createHash, randomBytes } from 'node:crypto';
import {
  type GoogleSheetsSimulator,
  type NotionSimulator,
  startGoogleSheetsSimulator,
  startNotionSimulator,
} from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { openSecrets } from '../services/external-connections';

// Token refresh during runs: Google Sheets (left) <-> Notion (right), both connected by signing in
// (OAuth) through the real routes, run by the real job queue. When the apps refuse the access tokens
// mid-sync, the runs renew them and seal the new tokens (Notion's rotated refresh token too) into the
// connections; a refresh token the app no longer accepts breaks the connection and tells the user.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sheets: GoogleSheetsSimulator;
let notion: NotionSimulator;
const notionClient = { clientId: 'lockstep-notion-renewal', clientSecret: 'secret_notion_renewal' };
const googleClient = {
  clientId: 'lockstep-renewal.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-renewal',
};

/** REST calls as the signed-in user (set in beforeAll). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** Signs in to an app the way the web app's popup does, through the simulator's consent screen. */
async function signIn(type: 'notion' | 'google_sheets'): Promise<{ id: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = `http://localhost:3999/oauth/${type}/callback`;
  const { url } = await api('POST', `/rest/external-connections/oauth/${type}/authorize-url`, {
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    state: randomBytes(16).toString('hex'),
    redirectUri,
  });
  const consented = await fetch(url, { redirect: 'manual' });
  const code = new URL(consented.headers.get('location') as string).searchParams.get('code');
  return api('POST', `/rest/external-connections/oauth/${type}/authorize-callback`, {
    code,
    codeVerifier: verifier,
    redirectUri,
    connectionItems: {},
  });
}

async function stored(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return { row, items: openSecrets(t.ctx, row).connectionItems };
}

beforeAll(async () => {
  sheets = await startGoogleSheetsSimulator({
    seed: { leads: 3 },
    oauthClients: [{ ...googleClient, redirectUris: [] }],
  });
  notion = await startNotionSimulator({
    seed: { people: 3 },
    oauthClients: [{ ...notionClient, redirectUris: [] }],
  });
  t = await createTestApp({
    LOCKSTEP_GOOGLE_API_URL: sheets.url,
    LOCKSTEP_GOOGLE_CLIENT_ID: googleClient.clientId,
    LOCKSTEP_GOOGLE_CLIENT_SECRET: googleClient.clientSecret,
    LOCKSTEP_NOTION_API_URL: notion.url,
    LOCKSTEP_NOTION_CLIENT_ID: notionClient.clientId,
    LOCKSTEP_NOTION_CLIENT_SECRET: notionClient.clientSecret,
  });
  user = await signUp(t.app, 'token-renewal@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t.close();
  await sheets.close();
  await notion.close();
});

/** The Name column of the Leads sheet (header left out). */
const leadNames = () =>
  sheets
    .values(sheets.sales?.spreadsheetId as string, 'Leads')
    .slice(1)
    .map((r) => String(r[0] ?? ''));

/** The Name (title) of each page of the People data source. */
const peopleNames = () =>
  notion.state.listPages(notion.workspace?.peopleDataSourceId as string).map((p) => {
    const props = notion.pageJson(p.id).properties as Record<string, { title?: { plain_text: string }[] }>;
    return (props.Name?.title ?? []).map((x) => x.plain_text).join('');
  });

describe('OAuth tokens renewed during runs', () => {
  it('saves the tokens a run renews on both connections, and pauses the sync when a refresh token is refused', async () => {
    const sConn = await signIn('google_sheets');
    const nConn = await signIn('notion');
    const spreadsheetId = sheets.sales?.spreadsheetId as string;
    const core = await api('POST', '/rest/core-bases', { name: 'Leads <-> People (OAuth)' });
    await api('POST', '/rest/external-bases', {
      type: 'google_sheets',
      name: 'Sales pipeline',
      remoteId: spreadsheetId,
      coreBaseId: core.id,
      externalConnectionId: sConn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'notion',
      name: 'People',
      remoteId: notion.workspace?.peopleDatabaseId,
      coreBaseId: core.id,
      externalConnectionId: nConn.id,
      side: 'right',
    });
    type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'Leads') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'People') as Table;
    const col = (tbl: Table, name: string) => tbl.externalColumns.find((x) => x.name === name)?.id as string;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Email'),
            columnMappings: ['Name', 'Email'].map((n) => ({
              leftColumnId: col(lt, n),
              rightColumnId: col(rt, n),
            })),
          },
        ],
      },
    });
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settleSync(t.ctx.db, core.id, () => peopleNames().length === 6 && leadNames().length === 6, 60_000);

    const google = (await stored(sConn.id)).items;
    const notionItems = (await stored(nConn.id)).items;
    expect(google.refreshToken).toBeTruthy();
    expect(notionItems.refreshToken).toMatch(/^nrt_/);

    // Both apps refuse the access tokens the connections hold (expired, revoked): the next run
    // renews them and seals the new ones into the connections, encrypted.
    sheets.revokeToken(google.accessToken as string);
    notion.revokeToken(notionItems.accessToken as string);
    sheets.editCell(spreadsheetId, 'Leads', 'A2', 'Renamed in Sheets');
    const [firstPage] = notion.state.listPages(notion.workspace?.peopleDataSourceId as string);
    notion.editPage(firstPage?.id as string, { Name: 'Renamed in Notion' });
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await settleSync(
      t.ctx.db,
      core.id,
      () => peopleNames().includes('Renamed in Sheets') && leadNames().includes('Renamed in Notion'),
      60_000,
    );
    const runs = await syncRuns(t.ctx.db, core.id);
    expect(runs.map((r) => r.status)).not.toContain('failed');

    const renewedGoogle = await stored(sConn.id);
    expect(renewedGoogle.row.secrets).not.toContain(renewedGoogle.items.accessToken as string);
    expect(renewedGoogle.items.accessToken).toMatch(/^ya29\./);
    expect(renewedGoogle.items.accessToken).not.toBe(google.accessToken);
    expect(renewedGoogle.items.refreshToken).toBe(google.refreshToken);
    const renewedNotion = await stored(nConn.id);
    expect(renewedNotion.row.secrets).not.toContain(renewedNotion.items.accessToken as string);
    expect(renewedNotion.items.accessToken).not.toBe(notionItems.accessToken);
    // Notion's refresh tokens are single-use: the rotated one is the one kept.
    expect(renewedNotion.items.refreshToken).not.toBe(notionItems.refreshToken);
    expect(renewedNotion.items.workspaceName).toBe(notionItems.workspaceName);

    // The saved tokens are the live ones: a run starting from them needs no refresh.
    const refreshes = () =>
      notion.requestLog.count({ method: 'POST', path: '/v1/oauth/token' }) +
      sheets.requestLog.count({ method: 'POST', path: '/token' });
    const before = refreshes();
    const quietRuns = runs.length;
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await settleSync(
      t.ctx.db,
      core.id,
      async () => (await syncRuns(t.ctx.db, core.id)).length > quietRuns,
      60_000,
    );
    expect(refreshes()).toBe(before);

    // Notion no longer accepts the refresh token (spent elsewhere, or the person removed the
    // integration) and refuses the access token: the run stops, the connection is marked broken and
    // the sync paused with an auth_invalid issue telling the user to sign in again.
    const spent = await fetch(`${notion.url}/v1/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${notionClient.clientId}:${notionClient.clientSecret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: renewedNotion.items.refreshToken }),
    });
    expect(spent.status).toBe(200);
    notion.revokeToken(renewedNotion.items.accessToken as string);
    const failedBefore = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed').length;
    await api('POST', `/rest/core-bases/${core.id}/sync-now`, {});
    await settleSync(
      t.ctx.db,
      core.id,
      async () =>
        (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed').length > failedBefore,
      60_000,
    );
    const broken = await stored(nConn.id);
    expect(broken.row.status).toBe('broken');
    expect(broken.row.broken_reason).toBe(
      'Notion no longer accepts Lockstep’s sign-in. Sign in with Notion again.',
    );
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, code: 'auth_invalid' }))}`,
    );
    expect(issues.items).toHaveLength(1);
    expect(issues.items[0].userFacingMessage).toMatch(/Sign in with Notion again\. The sync is paused/);
    expect((await api('GET', `/rest/core-bases/${core.id}`)).syncState).toBe('off');
  }, 180_000);
});
