/**
 * Notion for the REST layer and the runtime. A connection holds an internal integration token
 * (`internalToken`) or OAuth tokens of this server's public integration (`accessToken`, and a
 * `refreshToken` for integrations that have them: when Notion refuses the access token it is
 * renewed, the rotated pair handed to the caller to save). An optional `baseUrl` item points a
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
import { type RateLimitPolicy, rateLimitStoreCache } from '../sdk/rate-limiter';
import {
  type CreatedSchemaField,
  type CreatedSchemaTable,
  nameAllocator,
  type SchemaColumn,
  type SchemaTable,
} from '../sdk/schema-generation';
import {
  createNotionConnector,
  NOTION_API_VERSION,
  type NotionConnectorOptions,
  type NotionTable,
} from './notion-connector';

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

const storeFor = rateLimitStoreCache();

export function notionApiUrl(settings: NotionSettings, items: NotionItems): string {
  return resolveApiUrl('Notion', settings.apiUrl ?? NOTION_API_URL, settings, items);
}

export type SaveItems = (items: NotionItems) => Promise<void>;

/** The items of a token answer (`POST /v1/oauth/token`): the tokens and the workspace they reach. */
export function notionTokenItems(body: Record<string, unknown>): NotionItems {
  return {
    accessToken: String(body.access_token),
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    ...(typeof body.workspace_name === 'string' ? { workspaceName: body.workspace_name } : {}),
    ...(typeof body.workspace_id === 'string' ? { workspaceId: body.workspace_id } : {}),
    ...(typeof body.bot_id === 'string' ? { botId: body.bot_id } : {}),
  };
}

/**
 * POST /v1/oauth/token with the client as HTTP Basic auth. Notion answers errors in OAuth's shape
 * (`{"error":"invalid_grant","error_description":...}`) or in its API's (`{code, message}`).
 */
async function requestNotionTokens(
  oauthUrl: string,
  client: { clientId: string; clientSecret: string },
  body: Record<string, string>,
): Promise<
  { ok: true; body: Record<string, unknown> } | { ok: false; status: number; error: string; detail: string }
