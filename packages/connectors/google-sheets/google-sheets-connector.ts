/**
 * Google Sheets as a sync side (a TableConnector) on the Sheets API v4:
 * - a sheet is a table; its first row is the header, and the header names are the field ids. Types
 *   are inferred from a sample of cells (effective values and number formats: DATE, DATE_TIME,
 *   CURRENCY), formula columns are read-only.
 * - rows have no ids in Sheets, so each row gets developer metadata (key `lockstep.rowId`, visibility
 *   DOCUMENT) on first read. The metadata moves with its row when people insert, delete or move rows
 *   and is deleted with it: the row id survives every shift.
 * - read: windows of rows (values:batchGet, UNFORMATTED_VALUE + SERIAL_NUMBER, plus a
 *   developerMetadata:search for the window's row ids). No change feed exists, so incremental reads
 *   re-read the sheet and diff each row against the hash the cursor kept from the previous pass;
 *   rows whose id disappeared are reported deleted at the end of a pass (deleteDetection full_scan).
 *   Each page re-reads the previous page's last row to notice rows shifting between pages.
 * - write: creates append rows (values.append INSERT_ROWS) and then tag them with metadata; their
 *   id derives from the idempotency key, so a retried create finds the row it already made. Updates
 *   go through values:batchUpdateByDataFilter addressed by the row metadata (Google finds the row,
 *   even if it moved). Deletes look up the rows and delete them bottom-up in one batchUpdate.
 *   Requests stay under ~1.9 MB (Google recommends <= 2 MB).
 * - quota: 60 read and 60 write requests per minute per user, paced by the SDK RateLimiter; 429
 *   RESOURCE_EXHAUSTED is retried with exponential backoff by the HttpClient.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  hashRecord,
  normalizeValue,
  type RecordData,
} from '@lockstep/engine';
import {
  ConnectorError,
  type ConnectorErrorCode,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';
import { HttpClient, type HttpClientOptions, type HttpRequest } from '../sdk/http-client';
import {
  createMemoryRateLimitStore,
  RateLimiter,
  type RateLimitPolicy,
  type RateLimitStore,
} from '../sdk/rate-limiter';

export const GOOGLE_SHEETS_RATE_LIMIT: RateLimitPolicy = {
  scope: 'user',
  windows: [{ limit: 60, windowMs: 60_000 }],
};
export const GOOGLE_SHEETS_BATCH_SIZE = 200;
export const ROW_ID_KEY = 'lockstep.rowId';
/** Google recommends at most 2 MB per request; keep a margin for the envelope. */
export const MAX_PAYLOAD_BYTES = 1_900_000;
export const MAX_CELL_CHARS = 50_000;
export const SPREADSHEET_MIME = 'application/vnd.google-apps.spreadsheet';

export type GoogleSheetsConnectorOptions = {
  spreadsheetId: string;
  /** https://sheets.googleapis.com by default. */
  baseUrl?: string;
  /** https://www.googleapis.com by default (Drive files.list). */
  driveBaseUrl?: string;
  /** https://oauth2.googleapis.com by default (`/token`). */
  oauthBaseUrl?: string;
  /** A fixed access token, or OAuth credentials to refresh one. */
  accessToken?: string;
  oauth?: { clientId: string; clientSecret: string; refreshToken: string };
  /** Who the quota is counted for (the Google user); the rate-limit key. */
  userKey?: string;
  /** Where the limiter keeps its events (Postgres to share with other workers); memory by default. */
  rateLimitStore?: RateLimitStore;
  /** The pacing policy; the documented 60/min/user by default; false turns pacing off. */
  rateLimit?: RateLimitPolicy | false;
  /** Longest wait for a quota permit before failing with rate_limited. */
  maxQuotaWaitMs?: number;
  http?: Pick<
    HttpClientOptions,
    'sleep' | 'random' | 'maxAttempts' | 'baseDelayMs' | 'maxDelayMs' | 'timeoutMs'
  >;
  /** Most rows fetched per window (default 2000). */
  readWindowRows?: number;
  maxPayloadBytes?: number;
  /** Rows sampled to infer column types (default 100). */
  sampleRows?: number;
};

export type SheetColumn = {
  index: number;
  /** The header text (deduplicated with " (2)"): the field's remote id. */
  id: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  currency?: { code: string; digits: number };
};

export type SheetInfo = {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
  frozenRowCount: number;
};

type Schema = { sheet: SheetInfo; columns: SheetColumn[]; header: string[]; timeZone: string };

export type GoogleSheetsConnector = TableConnector & {
  /** Sheets of the spreadsheet with their fields (types inferred from the cells). */
  discover(): Promise<
    {
      remoteId: string;
      name: string;
      fields: { remoteId: string; name: string; fieldType: CanonicalFieldType; readOnly: boolean }[];
    }[]
  >;
  /** Spreadsheets the account can reach (Drive files.list, mimeType spreadsheet). */
  listSpreadsheets(): Promise<{ id: string; name: string }[]>;
  /** Fails with auth_invalid / permission_denied / not_found when the spreadsheet is unreachable. */
  check(): Promise<void>;
  stats: { requests: number; retries: number };
};

// ---------------------------------------------------------------------------------------------
// Errors

