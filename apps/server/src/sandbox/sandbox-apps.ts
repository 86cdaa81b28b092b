import { randomBytes, randomInt } from 'node:crypto';
import type { ConnectorType } from '@lockstep/contract';
import {
  type AffinitySimulator,
  type AirtableSimulator,
  type AttioSimulator,
  GOOGLE_SHEETS_DRIVE_TOKEN,
  GOOGLE_SHEETS_SCOPES,
  type GoogleSheetsSimulator,
  HUBSPOT_ALL_SCOPES,
  type HubSpotSimulator,
  type MemberstackSimulator,
  type NotionSimulator,
  type PipedriveSimulator,
  type SalesforceSimulator,
  type StripeSimulator,
  seedNotionWorkspace,
  startAffinitySimulator,
  startAirtableSimulator,
  startAttioSimulator,
  startGoogleSheetsSimulator,
  startHubSpotSimulator,
  startMemberstackSimulator,
  startNotionSimulator,
  startPipedriveSimulator,
  startSalesforceSimulator,
  startStripeSimulator,
  startWebflowSimulator,
  type WebflowSimulator,
} from '@lockstep/simulators';

/**
 * Sandbox apps: simulators of SaaS apps that this server runs itself (the embedded default, or
 * LOCKSTEP_SANDBOX=1), so a sync can be tried without an account at the app. Each connect gets its
 * own seeded base and a token that reaches only that base, so users never see each other's
 * sandbox. The data lives in this process's memory: it resets when the server restarts.
 */
export type SandboxApp = { connectorType: ConnectorType; displayName: string; description: string };

export type SandboxApps = {
  list(): SandboxApp[];
  /** A fresh sandbox account: the connection's name and items. */
  connect(type: ConnectorType): Promise<{ name: string; items: Record<string, string> } | null>;
  /** The API URLs of the running simulators (connections may point there). */
  urls(): string[];
  airtable: AirtableSimulator | null;
  notion: NotionSimulator | null;
  /** Google Sheets sandboxes, one simulator per connect (drive.file visibility is not per user). */
  googleSheets: GoogleSheetsSimulator[];
  /** HubSpot sandboxes, one simulator (one portal) per connect. */
  hubspot: HubSpotSimulator[];
  /** Pipedrive sandboxes, one simulator (one company) per connect. */
  pipedrive: PipedriveSimulator[];
  /** Attio sandboxes, one simulator (one workspace) per connect. */
  attio: AttioSimulator[];
  /** Salesforce sandboxes, one simulator (one org) per connect. */
  salesforce: SalesforceSimulator[];
  /** Affinity sandboxes, one simulator (one account) per connect. */
  affinity: AffinitySimulator[];
  /** Webflow sandboxes, one simulator (one site) per connect. */
  webflow: WebflowSimulator[];
  /** Stripe sandboxes, one simulator (one account, test mode) per connect. */
  stripe: StripeSimulator[];
  /** Memberstack sandboxes, one simulator (one app, test mode) per connect. */
  memberstack: MemberstackSimulator[];
  close(): Promise<void>;
};

const AIRTABLE: SandboxApp = {
  connectorType: 'airtable',
  displayName: 'Airtable Sandbox',
  description:
    'A simulated Airtable account with a CRM base (Companies, Contacts, Deals), running inside this server. Data resets when the server restarts.',
};

const NOTION: SandboxApp = {
  connectorType: 'notion',
  displayName: 'Notion Sandbox',
  description:
    'A simulated Notion workspace with People and Companies databases, running inside this server. Data resets when the server restarts.',
};

const GOOGLE_SHEETS: SandboxApp = {
  connectorType: 'google_sheets',
  displayName: 'Google Sheets Sandbox',
  description:
    'A simulated Google account with a "Sales pipeline" spreadsheet (Leads, Companies), running inside this server. Data resets when the server restarts.',
};

const HUBSPOT: SandboxApp = {
  connectorType: 'hubspot',
  displayName: 'HubSpot Sandbox',
  description:
    'A simulated HubSpot account (portal) with contacts, companies and deals, running inside this server. Data resets when the server restarts.',
};

const PIPEDRIVE: SandboxApp = {
  connectorType: 'pipedrive',
  displayName: 'Pipedrive Sandbox',
  description:
    'A simulated Pipedrive company with persons, organizations and deals, running inside this server. Data resets when the server restarts.',
};

const ATTIO: SandboxApp = {
  connectorType: 'attio',
  displayName: 'Attio Sandbox',
  description:
    'A simulated Attio workspace with people, companies, deals and projects, running inside this server. Data resets when the server restarts.',
};

const SALESFORCE: SandboxApp = {
  connectorType: 'salesforce',
  displayName: 'Salesforce Sandbox',
  description:
    'A simulated Salesforce org with accounts, contacts, leads, opportunities and projects, running inside this server. Data resets when the server restarts.',
};

