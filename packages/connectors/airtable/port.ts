/**
 * Airtable for the REST layer and the runtime. A connection holds a personal access token (`apiKey`)
 * or OAuth tokens (`accessToken`, `refreshToken`, `tokenExpiresAt`; renewed when due, the single-use
 * refresh token rotated and saved). An optional `baseUrl` item points a connection at another API
 * (the sandbox's simulator); it is honoured only when the server allows it (local and test
 * environments) or when it is one of the server's own sandbox URLs.
 *
 * A base's tables get the remote id `<baseId>/<tableId>`: a run knows only the table's remote id and
 * the connection's items, and Airtable's record URLs need the base.
 */
import type pg from 'pg';
import { ConnectorError, type ReadPage, type TableConnector, type WriteResult } from '../sdk/connector';
import {
  type CreatedSchemaField,
  type CreatedSchemaTable,
  CURRENCY_SYMBOLS,
  nameAllocator,
  type SchemaColumn,
  type SchemaTable,
} from '../sdk/schema-generation';
import {
  AIRTABLE_API_URL,
  AIRTABLE_OAUTH_URL,
  type AirtableClientOptions,
  type AirtableTokens,
  airtableAuthorizeUrl,
  airtableListBases,
  airtableWhoami,
  createAirtableClient,
  requestAirtableTokens,
} from './airtable-api';
import {
  AIRTABLE_CAPABILITIES,
  type AirtableConnector,
  type AirtableField,
  type AirtableTable,
  canonicalType,
  createAirtableConnector,
  currencyOf,
  isReadOnly,
} from './airtable-connector';

export type AirtableItems = Record<string, string>;
export type SaveItems = (items: AirtableItems) => Promise<void>;

/** A webhook Lockstep made on a base: its secret (sealed with the connection) and its expiry. */
export type AirtableWebhook = {
  id: string;
  macSecretBase64: string;
  expirationTime: string;
  notificationUrl: string;
};

export type AirtableSettings = {
  /** The API every connection uses unless a `baseUrl` item is honoured (https://api.airtable.com). */
  apiUrl?: string;
  /** Where OAuth's authorize and token endpoints live (https://airtable.com). */
  oauthUrl?: string;
  clientId?: string;
  clientSecret?: string;
  /** Local and test environments: any `baseUrl` item is honoured. */
  allowCustomBaseUrl?: boolean;
  /** The server's own sandbox simulators: their URLs are honoured everywhere. */
  sandboxUrls?: () => string[];
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): waits after a 429, attempts, sleep. */
  client?: Pick<
    AirtableClientOptions,
    'rateLimitWaitMs' | 'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'requestsPerSecond'
  >;
  now?: () => number;
};

const trimUrl = (url: string) => url.replace(/\/+$/, '');

/** The API base URL of a connection; a `baseUrl` item the server does not allow is refused. */
export function airtableApiUrl(settings: AirtableSettings, items: AirtableItems): string {
  const custom = items.baseUrl?.trim();
  if (!custom) return trimUrl(settings.apiUrl ?? AIRTABLE_API_URL);
  let url: URL;
  try {
    url = new URL(custom);
  } catch {
    throw new ConnectorError(
      'validation',
      `bad Airtable baseUrl ${custom}`,
      'The Airtable address is not a valid URL.',
    );
  }
  const normalized = trimUrl(url.toString());
  const sandbox = (settings.sandboxUrls?.() ?? []).map(trimUrl);
  if (sandbox.includes(normalized)) return normalized;
  if (items.sandbox === 'true') {
    // The sandbox lives in the server's memory: a restart ends it (and moves its port).
    throw new ConnectorError(
      'auth_invalid',
      `Airtable sandbox ${normalized} is gone`,
      'This Airtable sandbox was reset when the server restarted. Connect the Airtable sandbox again.',
    );
  }
  if (settings.allowCustomBaseUrl && (url.protocol === 'http:' || url.protocol === 'https:'))
    return normalized;
  throw new ConnectorError(
    'permission_denied',
    `custom Airtable baseUrl refused: ${normalized}`,
    'A custom Airtable address is accepted only for sandbox connections or on a local server.',
  );
}

/** The token items of an OAuth grant. */
export function airtableTokenItems(tokens: AirtableTokens, now: number): AirtableItems {
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    tokenExpiresAt: String(now + tokens.expires_in * 1000),
  };
}

