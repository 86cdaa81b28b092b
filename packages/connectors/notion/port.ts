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
  /** This server's public integration (OAuth); without it Notion connects with an internal token only. */
  clientId?: string;
  clientSecret?: string;
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
  const oauthClient = () => {
    if (!settings.clientId || !settings.clientSecret)
      throw new ConnectorError(
        'validation',
        'Notion OAuth client is not configured',
        'Signing in with Notion is not set up on this server (LOCKSTEP_NOTION_CLIENT_ID and LOCKSTEP_NOTION_CLIENT_SECRET). Use an internal integration token instead.',
      );
    return { clientId: settings.clientId, clientSecret: settings.clientSecret };
  };
  return {
    type: 'notion' as const,
    /** Notion's consent page for a public integration: the user picks the pages and databases to share. */
    authorizeUrl(input: { redirectUri: string; state: string }): string {
      const url = new URL('/v1/oauth/authorize', settings.apiUrl ?? NOTION_API_URL);
      url.searchParams.set('client_id', oauthClient().clientId);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('owner', 'user');
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('state', input.state);
      return url.toString();
    },
    /**
     * POST /v1/oauth/token with the client as HTTP Basic auth: the code for an access token (and a
     * refresh token, for integrations that have them), with the workspace it was granted in.
     */
    async exchangeCode(input: { code: string; redirectUri: string }) {
      const client = oauthClient();
      const res = await fetch(new URL('/v1/oauth/token', settings.apiUrl ?? NOTION_API_URL), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          code: input.code,
          redirect_uri: input.redirectUri,
        }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      if (!res.ok || typeof body.access_token !== 'string') {
        const code = typeof body.code === 'string' ? body.code : `HTTP ${res.status}`;
        throw new ConnectorError(
          code === 'unauthorized' ? 'auth_invalid' : 'validation',
          `${code}: ${String(body.message ?? '')}`,
          'Notion did not accept the authorization. Please sign in with Notion again.',
        );
      }
      return {
        accessToken: body.access_token,
        ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
        ...(typeof body.workspace_name === 'string' ? { workspaceName: body.workspace_name } : {}),
        ...(typeof body.bot_id === 'string' ? { botId: body.bot_id } : {}),
      };
    },
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