const STATUS_CODES: Record<string, ConnectorErrorCode> = {
  UNAUTHENTICATED: 'auth_invalid',
  PERMISSION_DENIED: 'permission_denied',
  NOT_FOUND: 'not_found',
  INVALID_ARGUMENT: 'validation',
  FAILED_PRECONDITION: 'validation',
  OUT_OF_RANGE: 'validation',
  RESOURCE_EXHAUSTED: 'rate_limited',
  ABORTED: 'version_conflict',
  UNAVAILABLE: 'transient',
  INTERNAL: 'transient',
  DEADLINE_EXCEEDED: 'transient',
};

function userMessage(code: ConnectorErrorCode, detail: string): string {
  switch (code) {
    case 'auth_invalid':
      return 'Google refused the access. Reconnect your Google account.';
    case 'permission_denied':
      return 'Lockstep cannot open this spreadsheet. Open it in Lockstep’s file picker or ask its owner to share it.';
    case 'not_found':
      return 'The spreadsheet, sheet or row no longer exists in Google Sheets.';
    case 'rate_limited':
      return 'Google Sheets asked Lockstep to slow down (per-minute quota); the sync will continue shortly.';
    case 'validation':
      return `Google Sheets refused the value: ${detail}`;
    default:
      return 'Google Sheets is not answering right now; the sync will retry.';
  }
}

export function mapGoogleError(status: number, body: unknown): ConnectorError | null {
  const e = (body as { error?: unknown } | null)?.error;
  if (!e || typeof e !== 'object') return null;
  const err = e as { status?: string; message?: string };
  const code =
    (err.status ? STATUS_CODES[err.status] : undefined) ??
    (status === 401
      ? 'auth_invalid'
      : status === 403
        ? 'permission_denied'
        : status === 404
          ? 'not_found'
          : status === 429
            ? 'rate_limited'
            : status >= 500
              ? 'transient'
              : 'validation');
  const message = err.message ?? `HTTP ${status}`;
  return new ConnectorError(
    code,
    `Google Sheets ${status} ${err.status ?? ''}: ${message}`,
    userMessage(code, message),
  );
}

function validationError(message: string): ConnectorError {
  return new ConnectorError('validation', message, userMessage('validation', message));
}

function failure(err: unknown): WriteResult {
  const e =
    err instanceof ConnectorError
      ? err
      : new ConnectorError('transient', String(err), userMessage('transient', ''));
  return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
}

// ---------------------------------------------------------------------------------------------
// A1 and values

export function columnLetter(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

export function quoteSheet(title: string): string {
  return `'${title.replaceAll("'", "''")}'`;
}

const DAY_MS = 86_400_000;
const EPOCH = Date.UTC(1899, 11, 30);

function zoneOffset(timeZone: string, utc: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utc));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return (
    Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) -
    Math.floor(utc / 1000) * 1000
  );
}

/** A serial number (days since 1899-12-30, wall time in the spreadsheet's zone) as an instant. */
export function serialToInstant(serial: number, timeZone: string): number {
  const wall = Math.round(EPOCH + serial * DAY_MS);
  // The offset at the wall time read as UTC is right except within an hour of a DST change.
  const guess = wall - zoneOffset(timeZone, wall);
  return wall - zoneOffset(timeZone, guess);
}

export function serialToDate(serial: number): string {
  return new Date(Math.round(EPOCH + Math.floor(serial) * DAY_MS)).toISOString().slice(0, 10);
}

function wallTimeText(instant: number, timeZone: string): string {
  return new Date(instant + zoneOffset(timeZone, instant)).toISOString().slice(0, 19).replace('T', ' ');
}