/**
 * Rotated refresh tokens this process has seen, by the one they replaced: a run cannot store
 * renewed items on its connection, so a later run of the same process starts from the newest.
 */
const rotated = new Map<string, AirtableItems>();
function newest(items: AirtableItems): AirtableItems {
  let current = items;
  for (let i = 0; i < 50 && current.refreshToken && rotated.has(current.refreshToken); i++) {
    current = { ...current, ...rotated.get(current.refreshToken) };
  }
  return current;
}

/** A credential session on a connection's items: the token to send, renewed when due or refused. */
export function airtableSession(settings: AirtableSettings, start: AirtableItems, save?: SaveItems) {
  const now = settings.now ?? Date.now;
  let items = newest(start);
  const pat = items.apiKey ?? items.personalAccessToken;
  if (!items.accessToken && !pat) {
    throw new ConnectorError(
      'auth_invalid',
      'no Airtable token',
      'Enter an Airtable personal access token, or sign in with Airtable.',
    );
  }
  let renewing: Promise<boolean> | null = null;
  const renew = async (): Promise<boolean> => {
    if (!items.refreshToken || !settings.clientId) return false;
    renewing ??= (async () => {
      try {
        const before = items.refreshToken as string;
        const tokens = await requestAirtableTokens(
          {
            oauthUrl: settings.oauthUrl ?? AIRTABLE_OAUTH_URL,
            clientId: settings.clientId as string,
            ...(settings.clientSecret ? { clientSecret: settings.clientSecret } : {}),
          },
          { grant_type: 'refresh_token', refresh_token: before },
        );
        items = { ...items, ...airtableTokenItems(tokens, now()) };
        rotated.set(before, {
          accessToken: items.accessToken as string,
          refreshToken: items.refreshToken as string,
          tokenExpiresAt: items.tokenExpiresAt as string,
        });
        await save?.(items);
        return true;
      } finally {
        renewing = null;
      }
    })();
    return renewing;
  };
  const token = async (): Promise<string> => {
    if (items.accessToken) {
      if (items.refreshToken && Number(items.tokenExpiresAt ?? 0) - now() < 120_000) await renew();
      return items.accessToken;
    }
    return pat as string;
  };
  return {
    token,
    renew,
    get items() {
      return items;
    },
  };
}

function clientFor(settings: AirtableSettings, items: AirtableItems, save?: SaveItems) {
  const session = airtableSession(settings, items, save);
  return createAirtableClient({
    baseUrl: airtableApiUrl(settings, items),
    token: session.token,
    onAuthFailure: session.renew,
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 5_000,
    maxAttempts: 3,
    ...settings.client,
  });
}

/** `<baseId>/<tableId>`, the remote id of an Airtable table. */
export function airtableTableRemoteId(baseId: string, tableId: string): string {
  return `${baseId}/${tableId}`;
}

export function parseAirtableTableRemoteId(remoteId: string): { baseId: string; tableId: string } {
  const at = remoteId.indexOf('/');
  if (at <= 0 || at === remoteId.length - 1) {
    throw new ConnectorError(
      'not_found',
      `not an Airtable table id: ${remoteId}`,
      'This Airtable table is not known; refresh the tables of the base.',
    );
  }
  return { baseId: remoteId.slice(0, at), tableId: remoteId.slice(at + 1) };
}

function fieldOptions(field: AirtableField, baseId: string): Record<string, unknown> {
  const type = canonicalType(field);
  const o = field.options ?? {};
  const choices = (o.choices as ({ name?: string } | string)[] | undefined)?.map((c) =>
    typeof c === 'string' ? c : String(c.name ?? ''),
  );
  return {
    airtableType: field.type,
    ...(choices && (type === 'single_select' || type === 'multi_select') ? { choices } : {}),
    ...(type === 'currency'
      ? { currencyCode: currencyOf(field).code, currencyDigits: currencyOf(field).digits }
      : {}),
    ...(typeof o.precision === 'number' && type !== 'currency' ? { precision: o.precision } : {}),
    // Airtable holds date-times to the millisecond.
    ...(type === 'datetime' ? { datetimeDigits: 3 } : {}),
    ...(type === 'relations' && typeof o.linkedTableId === 'string'
      ? { references: airtableTableRemoteId(baseId, o.linkedTableId) }
      : {}),
  };
}

