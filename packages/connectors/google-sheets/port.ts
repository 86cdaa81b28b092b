/**
 * Google Sheets for the REST layer and the runtime. A connection holds an OAuth access token
 * (`accessToken`) and, when this server has a Google OAuth client, a `refreshToken` to renew it
 * (renewed access tokens are handed to the caller to save with the connection).
 * An optional `baseUrl` item points every Google host (Sheets, Drive, OAuth) at another API (the
 * sandbox's simulator); it is honoured only when the server allows it (local and test environments)
 * or when it is one of the server's own sandbox URLs.
 *
 * A base is a spreadsheet (Drive files.list); its tables are its sheets, with the header row's
 * names as fields. A sheet's remote id is `<spreadsheetId>/<sheetId>`: a run knows only the table's
 * remote id and the connection's items. The quota (60 reads and 60 writes per minute per user) is
 * shared between worker processes through PostgreSQL when a pool is given.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError, type ReadPage, type TableConnector, type WriteResult } from '../sdk/connector';
import { type RateLimitPolicy, rateLimitStoreCache } from '../sdk/rate-limiter';
import {
  type CreatedSchemaField,
  type CreatedSchemaTable,
  nameAllocator,
  type SchemaColumn,
  type SchemaTable,
} from '../sdk/schema-generation';
import {
  columnLetter,
  createGoogleSheetsConnector,
  GOOGLE_SHEETS_BATCH_SIZE,
  GOOGLE_SHEETS_RATE_LIMIT,
  type GoogleSheetsConnector,
  type GoogleSheetsConnectorOptions,
} from './google-sheets-connector';

export const GOOGLE_SHEETS_API_URL = 'https://sheets.googleapis.com';
export const GOOGLE_DRIVE_API_URL = 'https://www.googleapis.com';
export const GOOGLE_OAUTH_TOKEN_URL = 'https://oauth2.googleapis.com';
export const GOOGLE_AUTHORIZE_URL = 'https://accounts.google.com';
/**
 * drive.file (spreadsheets Lockstep makes or is given) and spreadsheets (the ones the user names);
 * openid and email to name the connection after the Google account (userinfo).
 */
export const GOOGLE_SHEETS_SCOPES = [
  'https://www.googleapis.com/auth/drive.file',
  'https://www.googleapis.com/auth/spreadsheets',
  'openid',
  'email',
] as const;

export type GoogleSheetsItems = Record<string, string>;
export type SaveItems = (items: GoogleSheetsItems) => Promise<void>;

