/**
 * Notion for the REST layer and the runtime. A connection holds an internal integration token
 * (`internalToken`) or an OAuth access token (`accessToken`). An optional `baseUrl` item points a
 * connection at another API (the sandbox's simulator); it is honoured only when the server allows it
 * (local and test environments) or when it is one of the server's own sandbox URLs.
 *
 * A base is a Notion database (found through the data sources shared with the integration, POST
 * /v1/search); its tables are its data sources, whose ids are global: a table's remote id is the
 * data source id. The rate limit (3 requests per second per integration) is shared between worker
 * processes through PostgreSQL when a pool is given.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError, type TableConnector } from '../sdk/connector';
import {
  createMemoryRateLimitStore,
  createPostgresRateLimitStore,
  type RateLimitPolicy,
  type RateLimitStore,
} from '../sdk/rate-limiter';
import { createNotionConnector, type NotionConnectorOptions, type NotionTable } from './notion-connector';

export const NOTION_API_URL = 'https://api.notion.com';

export type NotionItems = Record<string, string>;

export type NotionSettings = ApiUrlSettings & {
  /** The API every connection uses unless a `baseUrl` item is honoured (https://api.notion.com). */
  apiUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests). */
  http?: NotionConnectorOptions['http'];
  rateLimit?: RateLimitPolicy;
  overlapMs?: number;
};

const processStore = createMemoryRateLimitStore();
const poolStores = new WeakMap<pg.Pool, RateLimitStore>();
function storeFor(pool: pg.Pool | null | undefined): RateLimitStore {
  if (!pool) return processStore;
  let store = poolStores.get(pool);
  if (!store) {
    store = createPostgresRateLimitStore(pool);
    poolStores.set(pool, store);
  }
  return store;
}

export function notionApiUrl(settings: NotionSettings, items: NotionItems): string {
  return resolveApiUrl('Notion', settings.apiUrl ?? NOTION_API_URL, settings, items);
}

function tokenOf(items: NotionItems): string {
  const token = items.internalToken?.trim() || items.accessToken?.trim();
  if (!token)
    throw new ConnectorError(
      'auth_invalid',
      'no Notion token',
      'Enter the internal integration token of a Notion integration (Settings → Connections → Develop or manage integrations).',
    );
  return token;
}

function connectorFor(settings: NotionSettings, items: NotionItems, http?: NotionConnectorOptions['http']) {
  return createNotionConnector({
    token: tokenOf(items),
    baseUrl: notionApiUrl(settings, items),
    rateLimitStore: storeFor(settings.pool),
    ...(settings.rateLimit ? { rateLimit: settings.rateLimit } : {}),
    ...(settings.overlapMs !== undefined ? { overlapMs: settings.overlapMs } : {}),
    ...(http ? { http } : {}),
  });
}

/** Discovery: a data source's properties as fields; computed ones read-only, relations with their target. */
export function notionDiscoveredTable(table: NotionTable) {
  return {
    remoteId: table.id,
    name: table.name,
    extras: {
      notionDataSourceId: table.id,
      ...(table.databaseId ? { notionDatabaseId: table.databaseId } : {}),
    },
    fields: table.fields.map((f) => ({
      remoteId: f.remoteId,
      name: f.name,
      fieldType: f.fieldType,
      readOnly: f.readOnly,
      options: {
        notionType: f.notionType,
        ...(f.choices ? { choices: f.choices } : {}),
        ...(f.relationDataSourceId ? { references: f.relationDataSourceId } : {}),
      },
    })),
  };
}

export function createNotionPort(settings: NotionSettings = {}) {
  // A person is waiting: a 429 is not slept through for long.
  const interactive = { maxRetryAfterMs: 5_000, maxAttempts: 3, ...settings.http };
  return {
    type: 'notion' as const,
    /** GET /v1/users/me: the token works (a bot user has no email). */
    async check(items: NotionItems): Promise<{ accountEmail: string | null }> {
      await connectorFor(settings, items, interactive).check();
      return { accountEmail: null };
    },
    /** The databases of the data sources shared with the integration. */
    async listBases(items: NotionItems) {
      const sources = await connectorFor(settings, items, interactive).listDataSources();
      const bases = new Map<string, string[]>();
      for (const ds of sources) {
        const id = ds.databaseId ?? ds.id;
        bases.set(id, [...(bases.get(id) ?? []), ds.name || 'Untitled']);
      }
      return [...bases].map(([remoteId, names]) => ({ remoteId, name: names.join(' / ') }));
    },
    /** A database's data sources, each a table. */
    async discoverSchema(items: NotionItems, databaseId: string) {
      const c = connectorFor(settings, items, interactive);
      const sources = await c.dataSourcesOfDatabase(databaseId);
      const out = [];
      for (const ds of sources) out.push(notionDiscoveredTable(await c.describe(ds.id)));
      return out;
    },
  };
}

export type NotionPort = ReturnType<typeof createNotionPort>;

/** The connector a run uses for one connection: table remote ids are data source ids. */
export function createNotionRuntimeConnector(settings: NotionSettings, items: NotionItems): TableConnector {
  return connectorFor(settings, items, settings.http);
}