/** Discovery: tables with canonical field types; computed fields read-only; unsupported ones left out. */
export function airtableDiscoveredTables(baseId: string, tables: AirtableTable[]) {
  return tables.map((t) => ({
    remoteId: airtableTableRemoteId(baseId, t.id),
    name: t.name,
    extras: {
      airtableTableId: t.id,
      primaryFieldId: t.primaryFieldId,
      ...(t.description ? { description: t.description } : {}),
      unsupportedFields: t.fields.filter((f) => !canonicalType(f)).map((f) => f.name),
    },
    fields: t.fields.flatMap((f) => {
      const fieldType = canonicalType(f);
      if (!fieldType) return [];
      return [
        {
          remoteId: f.id,
          name: f.name,
          fieldType,
          readOnly: isReadOnly(f),
          options: fieldOptions(f, baseId),
        },
      ];
    }),
  }));
}

/** An Airtable field to create: its type and the options that type requires. */
export type AirtableNewField = { name: string; type: string; options?: Record<string, unknown> };

/**
 * A canonical field as an Airtable field (the field model's write options): numbers keep the
 * source's precision (8, Airtable's most, when unknown), currency its digits and symbol, dates ISO,
 * date-times in UTC with a 24-hour clock, selects their choices, checkboxes a green check. Record
 * links and JSON values are kept as long text (the linked table may not exist here).
 */
export function airtableFieldFor(column: SchemaColumn, name: string): AirtableNewField {
  const o = column.options ?? {};
  switch (column.type) {
    case 'email':
      return { name, type: 'email' };
    case 'url':
      return { name, type: 'url' };
    case 'phone':
      return { name, type: 'phoneNumber' };
    case 'number':
    case 'duration': {
      const p = typeof o.precision === 'number' ? Math.max(0, Math.min(8, Math.trunc(o.precision))) : 8;
      return { name, type: 'number', options: { precision: p } };
    }
    case 'currency': {
      const digits = typeof o.currencyDigits === 'number' ? Math.trunc(o.currencyDigits) : 2;
      const symbol = CURRENCY_SYMBOLS[(o.currencyCode ?? 'USD').toUpperCase()] ?? '$';
      return { name, type: 'currency', options: { precision: Math.max(0, Math.min(7, digits)), symbol } };
    }
    case 'boolean':
      return { name, type: 'checkbox', options: { icon: 'check', color: 'greenBright' } };
    case 'single_select':
    case 'multi_select': {
      const names = [...new Set((o.choices ?? []).map((c) => c.trim()).filter(Boolean))];
      return {
        name,
        type: column.type === 'single_select' ? 'singleSelect' : 'multipleSelects',
        options: { choices: names.map((n) => ({ name: n })) },
      };
    }
    case 'date':
      return { name, type: 'date', options: { dateFormat: { name: 'iso' } } };
    case 'datetime':
      return {
        name,
        type: 'dateTime',
        options: { dateFormat: { name: 'iso' }, timeFormat: { name: '24hour' }, timeZone: 'utc' },
      };
    case 'attachments':
      return { name, type: 'multipleAttachments' };
    case 'rich_text':
    case 'json':
    case 'relations':
      return { name, type: 'multilineText' };
    default:
      return { name, type: 'singleLineText' };
  }
}

/** Field types Airtable takes for a table's primary field (of those Lockstep creates). */
const PRIMARY_TYPES = new Set([
  'singleLineText',
  'multilineText',
  'email',
  'url',
  'phoneNumber',
  'number',
  'currency',
  'date',
  'dateTime',
]);

/** Airtable compares table and field names case-insensitively; a name has no other documented rule here. */
const AIRTABLE_NAMES = { caseInsensitive: true } as const;

/**
 * The create-table request for a canonical table: fields named validly and uniquely, the first
 * field that can be primary moved first (a "Name" text field added when none can). `order[i]` is
 * where request field i came from (-1: the added primary field).
 */