const AFFINITY: SandboxApp = {
  connectorType: 'affinity',
  displayName: 'Affinity Sandbox',
  description:
    'A simulated Affinity account (a venture firm) with people, companies, opportunities and lists, running inside this server. Data resets when the server restarts.',
};

const WEBFLOW: SandboxApp = {
  connectorType: 'webflow',
  displayName: 'Webflow Sandbox',
  description:
    'A simulated Webflow site with Companies, Contacts and Deals CMS collections, running inside this server. Data resets when the server restarts.',
};

const STRIPE: SandboxApp = {
  connectorType: 'stripe',
  displayName: 'Stripe Sandbox',
  description:
    'A simulated Stripe account in test mode with customers, products, prices and subscriptions, running inside this server. Data resets when the server restarts.',
};

const MEMBERSTACK: SandboxApp = {
  connectorType: 'memberstack',
  displayName: 'Memberstack Sandbox',
  description:
    'A simulated Memberstack app in test mode with members (names and companies in custom fields) and plans, running inside this server. Unlike a real test mode it is not limited to 50 members. Data resets when the server restarts.',
};

/** Sandboxes of one app kept at once (one simulator per connect); beyond it the oldest is closed (its connection reports it gone). */
const MAX_SANDBOXES_PER_APP = 100;

/** Keeps a new sandbox's simulator in its app's list, closing the oldest beyond the cap. */
async function keep<S extends { close(): Promise<void> }>(list: S[], sim: S) {
  list.push(sim);
  while (list.length > MAX_SANDBOXES_PER_APP) await list.shift()?.close();
}

/** An OAuth client of this server (its id and secret as the app knows them). */
export type SandboxOAuthClient = { clientId: string; clientSecret: string };

/**
 * A Google grant as a person consenting on the simulator's screen would make it (offline access):
 * the authorize redirect's code exchanged at its token endpoint.
 */
async function googleSandboxGrant(
  url: string,
  client: SandboxOAuthClient,
  scopes: string[],
): Promise<Record<string, string>> {
  const redirectUri = `${url}/sandbox/callback`;
  const authorize = new URL('/o/oauth2/v2/auth', url);
  for (const [k, v] of Object.entries({
    client_id: client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: scopes.join(' '),
    access_type: 'offline',
    prompt: 'consent',
  }))
    authorize.searchParams.set(k, v);
  const consent = await fetch(authorize, { redirect: 'manual' });
  const code = new URL(consent.headers.get('location') ?? '', url).searchParams.get('code');
  if (!code) throw new Error(`Google sandbox consent failed (${consent.status})`);
  const res = await fetch(new URL('/token', url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }).toString(),
  });
  const body = (await res.json()) as { access_token?: string; refresh_token?: string; expires_in?: number };
  if (!res.ok || !body.access_token || !body.refresh_token)
    throw new Error(`Google sandbox token exchange failed (${res.status})`);
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    tokenExpiresAt: String(Date.now() + (body.expires_in ?? 3599) * 1000),
  };
}

/**
 * Only one process runs the simulator: separate api and worker processes would not share it.
 * With this server's Notion and Google OAuth clients (`oauth`), their simulators know them and a
 * sandbox connects as signing in would (access and refresh tokens, renewed at the simulator as at
 * the app); without them, with a token that does not expire.
 */
