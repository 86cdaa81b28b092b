import { randomBytes } from 'node:crypto';
import type { ConnectorType } from '@lockstep/contract';
import { type AirtableSimulator, startAirtableSimulator } from '@lockstep/simulators';

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
  connect(type: ConnectorType): { name: string; items: Record<string, string> } | null;
  /** The API URLs of the running simulators (connections may point there). */
  urls(): string[];
  airtable: AirtableSimulator | null;
  close(): Promise<void>;
};

const AIRTABLE: SandboxApp = {
  connectorType: 'airtable',
  displayName: 'Airtable Sandbox',
  description:
    'A simulated Airtable account with a CRM base (Companies, Contacts, Deals), running inside this server. Data resets when the server restarts.',
};

/** Only one process runs the simulator: separate api and worker processes would not share it. */
export async function startSandboxApps(
  options: { contacts?: number; log?: (line: string) => void } = {},
): Promise<SandboxApps> {
  const airtable = await startAirtableSimulator({ seed: false, defaultToken: false });
  options.log?.(`Sandbox apps: Airtable simulator at ${airtable.url}`);
  return {
    airtable,
    list: () => [AIRTABLE],
    urls: () => [airtable.url],
    connect(type) {
      if (type !== 'airtable') return null;
      const crm = airtable.seed({ contacts: options.contacts ?? 50 });
      const token = `patSandbox${randomBytes(7).toString('hex')}.${randomBytes(24).toString('hex')}`;
      airtable.state.tokens.add({
        token,
        scopes: ['data.records:read', 'data.records:write', 'schema.bases:read', 'webhook:manage'],
        bases: [crm.baseId],
        kind: 'pat',
        userId: airtable.state.userId,
      });
      return { name: AIRTABLE.displayName, items: { apiKey: token, baseUrl: airtable.url, sandbox: 'true' } };
    },
    close: () => airtable.close(),
  };
}