const CURRENCY_SYMBOLS: Record<string, string> = { $: 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY' };

type SampleCell = {
  userEnteredValue?: Record<string, unknown>;
  effectiveValue?: { numberValue?: number; stringValue?: string; boolValue?: boolean; errorValue?: unknown };
  effectiveFormat?: { numberFormat?: { type?: string; pattern?: string } };
};

export function inferColumn(cells: SampleCell[]): Pick<SheetColumn, 'fieldType' | 'readOnly' | 'currency'> {
  const filled = cells.filter((c) => c.effectiveValue !== undefined);
  const readOnly = cells.some((c) => c.userEnteredValue && 'formulaValue' in c.userEnteredValue);
  const all = (p: (c: SampleCell) => boolean) => filled.length > 0 && filled.every(p);
  const fmt = (c: SampleCell) => c.effectiveFormat?.numberFormat?.type;
  if (all((c) => typeof c.effectiveValue?.boolValue === 'boolean')) return { fieldType: 'boolean', readOnly };
  if (all((c) => typeof c.effectiveValue?.numberValue === 'number')) {
    if (all((c) => fmt(c) === 'DATE')) return { fieldType: 'date', readOnly };
    if (all((c) => fmt(c) === 'DATE_TIME')) return { fieldType: 'datetime', readOnly };
    if (all((c) => fmt(c) === 'CURRENCY')) {
      const pattern = filled[0]?.effectiveFormat?.numberFormat?.pattern ?? '';
      const symbol = Object.keys(CURRENCY_SYMBOLS).find((s) => pattern.includes(s)) ?? '$';
      const digits = /\.(0+)/.exec(pattern)?.[1]?.length ?? 0;
      return {
        fieldType: 'currency',
        readOnly,
        currency: { code: CURRENCY_SYMBOLS[symbol] ?? 'USD', digits },
      };
    }
    return { fieldType: 'number', readOnly };
  }
  if (all((c) => typeof c.effectiveValue?.stringValue === 'string')) {
    const strings = filled.map((c) => c.effectiveValue?.stringValue as string);
    if (strings.every((s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s.trim())))
      return { fieldType: 'email', readOnly };
    if (strings.every((s) => /^https?:\/\/\S+$/i.test(s.trim()))) return { fieldType: 'url', readOnly };
  }
  return { fieldType: 'text', readOnly };
}

/** A cell read with UNFORMATTED_VALUE + SERIAL_NUMBER as a canonical value. */
export function toCanonical(col: SheetColumn, raw: unknown, timeZone: string): CanonicalValue {
  const empty = raw === undefined || raw === null || raw === '';
  if (empty) return col.fieldType === 'boolean' ? false : null;
  switch (col.fieldType) {
    case 'date':
      if (typeof raw === 'number') return serialToDate(raw);
      break;
    case 'datetime':
      if (typeof raw === 'number') return new Date(serialToInstant(raw, timeZone)).toISOString();
      break;
    case 'currency':
      if (typeof raw === 'number') {
        const digits = col.currency?.digits ?? 2;
        return { minor: String(Math.round(raw * 10 ** digits)), code: col.currency?.code ?? 'USD' };
      }
      return null;
    default:
  }
  const result = normalizeValue(col.fieldType, raw);
  if (result.ok) return result.value;
  // A cell that does not fit its column's type (someone typed text into a number column) reads as text.
  return typeof raw === 'string' ? raw.trim() || null : col.fieldType === 'boolean' ? false : String(raw);
}

/** A canonical value as USER_ENTERED input; text is prefixed with an apostrophe so Sheets keeps it as typed. */
export function toCellInput(
  col: SheetColumn,
  value: CanonicalValue,
  timeZone: string,
): string | number | boolean {
  if (value === null) return '';
  const text = (s: string) => {
    if (s.length > MAX_CELL_CHARS)
      throw validationError(
        `"${col.name}" holds ${s.length} characters; a cell takes at most ${MAX_CELL_CHARS}.`,
      );
    return s === '' ? '' : `'${s}`;
  };
  switch (col.fieldType) {
    case 'number': {
      const n = Number(value);
      if (!Number.isFinite(n))
        throw validationError(`"${col.name}" needs a number, got ${JSON.stringify(value)}.`);
      return n;
    }
    case 'currency': {
      const digits = col.currency?.digits ?? 2;
      const minor =
        typeof value === 'object' && !Array.isArray(value) && 'minor' in value
          ? Number(value.minor)
          : Number(value) * 10 ** digits;
      if (!Number.isFinite(minor)) throw validationError(`"${col.name}" needs an amount.`);
      return minor / 10 ** digits;
    }
    case 'boolean': {
      const r = normalizeValue('boolean', value);
      if (!r.ok) throw validationError(`"${col.name}" needs TRUE or FALSE.`);
      return r.value as boolean;
    }
    case 'date': {
      const r = normalizeValue('date', value);
      if (!r.ok) throw validationError(`"${col.name}" needs a date, got ${JSON.stringify(value)}.`);
      return r.value as string;
    }
    case 'datetime': {
      const r = normalizeValue('datetime', value);
      if (!r.ok || typeof r.value !== 'string') throw validationError(`"${col.name}" needs a date and time.`);
      return wallTimeText(Date.parse(r.value), timeZone);
    }
    default:
      if (Array.isArray(value))
        return text(value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', '));
      if (typeof value === 'object') return text(JSON.stringify('json' in value ? value.json : value));
      return text(String(value));
  }
}

// ---------------------------------------------------------------------------------------------
// Cursor: where the pass is, and the row hashes of the previous complete pass.

type Cursor = {
  v: 1;
  mode: 'scan' | 'diff';
  sheetId: number;
  /** Next row index (0-based) to read; null at the start of a pass. */
  row: number | null;
  /** The last row read and where it was, looked up again on the next page to notice shifts. */
  last: { id: string; at: number } | null;
  /** id -> hash of every row read so far in this pass. */
  acc: Record<string, string>;
  /** id -> hash from the previous complete pass (diff mode). */
  prev?: Record<string, string>;
};

const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decode(text: string, sheetId: number): Cursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
    if (
      c.v === 1 &&
      (c.mode === 'scan' || c.mode === 'diff') &&
      c.sheetId === sheetId &&
      typeof c.acc === 'object'
    )
      return c;
  } catch {
    // fall through
  }
  throw new ConnectorError(
    'cursor_invalid',
    'Unreadable Google Sheets cursor',
    'The sync position was lost; a full rescan will run.',
  );
}

type ValueRange = { range?: string; values?: unknown[][] };
type Metadata = {
  metadataId: number;
  metadataKey: string;
  metadataValue?: string;
  location: { locationType: string; dimensionRange?: { sheetId: number; startIndex: number } };
};

// ---------------------------------------------------------------------------------------------