export async function startSandboxApps(
  options: {
    contacts?: number;
    log?: (line: string) => void;
    oauth?: { notion?: SandboxOAuthClient; google?: SandboxOAuthClient };
  } = {},
): Promise<SandboxApps> {
  const airtable = await startAirtableSimulator({ seed: false, defaultToken: false });
  options.log?.(`Sandbox apps: Airtable simulator at ${airtable.url}`);
  const notionClient = options.oauth?.notion;
  const googleClient = options.oauth?.google;
  const notion = await startNotionSimulator({
    seed: false,
    ...(notionClient ? { oauthClients: [{ ...notionClient, redirectUris: [] }] } : {}),
  });
  // The simulator's own all-access token must not reach every user's sandbox.
  notion.revokeToken(notion.token);
  options.log?.(`Sandbox apps: Notion simulator at ${notion.url}`);
  const sheets: GoogleSheetsSimulator[] = [];
  const hubspots: HubSpotSimulator[] = [];
  const pipedrives: PipedriveSimulator[] = [];
  const attios: AttioSimulator[] = [];
  const salesforces: SalesforceSimulator[] = [];
  const affinities: AffinitySimulator[] = [];
  const webflows: WebflowSimulator[] = [];
  const stripes: StripeSimulator[] = [];
  const memberstacks: MemberstackSimulator[] = [];
  const secret = () => `${randomBytes(7).toString('hex')}${randomBytes(24).toString('hex')}`;
  return {
    airtable,
    notion,
    googleSheets: sheets,
    hubspot: hubspots,
    pipedrive: pipedrives,
    attio: attios,
    salesforce: salesforces,
    affinity: affinities,
    webflow: webflows,
    stripe: stripes,
    memberstack: memberstacks,
    list: () => [
      AIRTABLE,
      NOTION,
      GOOGLE_SHEETS,
      HUBSPOT,
      PIPEDRIVE,
      ATTIO,
      SALESFORCE,
      AFFINITY,
      WEBFLOW,
      STRIPE,
      MEMBERSTACK,
    ],
    urls: () => [
      airtable.url,
      notion.url,
      ...sheets.map((s) => s.url),
      ...hubspots.map((h) => h.url),
      ...pipedrives.map((p) => p.url),
      ...attios.map((a) => a.url),
      ...salesforces.map((x) => x.url),
      ...affinities.map((x) => x.url),
      ...webflows.map((w) => w.url),
      ...stripes.map((s) => s.url),
      ...memberstacks.map((m) => m.url),
    ],
    async connect(type): Promise<{ name: string; items: Record<string, string> } | null> {
      if (type === 'airtable') {
        const crm = airtable.seed({ contacts: options.contacts ?? 50 });
        const token = `patSandbox${randomBytes(7).toString('hex')}.${randomBytes(24).toString('hex')}`;
        airtable.state.tokens.add({
          token,
          scopes: [
            'data.records:read',
            'data.records:write',
            'schema.bases:read',
            'schema.bases:write',
            'webhook:manage',
          ],
          bases: [crm.baseId],
          kind: 'pat',
          userId: airtable.state.userId,
        });
        return {
          name: AIRTABLE.displayName,
          items: { apiKey: token, baseUrl: airtable.url, sandbox: 'true' },
        };
      }
      if (type === 'notion') {
        // A workspace of one's own: its databases shared only with this integration (its own rate limit).
        const ws = seedNotionWorkspace(notion.state, { people: options.contacts ?? 50 });
        const bot = notion.state.addUser({ name: 'Lockstep Sandbox', type: 'bot' });
        const dataSources = [ws.peopleDataSourceId, ws.companiesDataSourceId];
        const sandbox = { baseUrl: notion.url, sandbox: 'true' };
        if (notionClient) {
          // Signed in with this server's public integration, sharing only this workspace's databases.
          const grant = notion.state.grantOAuth({
            clientId: notionClient.clientId,
            botId: bot.id,
            dataSources,
          });
          return {
            name: NOTION.displayName,
            items: {
              accessToken: grant.access_token,
              refreshToken: grant.refresh_token,
              botId: grant.bot_id,
              workspaceName: grant.workspace_name,
              ...sandbox,
            },
          };
        }
        const token = `ntn_sandbox${secret()}`;
        notion.state.addToken({ token, botId: bot.id, dataSources });
        return { name: NOTION.displayName, items: { internalToken: token, ...sandbox } };
      }
      if (type === 'google_sheets') {
        // The simulator's well-known tokens are revoked: only this connection's token reaches it.
        const token = `ya29.sandbox${secret()}`;
        const sim = await startGoogleSheetsSimulator({
          seed: { leads: options.contacts ?? 50 },
          tokens: googleClient ? [] : [{ token, scopes: [GOOGLE_SHEETS_SCOPES.driveFile] }],
          ...(googleClient ? { oauthClients: [{ ...googleClient, redirectUris: [] }] } : {}),
        });
        sim.revokeToken(sim.token);
        sim.revokeToken(GOOGLE_SHEETS_DRIVE_TOKEN);
        await keep(sheets, sim);
        const sandbox = { baseUrl: sim.url, sandbox: 'true' };
        // Signed in with this server's Google client: its access tokens expire and are renewed.
        const items = googleClient
          ? await googleSandboxGrant(sim.url, googleClient, [
              GOOGLE_SHEETS_SCOPES.driveFile,
              'openid',
              'email',
            ])
          : { accessToken: token };
        return { name: GOOGLE_SHEETS.displayName, items: { ...items, ...sandbox } };
      }
      if (type === 'hubspot') {
        // A portal of one's own (HubSpot's limits are per token and portal), reached by a private
        // app token with every CRM scope; the simulator's well-known token is not registered.
        const token = `pat-sandbox-${randomBytes(16).toString('hex')}`;
        const sim = await startHubSpotSimulator({
          seed: { contacts: options.contacts ?? 50 },
          defaultToken: false,
          tokens: [{ token, scopes: [...HUBSPOT_ALL_SCOPES] }],
        });
        await keep(hubspots, sim);
        return {
          name: HUBSPOT.displayName,
          items: { accessToken: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      if (type === 'pipedrive') {
        // A company of one's own (Pipedrive's limits are per company and token), reached by an API
        // token of its user (40 hex characters, as Pipedrive's are); the well-known token is not registered.
        const token = randomBytes(20).toString('hex');
        const companyId = randomInt(1_000_000, 100_000_000);
        const sim = await startPipedriveSimulator({
          seed: { persons: options.contacts ?? 50 },
          defaultToken: false,
          tokens: [{ token }],
          // Each company its own id (the base's remote id), as in Pipedrive.
          companyId,
          companyDomain: `sandbox-${companyId}`,
        });
        await keep(pipedrives, sim);
        return {
          name: PIPEDRIVE.displayName,
          items: { apiToken: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      if (type === 'attio') {
        // A workspace of one's own (Attio's limits are per workspace), reached by an API key with
        // every scope; the simulator's well-known key is not registered.
        const token = randomBytes(32).toString('hex');
        const sim = await startAttioSimulator({ defaultToken: false, tokens: [{ token }] });
        await keep(attios, sim);
        return {
          name: ATTIO.displayName,
          // The catalog's item (a secret, never shown back); the port also takes accessToken.
          items: { apiKey: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      if (type === 'salesforce') {
        // An org of one's own (Salesforce's API allocation is per org), reached by a session of its
        // integration user that does not time out (a session id starts with the org's id, as
        // Salesforce's do); the simulator's well-known session is not registered. The connection
        // holds what signing in gives: the session, the org's instance URL and the identity URL.
        const sim = await startSalesforceSimulator({
          seed: { contacts: options.contacts ?? 50 },
          defaultToken: false,
        });
        const token = `${sim.state.orgId.slice(0, 15)}!AQsandbox${secret()}`;
        sim.state.tokens.add({ token, scopes: ['api'], kind: 'pat', userId: sim.state.userId });
        await keep(salesforces, sim);
        return {
          name: SALESFORCE.displayName,
          items: {
            accessToken: token,
            instanceUrl: sim.url,
            identityUrl: sim.oauth.identityUrl(sim.url),
            sandbox: 'true',
          },
        };
      }
      if (type === 'affinity') {
        // An account of one's own (Affinity's monthly budget is per account), its own id, reached by
        // an API key of its first user; the simulator's well-known key is not registered.
        const token = randomBytes(24).toString('base64url');
        const tenantId = randomInt(10_000, 10_000_000);
        const sim = await startAffinitySimulator({
          defaultToken: false,
          tokens: [{ token }],
          tenant: { id: tenantId, subdomain: `sandbox-${tenantId}` },
        });
        await keep(affinities, sim);
        return {
          name: AFFINITY.displayName,
          items: { apiKey: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      if (type === 'webflow') {
        // A site of one's own (Webflow's limits are per token), reached by a site token with every
        // CMS and site scope; the simulator's well-known token is not registered.
        const token = randomBytes(32).toString('hex');
        // No OAuth app either: the simulator's default app would authorize its site to anyone.
        const sim = await startWebflowSimulator({ defaultToken: false, oauthApps: [], tokens: [{ token }] });
        await keep(webflows, sim);
        return {
          name: WEBFLOW.displayName,
          items: { apiToken: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      if (type === 'stripe') {
        // An account of one's own, reached by a test-mode secret key (sk_test_); the simulator's
        // well-known test and live keys are not registered.
        const token = `sk_test_51Sandbox${randomBytes(40).toString('base64url').replaceAll(/[-_]/g, '0')}`;
        const sim = await startStripeSimulator({ defaultToken: false, tokens: [{ token }] });
        await keep(stripes, sim);
        return {
          name: STRIPE.displayName,
          items: { secretKey: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      if (type === 'memberstack') {
        // An app of one's own in test mode, reached by a test-mode secret key (sk_sb_); the
        // simulator's well-known key is not registered. Unlike Memberstack's test mode it holds
        // more than 50 members: a first sync with the Demo Newsletter (120 subscribers) must fit.
        const token = `sk_sb_${randomBytes(10).toString('hex')}`;
        const sim = await startMemberstackSimulator({
          defaultToken: false,
          tokens: [{ token }],
          sandboxMemberLimit: false,
        });
        await keep(memberstacks, sim);
        return {
          name: MEMBERSTACK.displayName,
          items: { secretKey: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      return null;
    },
    close: async () => {
      await Promise.all([
        airtable.close(),
        notion.close(),
        ...sheets.map((s) => s.close()),
        ...hubspots.map((h) => h.close()),
        ...pipedrives.map((p) => p.close()),
        ...attios.map((a) => a.close()),
        ...salesforces.map((x) => x.close()),
        ...affinities.map((x) => x.close()),
        ...webflows.map((w) => w.close()),
        ...stripes.map((s) => s.close()),
        ...memberstacks.map((m) => m.close()),
      ]);
    },
  };
}