export function planAirtableTable(table: SchemaTable, takenTableNames: string[]) {
  const tableName = nameAllocator(AIRTABLE_NAMES, takenTableNames)(table.name, 'Table');
  const next = nameAllocator(AIRTABLE_NAMES);
  const fields = table.columns.map((c, i) => airtableFieldFor(c, next(c.name, `Field ${i + 1}`)));
  const order = fields.map((_, i) => i);
  const primary = fields.findIndex((f) => PRIMARY_TYPES.has(f.type));
  if (primary > 0) {
    order.splice(primary, 1);
    order.unshift(primary);
  } else if (primary < 0) {
    order.unshift(-1);
  }
  const request = order.map((i) =>
    i < 0 ? { name: next('Name', 'Name'), type: 'singleLineText' } : (fields[i] as AirtableNewField),
  );
  return { name: tableName, fields: request, order };
}

export function createAirtablePort(settings: AirtableSettings = {}) {
  const now = settings.now ?? Date.now;
  const oauth = () => {
    if (!settings.clientId) {
      throw new ConnectorError(
        'validation',
        'Airtable OAuth client is not configured',
        'Signing in with Airtable is not set up on this server (LOCKSTEP_AIRTABLE_CLIENT_ID). Use a personal access token.',
      );
    }
    return {
      oauthUrl: settings.oauthUrl ?? AIRTABLE_OAUTH_URL,
      clientId: settings.clientId,
      ...(settings.clientSecret ? { clientSecret: settings.clientSecret } : {}),
    };
  };
  return {
    type: 'airtable' as const,
    authorizeUrl(input: { redirectUri: string; state: string; codeChallenge: string }): string {
      return airtableAuthorizeUrl(oauth(), input);
    },
    async exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }) {
      const tokens = await requestAirtableTokens(oauth(), {
        grant_type: 'authorization_code',
        code: input.code,
        code_verifier: input.codeVerifier,
        redirect_uri: input.redirectUri,
      });
      return airtableTokenItems(tokens, now());
    },
    /** whoami: the token works (and says whose it is when it may read the email). */
    async check(items: AirtableItems, save?: SaveItems): Promise<{ accountEmail: string | null }> {
      const me = await airtableWhoami(clientFor(settings, items, save));
      return { accountEmail: me.email };
    },
    async listBases(items: AirtableItems, save?: SaveItems) {
      const bases = await airtableListBases(clientFor(settings, items, save));
      return bases.map((b) => ({ remoteId: b.id, name: b.name }));
    },
    /**
     * The base's webhook to `notificationUrl` (table data changes): refreshed when it has less than
     * two days left of its 7, created when it is unknown or Airtable no longer has it. The MAC secret
     * comes back once, at creation.
     */
    async ensureWebhook(
      items: AirtableItems,
      baseId: string,
      notificationUrl: string,
      known: AirtableWebhook | null,
      save?: SaveItems,
    ): Promise<AirtableWebhook> {
      const client = clientFor(settings, items, save);
      const base = `/v0/bases/${encodeURIComponent(baseId)}/webhooks`;
      if (known && known.notificationUrl === notificationUrl) {
        if (Date.parse(known.expirationTime) - now() > 2 * 86_400_000) return known;
        try {
          const { body } = await client.request<{ expirationTime: string }>({
            method: 'POST',
            path: `${base}/${encodeURIComponent(known.id)}/refresh`,
          });
          return { ...known, expirationTime: body.expirationTime };
        } catch (error) {
          if (!(error instanceof ConnectorError) || error.code !== 'not_found') throw error;
          // Expired or deleted in Airtable: a new one below.
        }
      }
      const { body } = await client.request<{ id: string; macSecretBase64: string; expirationTime: string }>({
        method: 'POST',
        path: base,
        body: { notificationUrl, specification: { options: { filters: { dataTypes: ['tableData'] } } } },
      });
      return {
        id: body.id,
        macSecretBase64: body.macSecretBase64,
        expirationTime: body.expirationTime,
        notificationUrl,
      };
    },
    /**
     * Schema generation: each table made with POST /v0/meta/bases/{baseId}/tables (schema.bases:write),
     * its fields in Airtable's types; names Airtable would refuse or that are taken are changed.
     */
    async createTables(
      items: AirtableItems,
      baseId: string,
      tables: SchemaTable[],
      save?: SaveItems,
    ): Promise<CreatedSchemaTable[]> {
      const client = clientFor(settings, items, save);
      const path = `/v0/meta/bases/${encodeURIComponent(baseId)}/tables`;
      const existing = (await client.request<{ tables: AirtableTable[] }>({ method: 'GET', path })).body
        .tables;
      const taken = existing.map((t) => t.name);
      const out: CreatedSchemaTable[] = [];
      for (const table of tables) {
        const plan = planAirtableTable(table, taken);
        taken.push(plan.name);
        const { body } = await client.request<AirtableTable>({
          method: 'POST',
          path,
          body: { name: plan.name, fields: plan.fields },
        });
        const columns: CreatedSchemaField[] = table.columns.map((c, i) => {
          const f = body.fields[plan.order.indexOf(i)] as AirtableField;
          return { remoteId: f.id, name: f.name, requestedName: c.name, appType: f.type };
        });
        out.push({
          remoteId: airtableTableRemoteId(baseId, body.id),
          name: body.name,
          requestedName: table.name,
          columns,
        });
      }
      return out;
    },
    /** Fields added to a table, one POST .../tables/{tableId}/fields each; taken names get a suffix. */
    async addFields(
      items: AirtableItems,
      tableRemoteId: string,
      columns: SchemaColumn[],
      save?: SaveItems,
    ): Promise<CreatedSchemaField[]> {
      const { baseId, tableId } = parseAirtableTableRemoteId(tableRemoteId);
      const client = clientFor(settings, items, save);
      const path = `/v0/meta/bases/${encodeURIComponent(baseId)}/tables`;
      const table = (
        await client.request<{ tables: AirtableTable[] }>({ method: 'GET', path })
      ).body.tables.find((t) => t.id === tableId);
      if (!table)
        throw new ConnectorError('not_found', `no table ${tableId}`, 'This Airtable table no longer exists.');
      const next = nameAllocator(
        AIRTABLE_NAMES,
        table.fields.map((f) => f.name),
      );
      const out: CreatedSchemaField[] = [];
      for (const [i, c] of columns.entries()) {
        const { body } = await client.request<AirtableField>({
          method: 'POST',
          path: `${path}/${encodeURIComponent(tableId)}/fields`,
          body: airtableFieldFor(c, next(c.name, `Field ${i + 1}`)),
        });
        out.push({ remoteId: body.id, name: body.name, requestedName: c.name, appType: body.type });
      }
      return out;
    },
    async discoverSchema(items: AirtableItems, baseId: string, save?: SaveItems) {
      const client = clientFor(settings, items, save);
      const { body } = await client.request<{ tables: AirtableTable[] }>({
        method: 'GET',
        path: `/v0/meta/bases/${encodeURIComponent(baseId)}/tables`,
      });
      return airtableDiscoveredTables(baseId, body.tables);
    },
  };
}