export function createGoogleSheetsConnector(options: GoogleSheetsConnectorOptions): GoogleSheetsConnector {
  const spreadsheetId = options.spreadsheetId;
  const windowMax = options.readWindowRows ?? 2000;
  const maxPayload = options.maxPayloadBytes ?? MAX_PAYLOAD_BYTES;
  const sampleRows = options.sampleRows ?? 100;
  const userKey = options.userKey ?? 'default';
  const policy = options.rateLimit === false ? undefined : (options.rateLimit ?? GOOGLE_SHEETS_RATE_LIMIT);
  const limiter = policy
    ? new RateLimiter(policy, options.rateLimitStore ?? createMemoryRateLimitStore(), {
        ...(options.http?.sleep ? { sleep: options.http.sleep } : {}),
        ...(options.maxQuotaWaitMs !== undefined ? { maxWaitMs: options.maxQuotaWaitMs } : {}),
      })
    : undefined;

  let token: { value: string; expiresAt: number } | undefined = options.accessToken
    ? { value: options.accessToken, expiresAt: Number.POSITIVE_INFINITY }
    : undefined;
  const oauthClient = new HttpClient({
    baseUrl: options.oauthBaseUrl ?? 'https://oauth2.googleapis.com',
    ...options.http,
  });

  let refreshing: Promise<string> | undefined;
  let tokenGeneration = 0;

  async function accessToken(): Promise<string> {
    if (token && Date.now() < token.expiresAt - 60_000) return token.value;
    if (!options.oauth) {
      if (token) return token.value;
      throw new ConnectorError('auth_invalid', 'No Google access token', userMessage('auth_invalid', ''));
    }
    // Concurrent requests share one refresh.
    refreshing ??= refreshAccessToken().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  async function refreshAccessToken(): Promise<string> {
    const oauth = options.oauth as NonNullable<GoogleSheetsConnectorOptions['oauth']>;
    try {
      const res = await oauthClient.request<{ access_token: string; expires_in: number }>({
        method: 'POST',
        path: '/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: oauth.refreshToken,
          client_id: oauth.clientId,
          client_secret: oauth.clientSecret,
        }).toString(),
        idempotent: true,
      });
      token = { value: res.body.access_token, expiresAt: Date.now() + res.body.expires_in * 1000 };
      tokenGeneration += 1;
      return token.value;
    } catch (err) {
      // invalid_grant: the refresh token was revoked or expired; a person has to reconnect.
      if (err instanceof ConnectorError && (err.code === 'validation' || err.code === 'auth_invalid'))
        throw new ConnectorError(
          'auth_invalid',
          `Google token refresh failed: ${err.message}`,
          userMessage('auth_invalid', ''),
        );
      throw err;
    }
  }

  const isRead = (r: HttpRequest) =>
    r.method === 'GET' || /developerMetadata:search|:batchGetByDataFilter/.test(r.path);
  const common: Omit<HttpClientOptions, 'baseUrl'> = {
    headers: async () => ({ authorization: `Bearer ${await accessToken()}` }),
    mapError: (status, body) => mapGoogleError(status, body),
    ...options.http,
  };
  const sheets = new HttpClient({
    ...common,
    baseUrl: options.baseUrl ?? 'https://sheets.googleapis.com',
    ...(limiter
      ? { acquirePermit: (cost, r) => limiter.acquire(`${userKey}:${isRead(r) ? 'read' : 'write'}`, cost) }
      : {}),
  });
  const drive = new HttpClient({ ...common, baseUrl: options.driveBaseUrl ?? 'https://www.googleapis.com' });
  const stats = { requests: 0, retries: 0 };

  /** One call; with refreshable credentials, a 401 refreshes the token and tries once more. */
  async function call<T>(client: HttpClient, request: HttpRequest): Promise<T> {
    const before = { r: client.stats.requests, t: client.stats.retries };
    const generation = tokenGeneration;
    try {
      return (await client.request<T>(request)).body;
    } catch (err) {
      if (!(err instanceof ConnectorError && err.code === 'auth_invalid' && options.oauth)) throw err;
      // Drop the token once, even when several requests met the same expired token.
      if (generation === tokenGeneration) {
        token = undefined;
        tokenGeneration += 1;
      }
      return (await client.request<T>(request)).body;
    } finally {
      stats.requests += client.stats.requests - before.r;
      stats.retries += client.stats.retries - before.t;
    }
  }

  const base = `/v4/spreadsheets/${encodeURIComponent(spreadsheetId)}`;
  const api = <T>(method: string, path: string, extra: Omit<HttpRequest, 'method' | 'path'> = {}) =>
    call<T>(sheets, { method, path: `${base}${path}`, ...extra });

  // --- spreadsheet and schema

  let spreadsheet: { timeZone: string; sheets: SheetInfo[] } | undefined;
  const schemas = new Map<number, Schema>();

  async function loadSpreadsheet(refresh = false) {
    if (spreadsheet && !refresh) return spreadsheet;
    const res = await api<{
      properties: { timeZone?: string };
      sheets?: {
        properties: {
          sheetId: number;
          title: string;
          gridProperties?: { rowCount?: number; columnCount?: number; frozenRowCount?: number };
        };
      }[];
    }>('GET', '', {
      query: { fields: 'properties(title,timeZone),sheets.properties(sheetId,title,gridProperties)' },
    });
    spreadsheet = {
      timeZone: res.properties.timeZone ?? 'UTC',
      sheets: (res.sheets ?? []).map((s) => ({
        sheetId: s.properties.sheetId,
        title: s.properties.title,
        rowCount: s.properties.gridProperties?.rowCount ?? 0,
        columnCount: s.properties.gridProperties?.columnCount ?? 0,
        frozenRowCount: s.properties.gridProperties?.frozenRowCount ?? 0,
      })),
    };
    return spreadsheet;
  }

  async function sheetOf(tableId: string, refresh = false): Promise<SheetInfo> {
    const find = (s: { sheets: SheetInfo[] }) =>
      s.sheets.find((x) => String(x.sheetId) === tableId || x.title === tableId);
    let found = find(await loadSpreadsheet(refresh));
    if (!found && !refresh) found = find(await loadSpreadsheet(true));
    if (!found)
      throw new ConnectorError(
        'not_found',
        `No sheet ${tableId} in spreadsheet ${spreadsheetId}`,
        userMessage('not_found', ''),
      );
    return found;
  }

  function columnsOf(header: unknown[], sample: SampleCell[][]): SheetColumn[] {
    const seen = new Map<string, number>();
    const out: SheetColumn[] = [];
    for (const [index, h] of header.entries()) {
      const name = (h === undefined || h === null ? '' : String(h)).trim();
      if (!name) continue; // a column without a header is not synced
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      const id = n === 1 ? name : `${name} (${n})`;
      out.push({ index, id, name: id, ...inferColumn(sample.map((row) => row[index] ?? {})) });
    }
    return out;
  }

  async function schemaOf(tableId: string, refresh = false): Promise<Schema> {
    const sheet = await sheetOf(tableId, refresh);
    const cached = schemas.get(sheet.sheetId);
    if (cached && !refresh) return cached;
    const lastCol = columnLetter(Math.max(sheet.columnCount, 1) - 1);
    const lastRow = Math.max(1, Math.min(sheet.rowCount, 1 + sampleRows));
    const res = await api<{ sheets?: { data?: { rowData?: { values?: SampleCell[] }[] }[] }[] }>('GET', '', {
      query: {
        ranges: `${quoteSheet(sheet.title)}!A1:${lastCol}${lastRow}`,
        fields: 'sheets(data(rowData(values(userEnteredValue,effectiveValue,effectiveFormat/numberFormat))))',
      },
    });
    const rows = res.sheets?.[0]?.data?.[0]?.rowData ?? [];
    const cells = (r: { values?: SampleCell[] } | undefined) => r?.values ?? [];
    const header = cells(rows[0]).map(
      (c) => c.effectiveValue?.stringValue ?? c.effectiveValue?.numberValue ?? '',
    );
    const schema: Schema = {
      sheet,
      header: header.map(String),
      columns: columnsOf(header, rows.slice(1).map(cells)),
      timeZone: (await loadSpreadsheet()).timeZone,
    };
    schemas.set(sheet.sheetId, schema);
    return schema;
  }

  const lastColumn = (schema: Schema) =>
    columnLetter(Math.max(1, ...schema.columns.map((c) => c.index + 1)) - 1);

  function toFields(schema: Schema, row: unknown[]): Record<string, CanonicalValue> {
    const fields: Record<string, CanonicalValue> = {};
    for (const col of schema.columns) fields[col.id] = toCanonical(col, row[col.index], schema.timeZone);
    return fields;
  }

  const rowFilter = (sheetId: number, value?: string) => ({
    developerMetadataLookup: {
      metadataKey: ROW_ID_KEY,
      locationType: 'ROW',
      ...(value !== undefined ? { metadataValue: value } : {}),
      metadataLocation: { sheetId },
      locationMatchingStrategy: 'INTERSECTING_LOCATION',
    },
  });

  /** Row index -> row id, for row metadata in [start, end) (or of the given ids). */
  async function searchRows(filters: unknown[]): Promise<Metadata[]> {
    const out: Metadata[] = [];
    for (const chunk of chunksBySize(filters, maxPayload)) {
      const res = await api<{ matchedDeveloperMetadata?: { developerMetadata: Metadata }[] }>(
        'POST',
        '/developerMetadata:search',
        {
          body: { dataFilters: chunk },
          idempotent: true,
        },
      );
      for (const m of res.matchedDeveloperMetadata ?? []) out.push(m.developerMetadata);
    }
    return out;
  }

  function byRow(found: Metadata[]): Map<number, string> {
    const rows = new Map<number, { id: string; metadataId: number }>();
    for (const m of found) {
      const at = m.location.dimensionRange?.startIndex;
      if (at === undefined || m.metadataValue === undefined) continue;
      const prev = rows.get(at);
      // Two ids on one row: the older metadata wins, so the choice is stable.
      if (!prev || m.metadataId < prev.metadataId)
        rows.set(at, { id: m.metadataValue, metadataId: m.metadataId });
    }
    return new Map([...rows].map(([k, v]) => [k, v.id]));
  }

  async function tagRows(sheetId: number, rows: { index: number; id: string }[]): Promise<void> {
    const requests = rows.map((r) => ({
      createDeveloperMetadata: {
        developerMetadata: {
          metadataKey: ROW_ID_KEY,
          metadataValue: r.id,
          visibility: 'DOCUMENT',
          location: {
            dimensionRange: { sheetId, dimension: 'ROWS', startIndex: r.index, endIndex: r.index + 1 },
          },
        },
      },
    }));
    for (const chunk of chunksBySize(requests, maxPayload))
      await api('POST', ':batchUpdate', { body: { requests: chunk } });
  }

  // --- read

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const pageSize = Math.max(1, opts.pageSize);
    // A new pass reads the grid size and the header again: people add rows and columns between passes.
    let schema = await schemaOf(tableId, cursor === null);
    const sheetId = schema.sheet.sheetId;
    const c: Cursor = cursor
      ? decode(cursor, sheetId)
      : { v: 1, mode: 'scan', sheetId, row: null, last: null, acc: {} };
    if (cursor !== null && c.row === null) schema = await schemaOf(tableId, true);
    const first = 1; // row 0 is the header
    let row = c.row ?? first;
    let anchor = c.last;
    const records: RecordData[] = [];
    let window = Math.min(windowMax, Math.max(pageSize + 1, 50));

    for (
      let fetches = 0;
      fetches < 8 && records.length < pageSize && row < schema.sheet.rowCount;
      fetches++
    ) {
      const start = row;
      const end = Math.min(schema.sheet.rowCount, start + window);
      const cols = lastColumn(schema);
      const title = quoteSheet(schema.sheet.title);
      const ranges = new URLSearchParams([
        ['ranges', `${title}!A1:${cols}1`],
        ['ranges', `${title}!A${start + 1}:${cols}${end}`],
      ]);
      const windowFilter = {
        developerMetadataLookup: {
          metadataKey: ROW_ID_KEY,
          locationType: 'ROW',
          metadataLocation: {
            dimensionRange: { sheetId, dimension: 'ROWS', startIndex: start, endIndex: end },
          },
          locationMatchingStrategy: 'INTERSECTING_LOCATION',
        },
      };
      let values: { valueRanges?: ValueRange[] };
      let found: Metadata[];
      try {
        [values, found] = await Promise.all([
          api<{ valueRanges?: ValueRange[] }>('GET', `/values:batchGet?${ranges}`, {
            query: {
              valueRenderOption: 'UNFORMATTED_VALUE',
              dateTimeRenderOption: 'SERIAL_NUMBER',
              majorDimension: 'ROWS',
            },
          }),
          // The previous page's last row is looked up too: if it moved, rows shifted under the cursor.
          searchRows(anchor ? [windowFilter, rowFilter(sheetId, anchor.id)] : [windowFilter]),
        ]);
      } catch (err) {
        // Rows were deleted since the grid size was read: read it again and carry on.
        if (err instanceof ConnectorError && /exceeds grid limits/.test(err.message)) {
          schema = await schemaOf(tableId, true);
          continue;
        }
        throw err;
      }
      const header = trimEnd((values.valueRanges?.[0]?.values?.[0] ?? []).map((h) => String(h ?? '')));
      if (header.join('\u0000') !== trimEnd(schema.header.slice(0, header.length || 1)).join('\u0000')) {
        // Someone renamed, added or moved a header: infer the schema again and read the window again.
        schema = await schemaOf(tableId, true);
        continue;
      }
      if (anchor) {
        const id = anchor.id;
        const at = found.find((m) => m.metadataValue === id)?.location.dimensionRange?.startIndex;
        if (at === undefined) {
          // That row was deleted: start the pass over; rows already read are skipped by id.
          row = first;
          anchor = null;
          continue;
        }
        if (at !== anchor.at) {
          row += at - anchor.at;
          anchor = { id, at };
          continue;
        }
        anchor = null;
      }
      const data = values.valueRanges?.[1]?.values ?? [];
      const ids = byRow(found.filter((m) => (m.location.dimensionRange?.startIndex ?? -1) >= start));
      const untagged: { index: number; id: string }[] = [];
      let i = start;
      for (; i < end && records.length < pageSize; i++) {
        const cells = data[i - start] ?? [];
        if (!cells.some((v) => v !== '' && v !== null && v !== undefined)) continue;
        let id = ids.get(i);
        if (!id) {
          id = `r${randomBytes(9).toString('base64url')}`;
          untagged.push({ index: i, id });
        }
        c.last = { id, at: i };
        if (c.acc[id] !== undefined) continue;
        const fields = toFields(schema, cells);
        const hash = hashRecord(fields);
        c.acc[id] = hash;
        if (c.mode === 'scan' || c.prev?.[id] !== hash) records.push({ id, fields });
      }
      if (untagged.length) await tagRows(sheetId, untagged);
      row = i;
      window = Math.min(windowMax, window * 2);
    }

    if (row < schema.sheet.rowCount) {
      return {
        records,
        deletedIds: [],
        nextCursor: encode({ ...c, row }),
        hasMore: true,
        scanComplete: false,
      };
    }
    // The pass is complete: ids of the previous pass that no row carries any more were deleted.
    const deletedIds =
      c.mode === 'diff' ? Object.keys(c.prev ?? {}).filter((id) => c.acc[id] === undefined) : [];
    const next: Cursor = { v: 1, mode: 'diff', sheetId, row: null, last: null, acc: {}, prev: c.acc };
    // Absence is evidence only when this one page holds the whole sheet: the runtime reads a page with
    // scanComplete as the whole table, so the last page of a longer scan must not say so (the next
    // pass, a diff, reports rows gone since as deletedIds).
    return {
      records,
      deletedIds,
      nextCursor: encode(next),
      hasMore: false,
      scanComplete: c.mode === 'scan' && cursor === null,
    };
  }

  // --- write

  function rowInput(
    schema: Schema,
    fields: Record<string, CanonicalValue>,
  ): (string | number | boolean | null)[] {
    const width = Math.max(0, ...schema.columns.map((c) => c.index + 1));
    const out: (string | number | boolean | null)[] = new Array(width).fill(null);
    for (const [key, value] of Object.entries(fields)) {
      const col = schema.columns.find((c) => c.id === key);
      if (!col) throw validationError(`The sheet has no column "${key}".`);
      if (col.readOnly) continue; // writing would overwrite the column's formula
      out[col.index] = toCellInput(col, value, schema.timeZone);
    }
    return out;
  }

  const idFor = (sheetId: number, key: string) =>
    `k${createHash('sha256').update(`${spreadsheetId}:${sheetId}:${key}`).digest('base64url').slice(0, 22)}`;

  async function postImages(schema: Schema, ids: string[]): Promise<Map<string, RecordData>> {
    const out = new Map<string, RecordData>();
    if (!ids.length) return out;
    const res = await api<{
      valueRanges?: {
        valueRange: ValueRange;
        dataFilters: { developerMetadataLookup?: { metadataValue?: string } }[];
      }[];
    }>('POST', '/values:batchGetByDataFilter', {
      body: {
        dataFilters: ids.map((id) => rowFilter(schema.sheet.sheetId, id)),
        valueRenderOption: 'UNFORMATTED_VALUE',
        dateTimeRenderOption: 'SERIAL_NUMBER',
        majorDimension: 'ROWS',
      },
      idempotent: true,
    });
    for (const vr of res.valueRanges ?? []) {
      const id = vr.dataFilters[0]?.developerMetadataLookup?.metadataValue;
      if (id) out.set(id, { id, fields: toFields(schema, vr.valueRange.values?.[0] ?? []) });
    }
    return out;
  }

  /** Runs a chunk; if Google refuses it as a whole (400), runs its items one by one. */
  async function chunked<T>(
    items: T[],
    size: (t: T) => number,
    run: (chunk: T[]) => Promise<WriteResult[]>,
  ): Promise<WriteResult[]> {
    const isValidation = (e: unknown) => e instanceof ConnectorError && e.code === 'validation';
    const out: WriteResult[] = [];
    for (const chunk of chunksBySize(items, maxPayload, size)) {
      try {
        out.push(...(await run(chunk)));
      } catch (err) {
        if (!isValidation(err)) throw err;
        if (chunk.length === 1) {
          out.push(failure(err));
          continue;
        }
        for (const item of chunk) {
          try {
            out.push(...(await run([item])));
          } catch (e) {
            if (!isValidation(e)) throw e;
            out.push(failure(e));
          }
        }
      }
    }
    return out;
  }

  type Prepared = { index: number; id: string; values: (string | number | boolean | null)[] };

  async function creates(
    schema: Schema,
    items: { index: number; r: Extract<WriteRequest, { kind: 'create' }> }[],
    results: WriteResult[],
  ) {
    const sheetId = schema.sheet.sheetId;
    const prepared: Prepared[] = [];
    for (const { index, r } of items) {
      try {
        prepared.push({ index, id: idFor(sheetId, r.idempotencyKey), values: rowInput(schema, r.fields) });
      } catch (err) {
        results[index] = failure(err);
      }
    }
    if (!prepared.length) return;
    // A retried create: the row made the first time carries the id derived from its key.
    const existing = byRow(await searchRows(prepared.map((p) => rowFilter(sheetId, p.id))));
    const made = new Set(existing.values());
    const images = await postImages(schema, [...made]);
    for (const p of prepared.filter((x) => made.has(x.id)))
      results[p.index] = { ok: true, remoteId: p.id, postImage: images.get(p.id) ?? null };
    const pending = prepared.filter((p) => !made.has(p.id));
    const title = quoteSheet(schema.sheet.title);
    const done = await chunked(
      pending,
      (p) => JSON.stringify(p.values).length + 300,
      async (chunk) => {
        const res = await api<{ updates: { updatedRange: string; updatedData?: ValueRange } }>(
          'POST',
          `/values/${encodeURIComponent(`${title}!A1:${lastColumn(schema)}1`)}:append`,
          {
            query: {
              valueInputOption: 'USER_ENTERED',
              insertDataOption: 'INSERT_ROWS',
              includeValuesInResponse: true,
              responseValueRenderOption: 'UNFORMATTED_VALUE',
              responseDateTimeRenderOption: 'SERIAL_NUMBER',
            },
            body: { majorDimension: 'ROWS', values: chunk.map((p) => p.values.map((v) => v ?? '')) },
          },
        );
        const startRow = firstRowOf(res.updates.updatedRange);
        try {
          await tagRows(
            sheetId,
            chunk.map((p, k) => ({ index: startRow + k, id: p.id })),
          );
        } catch (err) {
          // The rows exist now: never let this fall back to appending them again item by item.
          const e =
            err instanceof ConnectorError
              ? err
              : new ConnectorError('transient', String(err), userMessage('transient', ''));
          throw new ConnectorError(
            'transient',
            `rows appended at ${res.updates.updatedRange} but not tagged: ${e.message}`,
            e.userFacingMessage,
            e.retryAfterMs,
          );
        }
        return chunk.map((p, k) => ({
          ok: true as const,
          remoteId: p.id,
          postImage: { id: p.id, fields: toFields(schema, res.updates.updatedData?.values?.[k] ?? p.values) },
        }));
      },
    );
    for (const [k, p] of pending.entries()) results[p.index] = done[k] as WriteResult;
  }

  async function updates(
    schema: Schema,
    items: { index: number; r: Extract<WriteRequest, { kind: 'update' }> }[],
    results: WriteResult[],
  ) {
    const sheetId = schema.sheet.sheetId;
    const prepared: Prepared[] = [];
    for (const { index, r } of items) {
      try {
        prepared.push({ index, id: r.remoteId, values: rowInput(schema, r.fields) });
      } catch (err) {
        results[index] = failure(err);
      }
    }
    const done = await chunked(
      prepared,
      (p) => JSON.stringify(p.values).length + 400,
      async (chunk) => {
        const res = await api<{
          responses?: {
            dataFilter?: { developerMetadataLookup?: { metadataValue?: string } };
            updatedData?: ValueRange;
          }[];
        }>('POST', '/values:batchUpdateByDataFilter', {
          body: {
            valueInputOption: 'USER_ENTERED',
            includeValuesInResponse: true,
            responseValueRenderOption: 'UNFORMATTED_VALUE',
            responseDateTimeRenderOption: 'SERIAL_NUMBER',
            data: chunk.map((p) => ({
              dataFilter: rowFilter(sheetId, p.id),
              majorDimension: 'ROWS',
              values: [p.values],
            })),
          },
          // Writing the same values twice is harmless.
          idempotent: true,
        });
        const byId = new Map<string, ValueRange | undefined>();
        for (const r of res.responses ?? []) {
          const id = r.dataFilter?.developerMetadataLookup?.metadataValue;
          if (id) byId.set(id, r.updatedData);
        }
        return chunk.map((p): WriteResult => {
          if (!byId.has(p.id)) {
            const e = new ConnectorError(
              'not_found',
              `No row with id ${p.id} in ${schema.sheet.title}`,
              userMessage('not_found', ''),
            );
            return failure(e);
          }
          return {
            ok: true,
            remoteId: p.id,
            postImage: { id: p.id, fields: toFields(schema, byId.get(p.id)?.values?.[0] ?? []) },
          };
        });
      },
    );
    for (const [k, p] of prepared.entries()) results[p.index] = done[k] as WriteResult;
  }

  async function deletes(
    schema: Schema,
    items: { index: number; r: Extract<WriteRequest, { kind: 'delete' }> }[],
    results: WriteResult[],
  ) {
    const sheetId = schema.sheet.sheetId;
    const found = byRow(await searchRows(items.map(({ r }) => rowFilter(sheetId, r.remoteId))));
    // Bottom-up: deleting a lower row first leaves the indexes of the rows above it unchanged.
    const rows = [...found.keys()].sort((a, b) => b - a);
    const requests = rows.map((at) => ({
      deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: at, endIndex: at + 1 } },
    }));
    for (const chunk of chunksBySize(requests, maxPayload))
      await api('POST', ':batchUpdate', { body: { requests: chunk } });
    // A row already gone is a success: replaying a delete changes nothing.
    for (const { index, r } of items) results[index] = { ok: true, remoteId: r.remoteId, postImage: null };
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const schema = await schemaOf(tableId);
    const results: WriteResult[] = new Array(requests.length);
    let i = 0;
    while (i < requests.length) {
      const kind = (requests[i] as WriteRequest).kind;
      let j = i;
      while (j < requests.length && (requests[j] as WriteRequest).kind === kind) j++;
      const group = requests.slice(i, j).map((r, k) => ({ index: i + k, r }));
      if (kind === 'create') await creates(schema, group as never, results);
      else if (kind === 'update') await updates(schema, group as never, results);
      else await deletes(schema, group as never, results);
      i = j;
    }
    return results;
  }

  return {
    capabilities: {
      batchSize: GOOGLE_SHEETS_BATCH_SIZE,
      incrementalRead: true,
      deleteDetection: 'full_scan',
      webhooks: false,
      rateLimit: GOOGLE_SHEETS_RATE_LIMIT,
    },
    stats,
    read,
    write,
    async check() {
      await loadSpreadsheet(true);
    },
    async discover() {
      const ss = await loadSpreadsheet(true);
      const out = [];
      for (const sheet of ss.sheets) {
        const schema = await schemaOf(String(sheet.sheetId), true);
        out.push({
          remoteId: String(sheet.sheetId),
          name: sheet.title,
          fields: schema.columns.map((c) => ({
            remoteId: c.id,
            name: c.name,
            fieldType: c.fieldType,
            readOnly: c.readOnly,
          })),
        });
      }
      return out;
    },
    async listSpreadsheets() {
      const files: { id: string; name: string }[] = [];
      let pageToken: string | undefined;
      do {
        const res = await call<{ files?: { id: string; name: string }[]; nextPageToken?: string }>(drive, {
          method: 'GET',
          path: '/drive/v3/files',
          query: {
            q: `mimeType='${SPREADSHEET_MIME}' and trashed=false`,
            fields: 'files(id,name),nextPageToken',
            pageSize: 100,
            pageToken,
          },
        });
        files.push(...(res.files ?? []));
        pageToken = res.nextPageToken;
      } while (pageToken);
      return files;
    },
  };
}

// ---------------------------------------------------------------------------------------------

function trimEnd(values: string[]): string[] {
  const out = [...values];
  while (out.length && out[out.length - 1]?.trim() === '') out.pop();
  return out;
}

function firstRowOf(range: string): number {
  const m = /!\$?[A-Z]+\$?(\d+)/.exec(range);
  if (!m) throw new ConnectorError('transient', `Unexpected range ${range}`, userMessage('transient', ''));
  return Number(m[1]) - 1;
}

/** Splits items so each chunk's JSON stays under the payload limit. */
function chunksBySize<T>(
  items: T[],
  limit: number,
  size: (t: T) => number = (t) => JSON.stringify(t).length + 1,
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const s = size(item);
    if (current.length && (bytes + s > limit || current.length >= 1000)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += s;
  }
  if (current.length) out.push(current);
  return out;
}