export type GoogleSheetsSettings = ApiUrlSettings & {
  apiUrl?: string;
  driveUrl?: string;
  oauthUrl?: string;
  /** Where Google's consent screen is (accounts.google.com; the simulator in tests). */
  authorizeUrl?: string;
  /** This server's Google OAuth client: with it a `refreshToken` item renews the access token. */
  clientId?: string;
  clientSecret?: string;
  /** Shares the quota between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  rateLimit?: RateLimitPolicy | false;
  http?: GoogleSheetsConnectorOptions['http'];
};

const storeFor = rateLimitStoreCache();

/** `<spreadsheetId>/<sheetId>`, the remote id of a sheet. */
export function sheetRemoteId(spreadsheetId: string, sheetId: string): string {
  return `${spreadsheetId}/${sheetId}`;
}

export function parseSheetRemoteId(remoteId: string): { spreadsheetId: string; sheetId: string } {
  const at = remoteId.lastIndexOf('/');
  if (at <= 0 || at === remoteId.length - 1)
    throw new ConnectorError(
      'not_found',
      `not a Google Sheets sheet id: ${remoteId}`,
      'This sheet is not known; refresh the sheets of the spreadsheet.',
    );
  return { spreadsheetId: remoteId.slice(0, at), sheetId: remoteId.slice(at + 1) };
}

/**
 * A connection's credentials shared by its connectors (one per spreadsheet): an access token one of
 * them renews is used by the ones made later, and handed to `save` to be stored with the connection.
 */
type GoogleSession = { items: GoogleSheetsItems; save?: SaveItems };

function connectorFor(
  settings: GoogleSheetsSettings,
  session: GoogleSession,
  spreadsheetId: string,
  http?: GoogleSheetsConnectorOptions['http'],
): GoogleSheetsConnector {
  const items = session.items;
  const accessToken = items.accessToken?.trim();
  const refreshToken = items.refreshToken?.trim();
  const canRefresh = Boolean(refreshToken && settings.clientId && settings.clientSecret);
  if (!accessToken && !canRefresh)
    throw new ConnectorError('auth_invalid', 'no Google token', 'Sign in with Google again.');
  const custom = googleCustomUrl(settings, items);
  // The quota is the Google user's: keyed by a hash of the credential (never the credential itself).
  const userKey = `google:${createHash('sha256')
    .update(refreshToken || accessToken || '')
    .digest('hex')
    .slice(0, 24)}`;
  return createGoogleSheetsConnector({
    spreadsheetId,
    baseUrl: custom ?? settings.apiUrl ?? GOOGLE_SHEETS_API_URL,
    driveBaseUrl: custom ?? settings.driveUrl ?? GOOGLE_DRIVE_API_URL,
    oauthBaseUrl: custom ?? settings.oauthUrl ?? GOOGLE_OAUTH_TOKEN_URL,
    ...(accessToken ? { accessToken } : {}),
    ...(canRefresh
      ? {
          oauth: {
            clientId: settings.clientId as string,
            clientSecret: settings.clientSecret as string,
            refreshToken: refreshToken as string,
          },
          onTokenRefreshed: async (token) => {
            session.items = {
              ...session.items,
              accessToken: token.accessToken,
              tokenExpiresAt: String(token.expiresAt),
              ...(token.refreshToken ? { refreshToken: token.refreshToken } : {}),
            };
            await session.save?.(session.items);
          },
        }
      : {}),
    userKey,
    rateLimitStore: storeFor(settings.pool),
    ...(settings.rateLimit !== undefined ? { rateLimit: settings.rateLimit } : {}),
    ...(http ? { http } : {}),
  });
}

/** The one URL a `baseUrl` item points every Google host at (the sandbox), if any. */
function googleCustomUrl(settings: GoogleSheetsSettings, items: GoogleSheetsItems): string | null {
  return items.baseUrl?.trim() ? resolveApiUrl('Google Sheets', '', settings, items) : null;
}

/**
 * The Google account's email (GET /oauth2/v3/userinfo, with the openid and email scopes); null when
 * the token may not say (an access token given by hand, without those scopes).
 */
async function googleAccountEmail(settings: GoogleSheetsSettings, items: GoogleSheetsItems) {
  const token = items.accessToken?.trim();
  if (!token) return null;
  const base = googleCustomUrl(settings, items) ?? settings.driveUrl ?? GOOGLE_DRIVE_API_URL;
  try {
    const res = await fetch(new URL('/oauth2/v3/userinfo', base), {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as { email?: unknown };
    return typeof body.email === 'string' ? body.email : null;
  } catch {
    return null;
  }
}

/** Sheet titles: at most 100 characters, unique in the spreadsheet regardless of case. */
const SHEET_TITLES = { maxLength: 100, caseInsensitive: true } as const;
/** Header cells: unique in the sheet (the header names the fields), never empty. */
const HEADER_NAMES = {} as const;

/**
 * How a canonical type is carried in a sheet, where a column has no type of its own: a number
 * format on the column below the header (numbers, currency with its digits, dates, date-times).
 * Other types are plain cells (no data validation is set: Lockstep writes booleans and options as
 * values, and discovery infers the types from them).
 */
export function sheetColumnFormat(column: SchemaColumn): Record<string, unknown>[] {
  const o = column.options ?? {};
  const format = (numberFormat: Record<string, unknown>) => [
    { cell: { userEnteredFormat: { numberFormat } }, fields: 'userEnteredFormat.numberFormat' },
  ];
  switch (column.type) {
    case 'number':
    case 'duration':
      return format({ type: 'NUMBER', pattern: '0.########' });
    case 'currency': {
      const digits = Math.max(0, Math.min(6, Math.trunc(o.currencyDigits ?? 2)));
      const code = (o.currencyCode ?? 'USD').toUpperCase();
      const symbol = code === 'USD' ? '$' : code === 'EUR' ? '€' : code === 'GBP' ? '£' : `[$${code}] `;
      return format({
        type: 'CURRENCY',
        pattern: `"${symbol}"#,##0${digits > 0 ? `.${'0'.repeat(digits)}` : ''}`,
      });
    }
    case 'date':
      return format({ type: 'DATE', pattern: 'yyyy-mm-dd' });
    case 'datetime':
      return format({ type: 'DATE_TIME', pattern: 'yyyy-mm-dd hh:mm:ss' });
    default:
      return [];
  }
}

/**
 * Schema generation in one spreadsheet: a sheet per table (batchUpdate addSheet) with its header
 * row (values.update, RAW), or header cells added after the last one of an existing sheet; typed
 * columns get their number formats (batchUpdate repeatCell below the header).
 */
async function writeHeaders(
  c: GoogleSheetsConnector,
  title: string,
  sheetId: number,
  startColumn: number,
  columns: SchemaColumn[],
  names: string[],
) {
  if (names.length === 0) return;
  const first = columnLetter(startColumn);
  const last = columnLetter(startColumn + names.length - 1);
  await c.request(
    'PUT',
    `/values/${encodeURIComponent(`'${title.replaceAll("'", "''")}'!${first}1:${last}1`)}`,
    {
      query: { valueInputOption: 'RAW' },
      body: {
        range: `'${title.replaceAll("'", "''")}'!${first}1:${last}1`,
        majorDimension: 'ROWS',
        values: [names],
      },
    },
  );
  const requests = columns.flatMap((col, i) =>
    sheetColumnFormat(col).map((r) => ({
      repeatCell: {
        range: {
          sheetId,
          startRowIndex: 1,
          startColumnIndex: startColumn + i,
          endColumnIndex: startColumn + i + 1,
        },
        ...r,
      },
    })),
  );
  if (requests.length > 0) await c.request('POST', ':batchUpdate', { body: { requests } });
}

export function createGoogleSheetsPort(settings: GoogleSheetsSettings = {}) {
  // A person is waiting: few attempts.
  const interactive = { maxAttempts: 3, ...settings.http };
  const oauthClient = () => {
    if (!settings.clientId || !settings.clientSecret)
      throw new ConnectorError(
        'validation',
        'Google OAuth client is not configured',
        'Signing in with Google is not set up on this server (LOCKSTEP_GOOGLE_CLIENT_ID and LOCKSTEP_GOOGLE_CLIENT_SECRET). Use an access token instead.',
      );
    return { clientId: settings.clientId, clientSecret: settings.clientSecret };
  };
  return {
    type: 'google_sheets' as const,
    /**
     * Google's consent screen for a web server app with PKCE: offline access (a refresh token) and
     * consent asked again, so a reconnect gets a fresh refresh token too.
     */
    authorizeUrl(input: { redirectUri: string; state: string; codeChallenge: string }): string {
      const url = new URL('/o/oauth2/v2/auth', settings.authorizeUrl ?? GOOGLE_AUTHORIZE_URL);
      url.searchParams.set('client_id', oauthClient().clientId);
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', GOOGLE_SHEETS_SCOPES.join(' '));
      url.searchParams.set('access_type', 'offline');
      url.searchParams.set('prompt', 'consent');
      url.searchParams.set('include_granted_scopes', 'true');
      url.searchParams.set('state', input.state);
      url.searchParams.set('code_challenge', input.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      return url.toString();
    },
    /** POST oauth2.googleapis.com/token: the code and its verifier for an access and a refresh token. */
    async exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }) {
      const client = oauthClient();
      const res = await fetch(new URL('/token', settings.oauthUrl ?? GOOGLE_OAUTH_TOKEN_URL), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: input.code,
          code_verifier: input.codeVerifier,
          redirect_uri: input.redirectUri,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }).toString(),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      if (!res.ok || typeof body.access_token !== 'string') {
        const error = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
        throw new ConnectorError(
          error === 'invalid_client' ? 'auth_invalid' : 'validation',
          `${error}: ${String(body.error_description ?? '')}`,
          'Google did not accept the authorization. Please sign in with Google again.',
        );
      }
      if (typeof body.refresh_token !== 'string')
        throw new ConnectorError(
          'validation',
          'no refresh token in the answer',
          'Google gave no offline access. Remove Lockstep from your Google account’s third-party access, then sign in again.',
        );
      return {
        accessToken: body.access_token,
        refreshToken: body.refresh_token,
        tokenExpiresAt: String(Date.now() + Number(body.expires_in ?? 3600) * 1000),
      };
    },
    /** Drive files.list answers: the token works (and may list spreadsheets); userinfo names the account. */
    async check(items: GoogleSheetsItems, save?: SaveItems): Promise<{ accountEmail: string | null }> {
      const session: GoogleSession = { items, ...(save ? { save } : {}) };
      await connectorFor(settings, session, '', interactive).listSpreadsheets();
      return { accountEmail: await googleAccountEmail(settings, session.items) };
    },
    async listBases(items: GoogleSheetsItems, save?: SaveItems) {
      const session: GoogleSession = { items, ...(save ? { save } : {}) };
      const files = await connectorFor(settings, session, '', interactive).listSpreadsheets();
      return files.map((f) => ({ remoteId: f.id, name: f.name }));
    },
    /** Schema generation: a sheet per table with a header row, typed columns formatted. */
    async createTables(
      items: GoogleSheetsItems,
      spreadsheetId: string,
      tables: SchemaTable[],
      save?: SaveItems,
    ): Promise<CreatedSchemaTable[]> {
      const session: GoogleSession = { items, ...(save ? { save } : {}) };
      const c = connectorFor(settings, session, spreadsheetId, interactive);
      const existing = await c.request<{ sheets?: { properties: { title: string } }[] }>('GET', '', {
        query: { fields: 'sheets.properties(sheetId,title)' },
      });
      const nextTitle = nameAllocator(
        SHEET_TITLES,
        (existing.sheets ?? []).map((x) => x.properties.title),
      );
      const out: CreatedSchemaTable[] = [];
      for (const table of tables) {
        const title = nextTitle(table.name, 'Sheet');
        const nextHeader = nameAllocator(HEADER_NAMES);
        const names = table.columns.map((col, i) => nextHeader(col.name, `Field ${i + 1}`));
        const res = await c.request<{
          replies: { addSheet: { properties: { sheetId: number; title: string } } }[];
        }>('POST', ':batchUpdate', {
          body: {
            requests: [
              {
                addSheet: {
                  properties: {
                    title,
                    gridProperties: {
                      rowCount: 1000,
                      columnCount: Math.max(26, names.length),
                      frozenRowCount: 1,
                    },
                  },
                },
              },
            ],
          },
        });
        const props = res.replies[0]?.addSheet.properties;
        if (!props)
          throw new ConnectorError(
            'validation',
            'addSheet gave no sheet',
            'Google Sheets did not add the sheet.',
          );
        await writeHeaders(c, props.title, props.sheetId, 0, table.columns, names);
        out.push({
          remoteId: sheetRemoteId(spreadsheetId, String(props.sheetId)),
          name: props.title,
          requestedName: table.name,
          columns: table.columns.map((col, i) => ({
            remoteId: names[i] as string,
            name: names[i] as string,
            requestedName: col.name,
            appType: sheetColumnFormat(col).length > 0 ? col.type : 'text',
          })),
        });
      }
      return out;
    },
    /** Header cells added after the sheet's last header (the grid widened when it is too narrow). */
    async addFields(
      items: GoogleSheetsItems,
      tableRemoteId: string,
      columns: SchemaColumn[],
      save?: SaveItems,
    ): Promise<CreatedSchemaField[]> {
      const { spreadsheetId, sheetId } = parseSheetRemoteId(tableRemoteId);
      const session: GoogleSession = { items, ...(save ? { save } : {}) };
      const c = connectorFor(settings, session, spreadsheetId, interactive);
      const ss = await c.request<{
        sheets?: {
          properties: { sheetId: number; title: string; gridProperties?: { columnCount?: number } };
        }[];
      }>('GET', '', { query: { fields: 'sheets.properties(sheetId,title,gridProperties)' } });
      const sheet = (ss.sheets ?? []).find((x) => String(x.properties.sheetId) === sheetId)?.properties;
      if (!sheet)
        throw new ConnectorError('not_found', `no sheet ${sheetId}`, 'This sheet no longer exists.');
      const header = await c.request<{ values?: string[][] }>(
        'GET',
        `/values/${encodeURIComponent(`'${sheet.title.replaceAll("'", "''")}'!1:1`)}`,
      );
      const row = (header.values?.[0] ?? []).map(String);
      let used = row.length;
      while (used > 0 && (row[used - 1] ?? '').trim() === '') used--;
      const next = nameAllocator(HEADER_NAMES, row.map((h) => h.trim()).filter(Boolean));
      const names = columns.map((col, i) => next(col.name, `Field ${used + i + 1}`));
      const needed = used + names.length - (sheet.gridProperties?.columnCount ?? 26);
      if (needed > 0)
        await c.request('POST', ':batchUpdate', {
          body: {
            requests: [{ appendDimension: { sheetId: sheet.sheetId, dimension: 'COLUMNS', length: needed } }],
          },
        });
      await writeHeaders(c, sheet.title, sheet.sheetId, used, columns, names);
      return columns.map((col, i) => ({
        remoteId: names[i] as string,
        name: names[i] as string,
        requestedName: col.name,
        appType: sheetColumnFormat(col).length > 0 ? col.type : 'text',
      }));
    },
    /** The spreadsheet's sheets; each sheet's header row names its fields (types inferred from cells). */
    async discoverSchema(items: GoogleSheetsItems, spreadsheetId: string, save?: SaveItems) {
      const session: GoogleSession = { items, ...(save ? { save } : {}) };
      const tables = await connectorFor(settings, session, spreadsheetId, interactive).discover();
      return tables.map((t) => ({
        remoteId: sheetRemoteId(spreadsheetId, t.remoteId),
        name: t.name,
        extras: { spreadsheetId, sheetId: t.remoteId },
        fields: t.fields.map((f) => ({ ...f, options: {} })),
      }));
    },
  };
}

export type GoogleSheetsPort = ReturnType<typeof createGoogleSheetsPort>;

/**
 * The connector a run uses for one connection: one Sheets connector per spreadsheet, same
 * credentials. Access tokens it renews are handed to `save`.
 */
export function createGoogleSheetsRuntimeConnector(
  settings: GoogleSheetsSettings,
  items: GoogleSheetsItems,
  save?: SaveItems,
): TableConnector {
  const session: GoogleSession = { items, ...(save ? { save } : {}) };
  const bySpreadsheet = new Map<string, GoogleSheetsConnector>();
  const forSpreadsheet = (id: string) => {
    let c = bySpreadsheet.get(id);
    if (!c) {
      c = connectorFor(settings, session, id, settings.http);
      bySpreadsheet.set(id, c);
    }
    return c;
  };
  return {
    capabilities: {
      batchSize: GOOGLE_SHEETS_BATCH_SIZE,
      incrementalRead: true,
      deleteDetection: 'full_scan',
      webhooks: false,
      rateLimit: GOOGLE_SHEETS_RATE_LIMIT,
    },
    read(tableRemoteId, cursor, options): Promise<ReadPage> {
      const { spreadsheetId, sheetId } = parseSheetRemoteId(tableRemoteId);
      return forSpreadsheet(spreadsheetId).read(sheetId, cursor, options);
    },
    write(tableRemoteId, requests): Promise<WriteResult[]> {
      const { spreadsheetId, sheetId } = parseSheetRemoteId(tableRemoteId);
      return forSpreadsheet(spreadsheetId).write(sheetId, requests);
    },
  };
}
