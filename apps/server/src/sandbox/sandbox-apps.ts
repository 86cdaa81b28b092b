import { randomBytes } from 'node:crypto';
import type { ConnectorType } from '@lockstep/contract';
import {
  type AirtableSimulator,
  GOOGLE_SHEETS_DRIVE_TOKEN,
  GOOGLE_SHEETS_SCOPES,
  type GoogleSheetsSimulator,
  type NotionSimulator,
  seedNotionWorkspace,
  startAirtableSimulator,
  startGoogleSheetsSimulator,
  startNotionSimulator,
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

/** Google Sheets sandboxes kept at once; beyond it the oldest is closed (its connection reports it gone). */
const MAX_SHEETS_SANDBOXES = 100;

/** Only one process runs the simulator: separate api and worker processes would not share it. */
export async function startSandboxApps(
  options: { contacts?: number; log?: (line: string) => void } = {},
): Promise<SandboxApps> {
  const airtable = await startAirtableSimulator({ seed: false, defaultToken: false });
  options.log?.(`Sandbox apps: Airtable simulator at ${airtable.url}`);
  const notion = await startNotionSimulator({ seed: false });
  // The simulator's own all-access token must not reach every user's sandbox.
  notion.revokeToken(notion.token);
  options.log?.(`Sandbox apps: Notion simulator at ${notion.url}`);
  const sheets: GoogleSheetsSimulator[] = [];
  const secret = () => `${randomBytes(7).toString('hex')}${randomBytes(24).toString('hex')}`;
  return {
    airtable,
    notion,
    googleSheets: sheets,
    list: () => [AIRTABLE, NOTION, GOOGLE_SHEETS],
    urls: () => [airtable.url, notion.url, ...sheets.map((s) => s.url)],
    async connect(type): Promise<{ name: string; items: Record<string, string> } | null> {
      if (type === 'airtable') {
        const crm = airtable.seed({ contacts: options.contacts ?? 50 });
        const token = `patSandbox${randomBytes(7).toString('hex')}.${randomBytes(24).toString('hex')}`;
        airtable.state.tokens.add({
          token,
          scopes: ['data.records:read', 'data.records:write', 'schema.bases:read', 'webhook:manage'],
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
        const token = `ntn_sandbox${secret()}`;
        notion.state.addToken({
          token,
          botId: bot.id,
          dataSources: [ws.peopleDataSourceId, ws.companiesDataSourceId],
        });
        return {
          name: NOTION.displayName,
          items: { internalToken: token, baseUrl: notion.url, sandbox: 'true' },
        };
      }
      if (type === 'google_sheets') {
        // The simulator's well-known tokens are revoked: only this connection's token reaches it.
        const token = `ya29.sandbox${secret()}`;
        const sim = await startGoogleSheetsSimulator({
          seed: { leads: options.contacts ?? 50 },
          tokens: [{ token, scopes: [GOOGLE_SHEETS_SCOPES.driveFile] }],
        });
        sim.revokeToken(sim.token);
        sim.revokeToken(GOOGLE_SHEETS_DRIVE_TOKEN);
        sheets.push(sim);
        while (sheets.length > MAX_SHEETS_SANDBOXES) await sheets.shift()?.close();
        return {
          name: GOOGLE_SHEETS.displayName,
          items: { accessToken: token, baseUrl: sim.url, sandbox: 'true' },
        };
      }
      return null;
    },
    close: async () => {
      await Promise.all([airtable.close(), notion.close(), ...sheets.map((s) => s.close())]);
    },
  };
}