> {
  let res: Response;
  try {
    res = await fetch(new URL('/v1/oauth/token', oauthUrl), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'notion-version': NOTION_API_VERSION,
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Notion token endpoint unreachable: ${(error as Error).message}`,
      'Notion is not answering right now; Lockstep will try again.',
    );
  }
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof answer.access_token === 'string') return { ok: true, body: answer };
  const error =
    typeof answer.error === 'string' ? answer.error : typeof answer.code === 'string' ? answer.code : '';
  const detail = String(answer.error_description ?? answer.message ?? '');
  return { ok: false, status: res.status, error: error || `HTTP ${res.status}`, detail };
}

/**
 * Rotated refresh tokens this process has seen, by the one they replaced: a connector built from
 * items older than a renewal this process made starts from the newest pair.
 */
const rotated = new Map<string, NotionItems>();
function newest(items: NotionItems): NotionItems {
  let current = items;
  for (let i = 0; i < 50 && current.refreshToken && rotated.has(current.refreshToken); i++) {
    current = { ...current, ...rotated.get(current.refreshToken) };
  }
  return current;
}

/**
 * A credential session on a connection's items: the token to send, and its renewal with the refresh
 * token when Notion refuses it (once for all the requests that met the same refused token).
 */
export function notionSession(settings: NotionSettings, start: NotionItems, save?: SaveItems) {
  let items = start.internalToken?.trim() ? start : newest(start);
  const token = (): string => {
    const value = items.internalToken?.trim() || items.accessToken?.trim();
    if (!value)
      throw new ConnectorError(
        'auth_invalid',
        'no Notion token',
        'Enter the internal integration token of a Notion integration (Settings → Connections → Develop or manage integrations), or sign in with Notion.',
      );
    return value;
  };
  token();
  let renewing: Promise<boolean> | null = null;
  const renew = async (refused?: string): Promise<boolean> => {
    if (items.internalToken?.trim() || !items.refreshToken) return false;
    // Another session of this process renewed these tokens: its pair is the live one.
    const adopted = newest(items);
    if (adopted !== items) {
      items = adopted;
      await save?.(items);
    }
    // Another request already renewed the token this one was refused with.
    if (refused !== undefined && refused !== items.accessToken) return true;
    if (!settings.clientId || !settings.clientSecret) return false;
    const client = { clientId: settings.clientId, clientSecret: settings.clientSecret };
    renewing ??= (async () => {
      try {
        const spent = items.refreshToken as string;
        const answer = await requestNotionTokens(notionApiUrl(settings, items), client, {
          grant_type: 'refresh_token',
          refresh_token: spent,
        });
        if (!answer.ok) {
          // invalid_grant: revoked, or spent (rotated) elsewhere; a person has to sign in again.
          const code =
            answer.status === 429 ? 'rate_limited' : answer.status >= 500 ? 'transient' : 'auth_invalid';
          throw new ConnectorError(
            code,
            `Notion token refresh failed: ${answer.error}: ${answer.detail}`.trim(),
            code === 'auth_invalid'
              ? 'Notion no longer accepts Lockstep’s sign-in. Sign in with Notion again.'
              : 'Notion is not answering right now; Lockstep will try again.',
          );
        }
        items = { ...items, ...notionTokenItems(answer.body) };
        if (rotated.size >= 10_000) rotated.delete(rotated.keys().next().value as string);
        rotated.set(spent, {
          accessToken: items.accessToken as string,
          ...(items.refreshToken ? { refreshToken: items.refreshToken } : {}),
        });
        await save?.(items);
        return true;
      } finally {
        renewing = null;
      }
    })();
    return renewing;
  };
  return {
    token,
    renew,
    get items() {
      return items;
    },
  };
}

function connectorFor(
  settings: NotionSettings,
  items: NotionItems,
  http?: NotionConnectorOptions['http'],
  save?: SaveItems,
) {
  const session = notionSession(settings, items, save);
  return createNotionConnector({
    token: session.token,
    onAuthFailure: session.renew,
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
        // Notion adds a select's new option on write; a status's options are fixed (API: 400).
        ...(f.notionType === 'select' || f.notionType === 'multi_select' ? { openChoices: true } : {}),
        ...(f.relationDataSourceId ? { references: f.relationDataSourceId } : {}),
      },
    })),
  };
}

/** Notion's number formats for the currencies Lockstep names (others: a plain number). */
const NOTION_CURRENCY_FORMATS: Record<string, string> = {
  USD: 'dollar',
  EUR: 'euro',
  GBP: 'pound',
  JPY: 'yen',
  CHF: 'franc',
  CAD: 'canadian_dollar',
  AUD: 'australian_dollar',
};

/**
 * A select option name as Notion takes it: no commas (Notion refuses them in option names), at most
 * 100 characters, trimmed; empty and repeated names dropped.
 */
export function notionOptionNames(choices: string[]): string[] {
  const next = nameAllocator({ maxLength: 100, forbidden: /,/g, replacement: ' ' });
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of choices) {
    if (c.trim() === '') continue;
    const n = next(c, 'Option');
    if (!seen.has(n)) out.push(n);
    seen.add(n);
  }
  return out;
}

/**
 * A canonical field as a Notion property schema (request shape): text as rich text, numbers and
 * durations as numbers (currency with its currency format), booleans as checkboxes, dates and
 * date-times as dates, selects with their options, attachments as files; links and JSON as rich
 * text (the linked data source may not exist in this database).
 */
export function notionPropertyFor(column: SchemaColumn): Record<string, unknown> {
  const o = column.options ?? {};
  switch (column.type) {
    case 'email':
      return { email: {} };
    case 'url':
      return { url: {} };
    case 'phone':
      return { phone_number: {} };
    case 'number':
    case 'duration':
      return { number: { format: 'number' } };
    case 'currency':
      return {
        number: { format: NOTION_CURRENCY_FORMATS[(o.currencyCode ?? 'USD').toUpperCase()] ?? 'number' },
      };
    case 'boolean':
      return { checkbox: {} };
    case 'single_select':
      return { select: { options: notionOptionNames(o.choices ?? []).map((name) => ({ name })) } };
    case 'multi_select':
      return { multi_select: { options: notionOptionNames(o.choices ?? []).map((name) => ({ name })) } };
    case 'date':
    case 'datetime':
      return { date: {} };
    case 'attachments':
      return { files: {} };
    default:
      return { rich_text: {} };
  }
}

/** Notion property names in one data source: unique, never empty. */
const NOTION_NAMES = {} as const;

/**
 * The create-data-source request for a canonical table: exactly one title property (the first
 * plain text field, else a new "Name"), the others typed, names unique. `titleIndex` is the column
 * that became the title (-1: an added one).
 */
export function planNotionDataSource(table: SchemaTable) {
  const next = nameAllocator(NOTION_NAMES);
  const names = table.columns.map((c, i) => next(c.name, `Field ${i + 1}`));
  const titleIndex = table.columns.findIndex((c) => c.type === 'text');
  const properties: Record<string, Record<string, unknown>> = {};
  if (titleIndex < 0) properties[next('Name', 'Name')] = { title: {} };
  table.columns.forEach((c, i) => {
    properties[names[i] as string] = i === titleIndex ? { title: {} } : notionPropertyFor(c);
  });
  return { names, titleIndex, properties };
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
    async exchangeCode(input: { code: string; redirectUri: string }): Promise<NotionItems> {
      const answer = await requestNotionTokens(settings.apiUrl ?? NOTION_API_URL, oauthClient(), {
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: input.redirectUri,
      });
      if (!answer.ok)
        throw new ConnectorError(
          answer.error === 'invalid_client' || answer.error === 'unauthorized'
            ? 'auth_invalid'
            : 'validation',
          `${answer.error}: ${answer.detail}`,
          'Notion did not accept the authorization. Please sign in with Notion again.',
        );
      return notionTokenItems(answer.body);
    },
    /** GET /v1/users/me: the token works (a bot user has no email). */
    async check(items: NotionItems, save?: SaveItems): Promise<{ accountEmail: string | null }> {
      await connectorFor(settings, items, interactive, save).check();
      return { accountEmail: null };
    },
    /** The databases of the data sources shared with the integration. */
    async listBases(items: NotionItems, save?: SaveItems) {
      const sources = await connectorFor(settings, items, interactive, save).listDataSources();
      const bases = new Map<string, string[]>();
      for (const ds of sources) {
        const id = ds.databaseId ?? ds.id;
        bases.set(id, [...(bases.get(id) ?? []), ds.name || 'Untitled']);
      }
      return [...bases].map(([remoteId, names]) => ({ remoteId, name: names.join(' / ') }));
    },
    /**
     * Schema generation: each table a new data source of the database (POST /v1/data_sources,
     * API 2025-09-03), its title named after the table; properties in Notion's types.
     */
    async createTables(
      items: NotionItems,
      databaseId: string,
      tables: SchemaTable[],
      save?: SaveItems,
    ): Promise<CreatedSchemaTable[]> {
      const c = connectorFor(settings, items, interactive, save);
      const out: CreatedSchemaTable[] = [];
      for (const table of tables) {
        const plan = planNotionDataSource(table);
        const name = table.name.trim() || 'Untitled';
        const { body } = await c.http.request<{
          id: string;
          properties: Record<string, { id: string; type: string }>;
        }>({
          method: 'POST',
          path: '/v1/data_sources',
          body: {
            parent: { type: 'database_id', database_id: databaseId },
            title: [{ type: 'text', text: { content: name } }],
            properties: plan.properties,
          },
        });
        const columns: CreatedSchemaField[] = table.columns.map((col, i) => {
          const n = plan.names[i] as string;
          const p = body.properties[n];
          if (!p)
            throw new ConnectorError(
              'validation',
              `property ${n} missing after create`,
              `Notion did not create the property "${n}".`,
            );
          return { remoteId: p.id, name: n, requestedName: col.name, appType: p.type };
        });
        out.push({ remoteId: body.id, name, requestedName: table.name, columns });
      }
      return out;
    },
    /** Properties added to a data source (PATCH /v1/data_sources/{id}); taken names get a suffix. */
    async addFields(
      items: NotionItems,
      dataSourceId: string,
      columns: SchemaColumn[],
      save?: SaveItems,
    ): Promise<CreatedSchemaField[]> {
      const c = connectorFor(settings, items, interactive, save);
      const { body: current } = await c.http.request<{ properties: Record<string, { id: string }> }>({
        method: 'GET',
        path: `/v1/data_sources/${encodeURIComponent(dataSourceId)}`,
      });
      const next = nameAllocator(NOTION_NAMES, Object.keys(current.properties));
      const names = columns.map((col, i) => next(col.name, `Field ${i + 1}`));
      const properties: Record<string, unknown> = {};
      columns.forEach((col, i) => {
        properties[names[i] as string] = notionPropertyFor(col);
      });
      const { body } = await c.http.request<{ properties: Record<string, { id: string; type: string }> }>({
        method: 'PATCH',
        path: `/v1/data_sources/${encodeURIComponent(dataSourceId)}`,
        body: { properties },
      });
      return columns.map((col, i) => {
        const n = names[i] as string;
        const p = body.properties[n];
        if (!p)
          throw new ConnectorError(
            'validation',
            `property ${n} missing after update`,
            `Notion did not add the property "${n}".`,
          );
        return { remoteId: p.id, name: n, requestedName: col.name, appType: p.type };
      });
    },
    /** A database's data sources, each a table. */
    async discoverSchema(items: NotionItems, databaseId: string, save?: SaveItems) {
      const c = connectorFor(settings, items, interactive, save);
      const sources = await c.dataSourcesOfDatabase(databaseId);
      const out = [];
      for (const ds of sources) out.push(notionDiscoveredTable(await c.describe(ds.id)));
      return out;
    },
  };
}

export type NotionPort = ReturnType<typeof createNotionPort>;

/**
 * The connector a run uses for one connection: table remote ids are data source ids. Tokens it
 * renews are handed to `save` (the refresh token rotates: the spent one no longer works).
 */
export function createNotionRuntimeConnector(
  settings: NotionSettings,
  items: NotionItems,
  save?: SaveItems,
): TableConnector {
  return connectorFor(settings, items, settings.http, save);
}
