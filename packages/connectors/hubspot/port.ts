/**
 * HubSpot for the REST layer and the runtime. A connection holds a private app token
 * (`accessToken`, sent as a bearer token) and, for webhooks, the app's `clientSecret`; OAuth is not built yet. The one base is the HubSpot
 * account (portal) the token belongs to; its tables are the CRM object types (`contacts`,
 * `companies`, `deals`), each table's remote id the type.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createHubSpotClient,
  HUBSPOT_API_URL,
  type HubSpotClientOptions,
  hubspotAccount,
} from './hubspot-api';
import {
  createHubSpotConnector,
  HUBSPOT_OBJECT_TYPES,
  type HubSpotConnector,
  type HubSpotProperty,
  hubspotFields,
} from './hubspot-connector';

export type HubSpotItems = Record<string, string>;

export type HubSpotSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.hubapi.com; the simulator in tests). */
  apiUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): waits after a 429, attempts, sleep, the burst limit of the account's tier. */
  client?: Pick<
    HubSpotClientOptions,
    'rateLimitWaitMs' | 'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perTenSeconds' | 'searchPerSecond'
  >;
};

const TABLE_NAMES: Record<string, string> = { contacts: 'Contacts', companies: 'Companies', deals: 'Deals' };

function tokenOf(items: HubSpotItems): string {
  const token = (items.accessToken ?? items.privateAppToken ?? '').trim();
  if (!token) {
    throw new ConnectorError(
      'auth_invalid',
      'no HubSpot token',
      'Enter a HubSpot private app token (Settings > Integrations > Private apps).',
    );
  }
  return token;
}

/** The app's API, or a `baseUrl` item the server honours (its HubSpot sandbox, a local server). */
const apiUrlOf = (settings: HubSpotSettings, items: HubSpotItems) =>
  resolveApiUrl('HubSpot', settings.apiUrl ?? HUBSPOT_API_URL, settings, items);

function clientFor(settings: HubSpotSettings, items: HubSpotItems) {
  return createHubSpotClient({
    baseUrl: apiUrlOf(settings, items),
    token: tokenOf(items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 10_500,
    maxAttempts: 3,
    ...settings.client,
  });
}

/** Discovery of one object type: its synced properties as canonical fields. */
export function hubspotDiscoveredTable(type: string, properties: HubSpotProperty[]) {
  return {
    remoteId: type,
    name: TABLE_NAMES[type] ?? type,
    extras: {
      hubspotObjectType: type,
      unsupportedFields: properties
        .filter((p) => !p.hidden && !p.archived && !hubspotFields([p]).length)
        .map((p) => p.name),
    },
    fields: hubspotFields(properties),
  };
}

export function createHubSpotPort(settings: HubSpotSettings = {}) {
  return {
    type: 'hubspot' as const,
    /** The account the token belongs to: a cheap authenticated call. */
    async check(items: HubSpotItems): Promise<{ accountEmail: string | null }> {
      await hubspotAccount(clientFor(settings, items));
      return { accountEmail: null };
    },
    /** One base: the HubSpot account (portal). */
    async listBases(items: HubSpotItems) {
      const account = await hubspotAccount(clientFor(settings, items));
      return [{ remoteId: String(account.portalId), name: `HubSpot account ${account.portalId}` }];
    },
    /** Contacts, companies and deals; a type the token has no scope for is left out (all missing: refused). */
    async discoverSchema(items: HubSpotItems, _portalId: string) {
      const client = clientFor(settings, items);
      const tables = [];
      let refused: ConnectorError | undefined;
      for (const type of HUBSPOT_OBJECT_TYPES) {
        try {
          const { body } = await client.request<{ results: HubSpotProperty[] }>({
            method: 'GET',
            path: `/crm/v3/properties/${type}`,
          });
          tables.push(hubspotDiscoveredTable(type, body.results));
        } catch (error) {
          if (error instanceof ConnectorError && error.code === 'permission_denied') {
            refused = error;
            continue;
          }
          throw error;
        }
      }
      if (tables.length === 0 && refused) throw refused;
      return tables;
    },
  };
}

export type HubSpotPort = ReturnType<typeof createHubSpotPort>;

/** The connector a run uses for one connection (tables are object types). */
export function createHubSpotRuntimeConnector(
  settings: HubSpotSettings,
  items: HubSpotItems,
): HubSpotConnector {
  return createHubSpotConnector({
    baseUrl: apiUrlOf(settings, items),
    token: tokenOf(items),
    pool: settings.pool ?? null,
    ...settings.client,
  });
}