export type AirtablePort = ReturnType<typeof createAirtablePort>;

/**
 * The connector a run uses for one connection: table remote ids `<baseId>/<tableId>` are served by
 * one Airtable connector per base (metadata cached), all on the connection's credentials.
 */
export function createAirtableRuntimeConnector(
  settings: AirtableSettings,
  items: AirtableItems,
  extra: { deleteSweepIntervalMs?: number; save?: SaveItems } = {},
): TableConnector & { forBase(baseId: string): AirtableConnector } {
  // Renewed tokens are saved on the connection (Airtable's refresh tokens are single-use).
  const session = airtableSession(settings, items, extra.save);
  const baseUrl = airtableApiUrl(settings, items);
  const byBase = new Map<string, AirtableConnector>();
  const forBase = (baseId: string) => {
    let c = byBase.get(baseId);
    if (!c) {
      c = createAirtableConnector({
        baseId,
        baseUrl,
        token: session.token,
        onAuthFailure: session.renew,
        pool: settings.pool ?? null,
        ...settings.client,
        ...(extra.deleteSweepIntervalMs !== undefined
          ? { deleteSweepIntervalMs: extra.deleteSweepIntervalMs }
          : {}),
      });
      byBase.set(baseId, c);
    }
    return c;
  };
  return {
    capabilities: AIRTABLE_CAPABILITIES,
    forBase,
    read(tableRemoteId: string, cursor: string | null, options: { pageSize: number }): Promise<ReadPage> {
      const { baseId, tableId } = parseAirtableTableRemoteId(tableRemoteId);
      return forBase(baseId).read(tableId, cursor, options);
    },
    write(tableRemoteId, requests): Promise<WriteResult[]> {
      const { baseId, tableId } = parseAirtableTableRemoteId(tableRemoteId);
      return forBase(baseId).write(tableId, requests);
    },
  };
}
