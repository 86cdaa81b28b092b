/**
 * Google Sheets for the REST layer and the runtime. A connection holds an OAuth access token
 * (`accessToken`) and, when this server has a Google OAuth client, a `refreshToken` to renew it.
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
import {
  createMemoryRateLimitStore,
  createPostgresRateLimitStore,
  type RateLimitPolicy,
  type RateLimitStore,
} from '../sdk/rate-limiter';
import {
  createGoogleSheetsConnector,
  GOOGLE_SHEETS_BATCH_SIZE,
  GOOGLE_SHEETS_RATE_LIMIT,
  type GoogleSheetsConnector,
  type GoogleSheetsConnectorOptions,
} from './google-sheets-connector';

export const GOOGLE_SHEETS_API_URL = 'https://sheets.googleapis.com';
export const GOOGLE_DRIVE_API_URL = 'https://www.googleapis.com';
export const GOOGLE_OAUTH_TOKEN_URL = 'https://oauth2.googleapis.com';

export type GoogleSheetsItems = Record<string, string>;

export type GoogleSheetsSettings = ApiUrlSettings & {
  apiUrl?: string;
  driveUrl?: string;
  oauthUrl?: string;
  /** This server's Google OAuth client: with it a `refreshToken` item renews the access token. */
  clientId?: string;
  clientSecret?: string;
  /** Shares the quota between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  rateLimit?: RateLimitPolicy | false;
  http?: GoogleSheetsConnectorOptions['http'];
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

function connectorFor(
  settings: GoogleSheetsSettings,
  items: GoogleSheetsItems,
  spreadsheetId: string,
  http?: GoogleSheetsConnectorOptions['http'],
): GoogleSheetsConnector {
  const accessToken = items.accessToken?.trim();
  const refreshToken = items.refreshToken?.trim();
  const canRefresh = Boolean(refreshToken && settings.clientId && settings.clientSecret);
  if (!accessToken && !canRefresh)
    throw new ConnectorError('auth_invalid', 'no Google token', 'Sign in with Google again.');
  const custom = items.baseUrl?.trim() ? resolveApiUrl('Google Sheets', '', settings, items) : null;
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
        }
      : {}),
    userKey,
    rateLimitStore: storeFor(settings.pool),
    ...(settings.rateLimit !== undefined ? { rateLimit: settings.rateLimit } : {}),
    ...(http ? { http } : {}),
  });
}

export function createGoogleSheetsPort(settings: GoogleSheetsSettings = {}) {
  // A person is waiting: few attempts.
  const interactive = { maxAttempts: 3, ...settings.http };
  return {
    type: 'google_sheets' as const,
    /** Drive files.list answers: the token works (and may list spreadsheets). */
    async check(items: GoogleSheetsItems): Promise<{ accountEmail: string | null }> {
      await connectorFor(settings, items, '', interactive).listSpreadsheets();
      return { accountEmail: null };
    },
    async listBases(items: GoogleSheetsItems) {
      const files = await connectorFor(settings, items, '', interactive).listSpreadsheets();
      return files.map((f) => ({ remoteId: f.id, name: f.name }));
    },
    /** The spreadsheet's sheets; each sheet's header row names its fields (types inferred from cells). */
    async discoverSchema(items: GoogleSheetsItems, spreadsheetId: string) {
      const tables = await connectorFor(settings, items, spreadsheetId, interactive).discover();
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

/** The connector a run uses for one connection: one Sheets connector per spreadsheet, same credentials. */
export function createGoogleSheetsRuntimeConnector(
  settings: GoogleSheetsSettings,
  items: GoogleSheetsItems,
): TableConnector {
  const bySpreadsheet = new Map<string, GoogleSheetsConnector>();
  const forSpreadsheet = (id: string) => {
    let c = bySpreadsheet.get(id);
    if (!c) {
      c = connectorFor(settings, items, id, settings.http);
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
