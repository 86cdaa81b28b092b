/**
 * Google Sheets as a sync side (a TableConnector) on the Sheets API v4:
 * - a sheet is a table; its first row is the header, and the header names are the field ids. Types
 *   are inferred from a sample of cells (effective values and number formats: DATE, DATE_TIME,
 *   CURRENCY), formula columns are read-only.
 * - rows have no ids in Sheets, so each row gets developer metadata (key `lockstep.rowId`, visibility
 *   DOCUMENT) on first read. The metadata moves with its row when people insert, delete or move rows
 *   and is deleted with it: the row id survives every shift.
 * - read: one `spreadsheets.getByDataFilter` per page, addressed by sheet id (grid ranges): the
 *   header row, a window of rows with their effective values, each row's developer metadata
 *   (GridData.rowMetadata), and the sheet's grid size, all in one answer. The first page of a pass
 *   also asks for formulas and number formats and infers the schema again from it. No change feed
 *   exists, so incremental reads re-read the sheet and diff each row against the hash the cursor kept
 *   from the previous pass; rows whose id disappeared are reported deleted at the end of a pass
 *   (deleteDetection full_scan). Each window starts a few rows above the previous page's last row:
 *   finding that row somewhere else in the same answer tells that rows shifted between pages. Near
 *   the end of the data a window runs to the grid's end, so the last page also ends the pass.
 * - write: a create batch is one `spreadsheets.batchUpdate`, applied atomically by Google:
 *   insertDimension (new rows where values.append would write: after the table that starts at the
 *   header), updateCells with typed values, the number formats of date and currency columns, and a
 *   createDeveloperMetadata per row. Each row's metadata id derives from the idempotency key, so a
 *   retried create is refused as a whole (the id exists) and then looked up by its row id instead of
 *   made twice. When the connector does not know where the table ends yet (a long sheet it has not
 *   read), the batch is appended (values.append) and tagged in a second request. Updates go through
 *   values:batchUpdateByDataFilter addressed by the row metadata (Google finds the row, even if it
 *   moved). Deletes look up the rows and delete them bottom-up in one batchUpdate. Requests stay
 *   under ~1.9 MB (Google recommends <= 2 MB).
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
/** Row 0 is the header; data starts below it. */
const FIRST = 1;
/** Rows above the previous page's last row that the next window also reads (to find it again). */
const SHIFT_ROWS = 20;

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
  /** Told of each access token the refresh token gave (and of a new refresh token, if Google sent one). */
  onTokenRefreshed?: (token: {
    accessToken: string;
    expiresAt: number;
    refreshToken?: string;
  }) => Promise<void>;
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
  /** The number format of the column's cells (date, date-time and currency columns), given to new rows. */
  numberFormat?: NumberFormat;
};

export type NumberFormat = { type: string; pattern?: string };

export type SheetInfo = {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
  frozenRowCount: number;
};

type Schema = { sheetId: number; columns: SheetColumn[]; header: string[]; timeZone: string };

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
  /** A Sheets API call on this spreadsheet (path after /v4/spreadsheets/{id}), with the connector's quota and retries. */
  request<T>(
    method: string,
    path: string,
    extra?: { query?: Record<string, string>; body?: unknown },
  ): Promise<T>;
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

const isValidation = (e: unknown) => e instanceof ConnectorError && e.code === 'validation';

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
  effectiveValue?: {
    numberValue?: number;
    stringValue?: string;
    boolValue?: boolean;
    errorValue?: { type?: string };
  };
  effectiveFormat?: { numberFormat?: { type?: string; pattern?: string } };
};

export function inferColumn(
  cells: SampleCell[],
): Pick<SheetColumn, 'fieldType' | 'readOnly' | 'currency' | 'numberFormat'> {
  const filled = cells.filter((c) => c.effectiveValue !== undefined);
  const readOnly = cells.some((c) => c.userEnteredValue && 'formulaValue' in c.userEnteredValue);
  const all = (p: (c: SampleCell) => boolean) => filled.length > 0 && filled.every(p);
  const fmt = (c: SampleCell) => c.effectiveFormat?.numberFormat?.type;
  const first = filled[0]?.effectiveFormat?.numberFormat;
  const numberFormat = first?.type
    ? { type: first.type, ...(first.pattern ? { pattern: first.pattern } : {}) }
    : undefined;
  if (all((c) => typeof c.effectiveValue?.boolValue === 'boolean')) return { fieldType: 'boolean', readOnly };
  if (all((c) => typeof c.effectiveValue?.numberValue === 'number')) {
    if (all((c) => fmt(c) === 'DATE'))
      return { fieldType: 'date', readOnly, ...(numberFormat && { numberFormat }) };
    if (all((c) => fmt(c) === 'DATE_TIME'))
      return { fieldType: 'datetime', readOnly, ...(numberFormat && { numberFormat }) };
    if (all((c) => fmt(c) === 'CURRENCY')) {
      const pattern = first?.pattern ?? '';
      const symbol = Object.keys(CURRENCY_SYMBOLS).find((s) => pattern.includes(s)) ?? '$';
      const digits = /\.(0+)/.exec(pattern)?.[1]?.length ?? 0;
      return {
        fieldType: 'currency',
        readOnly,
        currency: { code: CURRENCY_SYMBOLS[symbol] ?? 'USD', digits },
        ...(numberFormat && { numberFormat }),
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

/** How a cell value is spelled for one kind of write; numbers and booleans go as they are. */
type CellEncoding<T> = {
  empty: T;
  text(s: string): T;
  date(isoDate: string): T;
  datetime(instantMs: number): T;
};

/** A canonical value checked against its column and spelled with `enc` (the two writes below). */
function encodeCell<T>(col: SheetColumn, value: CanonicalValue, enc: CellEncoding<T>): T | number | boolean {
  if (value === null) return enc.empty;
  const text = (s: string) => {
    if (s.length > MAX_CELL_CHARS)
      throw validationError(
        `"${col.name}" holds ${s.length} characters; a cell takes at most ${MAX_CELL_CHARS}.`,
      );
    return s === '' ? enc.empty : enc.text(s);
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
      if (!r.ok || typeof r.value !== 'string')
        throw validationError(`"${col.name}" needs a date, got ${JSON.stringify(value)}.`);
      return enc.date(r.value);
    }
    case 'datetime': {
      const r = normalizeValue('datetime', value);
      if (!r.ok || typeof r.value !== 'string') throw validationError(`"${col.name}" needs a date and time.`);
      return enc.datetime(Date.parse(r.value));
    }
    default:
      if (Array.isArray(value))
        return text(value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', '));
      if (typeof value === 'object') return text(JSON.stringify('json' in value ? value.json : value));
      return text(String(value));
  }
}

/** A canonical value as USER_ENTERED input; text is prefixed with an apostrophe so Sheets keeps it as typed. */
export function toCellInput(
  col: SheetColumn,
  value: CanonicalValue,
  timeZone: string,
): string | number | boolean {
  return encodeCell<string>(col, value, {
    empty: '',
    text: (s) => `'${s}`,
    date: (d) => d,
    datetime: (instant) => wallTimeText(instant, timeZone),
  });
}

/**
 * A canonical value as a typed cell value for updateCells (an ExtendedValue) or a RAW append: Sheets
 * stores it as given, nothing is parsed (text that looks like a formula or a number stays text).
 * Dates and date-times are serial numbers (days since 1899-12-30, wall time in the spreadsheet's
 * zone); undefined leaves the cell empty.
 */
export function toCellValue(
  col: SheetColumn,
  value: CanonicalValue,
  timeZone: string,
): string | number | boolean | undefined {
  return encodeCell<string | number | undefined>(col, value, {
    empty: undefined,
    text: (s) => s,
    date: (d) => (Date.parse(`${d}T00:00:00Z`) - EPOCH) / DAY_MS,
    datetime: (instant) => (instant + zoneOffset(timeZone, instant) - EPOCH) / DAY_MS,
  });
}

/** What UNFORMATTED_VALUE shows for an error's ErrorType. */
const ERROR_TEXT: Record<string, string> = {
  NULL_VALUE: '#NULL!',
  DIVIDE_BY_ZERO: '#DIV/0!',
  VALUE: '#VALUE!',
  REF: '#REF!',
  NAME: '#NAME?',
  NUM: '#NUM!',
  N_A: '#N/A',
  LOADING: '#LOADING',
  ERROR: '#ERROR!',
};

/** A cell's effective value as values.get renders it with UNFORMATTED_VALUE + SERIAL_NUMBER. */
function effectiveRaw(cell: SampleCell | undefined): string | number | boolean | undefined {
  const ev = cell?.effectiveValue;
  if (!ev) return undefined;
  if (ev.numberValue !== undefined) return ev.numberValue;
  if (ev.stringValue !== undefined) return ev.stringValue === '' ? undefined : ev.stringValue;
  if (ev.boolValue !== undefined) return ev.boolValue;
  if (ev.errorValue) return ERROR_TEXT[ev.errorValue.type ?? ''] ?? '#ERROR!';
  return undefined;
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
  /** The first empty row of this pass (where the table that starts at the header ends). */
  gap?: number | null;
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
      const res = await oauthClient.request<{
        access_token: string;
        expires_in: number;
        refresh_token?: string;
      }>({
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
      const fresh = { value: res.body.access_token, expiresAt: Date.now() + res.body.expires_in * 1000 };
      token = fresh;
      tokenGeneration += 1;
      await options.onTokenRefreshed?.({
        accessToken: fresh.value,
        expiresAt: fresh.expiresAt,
        ...(res.body.refresh_token ? { refreshToken: res.body.refresh_token } : {}),
      });
      return fresh.value;
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
    r.method === 'GET' || /developerMetadata:search|:batchGetByDataFilter|:getByDataFilter/.test(r.path);
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

  // --- spreadsheet, grids and schema

  let spreadsheet: { timeZone: string; sheets: SheetInfo[] } | undefined;
  /** The latest grid size, title and frozen rows of each sheet, from any answer that carried them. */
  const grids = new Map<number, SheetInfo>();
  const schemas = new Map<number, Schema>();
  /**
   * Where new rows go in each sheet: the first empty row after the header (the row values.append
   * would write to). Learnt from a sample, a read pass or the connector's own writes; a hint only
   * (people edit between requests), so a wrong one misplaces rows but never overwrites any.
   */
  const insertAt = new Map<number, number>();

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
      sheets: (res.sheets ?? []).map((s) => sheetInfoOf(s.properties)),
    };
    for (const sheet of spreadsheet.sheets) grids.set(sheet.sheetId, sheet);
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

  /** A table id is the sheet id (gid); a title is looked up. */
  async function sheetIdOf(tableId: string): Promise<number> {
    if (/^\d+$/.test(tableId)) return Number(tableId);
    return (await sheetOf(tableId)).sheetId;
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

  type Grid = {
    timeZone: string;
    sheet: SheetInfo;
    /** Row index -> its cells (rows with no data are absent). */
    rows: Map<number, SampleCell[]>;
    /** Row index -> the row id its metadata carries. */
    ids: Map<number, string>;
    /** The row ranges the answer covers, as asked (after clamping to the grid). */
    ranges: { r0: number; r1: number }[];
  };
  /** Rows [r0, r1) (r1 null: to the grid's end, however far it is now), columns [0, c1). */
  type GridAsk = { r0: number; r1: number | null; c1?: number | undefined };

  /**
   * One spreadsheets.getByDataFilter for row ranges of one sheet (by sheet id, so a renamed sheet is
   * still found): sheet properties, the cells' effective values (and, when sampling, formulas and
   * number formats for type inference) and each row's developer metadata. A range past the grid (rows
   * deleted since the size was learnt) makes Google refuse the request: the size is read again and
   * the request made once more.
   */
  async function fetchGrid(sheetId: number, asks: GridAsk[], sampling: boolean): Promise<Grid> {
    const cellFields = sampling
      ? 'effectiveValue,userEnteredValue/formulaValue,effectiveFormat/numberFormat'
      : 'effectiveValue';
    const fields =
      'properties/timeZone,sheets(properties(sheetId,title,gridProperties(rowCount,columnCount,frozenRowCount)),' +
      `data(startRow,rowData(values(${cellFields})),rowMetadata(developerMetadata(metadataId,metadataKey,metadataValue))))`;
    for (let attempt = 0; ; attempt++) {
      const known = grids.get(sheetId);
      const ranges = asks
        .map((a) => ({
          r0: a.r0,
          r1: a.r1 !== null && known ? Math.min(a.r1, known.rowCount) : a.r1,
          c1: a.c1 !== undefined && known ? Math.min(a.c1, known.columnCount) : a.c1,
        }))
        .filter((a) => a.r0 < (a.r1 ?? known?.rowCount ?? a.r0 + 1));
      if (!ranges.length) ranges.push({ r0: 0, r1: 1, c1: undefined });
      try {
        const res = await api<{
          properties?: { timeZone?: string };
          sheets?: {
            properties: Parameters<typeof sheetInfoOf>[0];
            data?: {
              startRow?: number;
              rowData?: { values?: SampleCell[] }[];
              rowMetadata?: { developerMetadata?: Omit<Metadata, 'location'>[] }[];
            }[];
          }[];
        }>('POST', ':getByDataFilter', {
          query: { fields },
          body: {
            dataFilters: ranges.map((r) => ({
              gridRange: {
                sheetId,
                startRowIndex: r.r0,
                ...(r.r1 !== null ? { endRowIndex: r.r1 } : {}),
                ...(r.c1 !== undefined ? { startColumnIndex: 0, endColumnIndex: Math.max(1, r.c1) } : {}),
              },
            })),
          },
          idempotent: true,
        });
        const found = (res.sheets ?? []).find((s) => s.properties.sheetId === sheetId);
        if (!found)
          throw new ConnectorError('not_found', `No sheet ${sheetId}`, userMessage('not_found', ''));
        const sheet = sheetInfoOf(found.properties);
        grids.set(sheetId, sheet);
        const rows = new Map<number, SampleCell[]>();
        const tags = new Map<number, { id: string; metadataId: number }>();
        for (const data of found.data ?? []) {
          const start = data.startRow ?? 0;
          for (const [k, r] of (data.rowData ?? []).entries()) rows.set(start + k, r.values ?? []);
          for (const [k, r] of (data.rowMetadata ?? []).entries()) {
            for (const m of r.developerMetadata ?? []) {
              if (m.metadataKey !== ROW_ID_KEY || m.metadataValue === undefined) continue;
              const prev = tags.get(start + k);
              // Two ids on one row: the lower metadata id wins, so the choice is stable.
              if (!prev || m.metadataId < prev.metadataId)
                tags.set(start + k, { id: m.metadataValue, metadataId: m.metadataId });
            }
          }
        }
        return {
          timeZone: res.properties?.timeZone ?? spreadsheet?.timeZone ?? 'UTC',
          sheet,
          rows,
          ids: new Map([...tags].map(([k, v]) => [k, v.id])),
          ranges: ranges.map((r) => ({ r0: r.r0, r1: Math.min(r.r1 ?? sheet.rowCount, sheet.rowCount) })),
        };
      } catch (err) {
        if (!(err instanceof ConnectorError && err.code === 'validation') || attempt > 0) throw err;
        // Rows or columns were deleted since the grid size was learnt (or it was never learnt).
        await loadSpreadsheet(true);
        if (!grids.has(sheetId) || !spreadsheet?.sheets.some((s) => s.sheetId === sheetId))
          throw new ConnectorError(
            'not_found',
            `No sheet ${sheetId} in spreadsheet ${spreadsheetId}`,
            userMessage('not_found', ''),
          );
      }
    }
  }

  /** The header row's names, as the schema keeps them. */
  const headerOf = (cells: SampleCell[] | undefined) =>
    (cells ?? []).map((c) => String(c.effectiveValue?.stringValue ?? c.effectiveValue?.numberValue ?? ''));

  /** The schema of a sampled grid: row 0 is the header, the next `sampleRows` rows the sample. */
  function schemaFrom(sheetId: number, grid: Grid): Schema {
    const header = headerOf(grid.rows.get(0));
    const sample: SampleCell[][] = [];
    for (let i = FIRST; i < FIRST + sampleRows && i < grid.sheet.rowCount; i++)
      sample.push(grid.rows.get(i) ?? []);
    const schema: Schema = { sheetId, header, columns: columnsOf(header, sample), timeZone: grid.timeZone };
    schemas.set(sheetId, schema);
    return schema;
  }

  /** Header columns wide: cells to the right of the last named column are not the table's. */
  const widthOf = (schema: Schema) => Math.max(1, ...schema.columns.map((c) => c.index + 1));
  const lastColumn = (schema: Schema) => columnLetter(widthOf(schema) - 1);

  /** A row's cells as UNFORMATTED_VALUE raw values, header columns wide. */
  function rawRow(
    schema: Schema,
    cells: SampleCell[] | undefined,
  ): (string | number | boolean | undefined)[] {
    const width = widthOf(schema);
    const out: (string | number | boolean | undefined)[] = new Array(width);
    for (let c = 0; c < width; c++) out[c] = effectiveRaw(cells?.[c]);
    return out;
  }

  const isBlank = (raw: unknown[]) => raw.every((v) => v === undefined);

  /** The schema for writing: the cached one, or one sampled now (which may also tell where the table ends). */
  async function schemaFor(sheetId: number, refresh = false): Promise<Schema> {
    const cached = schemas.get(sheetId);
    if (cached && !refresh) return cached;
    const grid = await fetchGrid(sheetId, [{ r0: 0, r1: FIRST + sampleRows }], true);
    const schema = schemaFrom(sheetId, grid);
    const end = grid.ranges[0]?.r1 ?? FIRST;
    let gap: number | undefined;
    for (let i = FIRST; i < end && gap === undefined; i++)
      if (isBlank(rawRow(schema, grid.rows.get(i)))) gap = i;
    if (gap !== undefined) insertAt.set(sheetId, gap);
    else if (end >= grid.sheet.rowCount) insertAt.set(sheetId, grid.sheet.rowCount);
    else if ((insertAt.get(sheetId) ?? end) < end) insertAt.delete(sheetId); // the table runs past the sample
    return schema;
  }

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

  /** Developer metadata matching the filters (chunked under the payload limit). */
  async function searchMetadata(filters: unknown[]): Promise<Metadata[]> {
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
      // Two ids on one row: the lower metadata id wins, so the choice is stable.
      if (!prev || m.metadataId < prev.metadataId)
        rows.set(at, { id: m.metadataValue, metadataId: m.metadataId });
    }
    return new Map([...rows].map(([k, v]) => [k, v.id]));
  }

  const rowTag = (sheetId: number, index: number, id: string, metadataId?: number) => ({
    createDeveloperMetadata: {
      developerMetadata: {
        ...(metadataId !== undefined ? { metadataId } : {}),
        metadataKey: ROW_ID_KEY,
        metadataValue: id,
        visibility: 'DOCUMENT',
        location: {
          dimensionRange: { sheetId, dimension: 'ROWS', startIndex: index, endIndex: index + 1 },
        },
      },
    },
  });

  async function tagRows(sheetId: number, rows: { index: number; id: string }[]): Promise<void> {
    const requests = rows.map((r) => rowTag(sheetId, r.index, r.id));
    for (const chunk of chunksBySize(requests, maxPayload))
      await api('POST', ':batchUpdate', { body: { requests: chunk } });
  }

  // --- read

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const pageSize = Math.max(1, opts.pageSize);
    const sheetId = await sheetIdOf(tableId);
    const c: Cursor = cursor
      ? decode(cursor, sheetId)
      : { v: 1, mode: 'scan', sheetId, row: null, last: null, acc: {} };
    // A new pass infers the schema again: people rename, add and retype columns between passes.
    let sampling = c.row === null || !schemas.has(sheetId);
    let row = c.row ?? FIRST;
    let anchor = c.last;
    let last = c.last;
    let gap = c.gap ?? null;
    const records: RecordData[] = [];
    let window = Math.min(windowMax, Math.max(pageSize + 1, 50));

    for (let fetches = 0; fetches < 8 && records.length < pageSize; fetches++) {
      const known = grids.get(sheetId);
      if (known && row >= known.rowCount && !sampling) break;
      // The window starts a few rows above the previous page's last row, to find it again.
      const lo = anchor ? Math.max(FIRST, anchor.at - SHIFT_ROWS) : row;
      let hi: number | null = row + window;
      if (known) {
        const left = known.rowCount - hi;
        const end = insertAt.get(sheetId);
        // Near the end of the table, read on to the grid's end (at most a largest window): trailing
        // empty rows cost nothing in the answer, and the page that reaches the end of the data then
        // also ends the pass instead of leaving more requests to find nothing. The end is near when
        // the known end of the table falls in this window, or when the previous window ended in
        // empty rows (the cursor is past the last row read).
        const nearEnd =
          left <= window / 2 ||
          (end !== undefined && end > row && end <= hi) ||
          (last !== null && row > last.at + 1 && fetches === 0);
        // Open-ended, so rows added at the end since the grid size was learnt are read too.
        if (left > 0 && nearEnd && known.rowCount - row <= Math.max(windowMax, window)) hi = null;
      }
      const asks: GridAsk[] = [{ r0: 0, r1: sampling ? FIRST + sampleRows : 1 }];
      const head = asks[0] as GridAsk;
      const current = schemas.get(sheetId);
      if (lo <= (head.r1 as number)) head.r1 = hi === null ? null : Math.max(head.r1 as number, hi);
      else asks.push({ r0: lo, r1: hi, c1: sampling || !current ? undefined : widthOf(current) });
      const grid = await fetchGrid(sheetId, asks, sampling);
      let schema: Schema;
      if (sampling) {
        schema = schemaFrom(sheetId, grid);
        sampling = false;
      } else {
        schema = current as Schema;
        schema.timeZone = grid.timeZone;
        const header = trimEnd(headerOf(grid.rows.get(0)));
        if (header.join('\u0000') !== trimEnd(schema.header).join('\u0000')) {
          // Someone renamed, added or moved a header: infer the schema again and read the window again.
          sampling = true;
          continue;
        }
      }
      const covered = grid.ranges[grid.ranges.length - 1]?.r1 ?? FIRST;
      if (anchor) {
        const id = anchor.id;
        let at: number | undefined;
        for (let i = lo; i < covered && at === undefined; i++) if (grid.ids.get(i) === id) at = i;
        if (at === undefined) {
          // That row was deleted (or moved far): start the pass over; rows already read are skipped by id.
          row = FIRST;
          anchor = null;
          last = null;
          gap = null;
          continue;
        }
        // Rows were inserted or deleted above the cursor: it moves with them.
        row += at - anchor.at;
        anchor = { id, at };
        if (row >= covered) continue;
        anchor = null;
      }
      const untagged: { index: number; id: string }[] = [];
      const hadGap = gap !== null;
      let i = row;
      for (; i < covered && records.length < pageSize; i++) {
        const raw = rawRow(schema, grid.rows.get(i));
        if (isBlank(raw)) {
          gap ??= i;
          continue;
        }
        let id = grid.ids.get(i);
        if (!id) {
          id = `r${randomBytes(9).toString('base64url')}`;
          untagged.push({ index: i, id });
        }
        last = { id, at: i };
        if (c.acc[id] !== undefined) continue;
        const fields = toFields(schema, raw);
        const hash = hashRecord(fields);
        c.acc[id] = hash;
        if (c.mode === 'scan' || c.prev?.[id] !== hash) records.push({ id, fields });
      }
      // Empty rows left in the window hold nothing to read.
      while (i < covered && isBlank(rawRow(schema, grid.rows.get(i)))) {
        gap ??= i;
        i++;
      }
      // The first empty row of the pass is where the table ends (the connector's own inserts move it on).
      if (!hadGap && gap !== null) insertAt.set(sheetId, gap);
      if (untagged.length) await tagRows(sheetId, untagged);
      row = i;
      window = Math.min(windowMax, window * 2);
    }

    const rowCount = grids.get(sheetId)?.rowCount ?? row;
    if (row < rowCount) {
      return {
        records,
        deletedIds: [],
        nextCursor: encode({ ...c, row, last, gap }),
        hasMore: true,
        scanComplete: false,
      };
    }
    // The pass is complete; without an empty row the table fills the grid and new rows go after it.
    if (gap === null) insertAt.set(sheetId, rowCount);
    // Ids of the previous pass that no row carries any more were deleted.
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

  type CellValue = string | number | boolean | undefined;

  function rowValues(schema: Schema, fields: Record<string, CanonicalValue>): CellValue[] {
    const out: CellValue[] = new Array(widthOf(schema)).fill(undefined);
    for (const [key, value] of Object.entries(fields)) {
      const col = schema.columns.find((c) => c.id === key);
      if (!col) throw validationError(`The sheet has no column "${key}".`);
      if (col.readOnly) continue; // writing would overwrite the column's formula
      out[col.index] = toCellValue(col, value, schema.timeZone);
    }
    return out;
  }

  function rowInput(
    schema: Schema,
    fields: Record<string, CanonicalValue>,
  ): (string | number | boolean | null)[] {
    const out: (string | number | boolean | null)[] = new Array(widthOf(schema)).fill(null);
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

  /**
   * The metadata id of a created row's tag (positive int32), derived from the idempotency key: Google
   * refuses a second metadata with the same id, which turns a retried create into a lookup.
   */
  const metadataIdFor = (sheetId: number, key: string) =>
    (createHash('sha256').update(`mid:${spreadsheetId}:${sheetId}:${key}`).digest().readUInt32BE(0) %
      2_147_483_646) +
    1;

  /** The rows carrying these ids, with their values (a retried create's post-image). */
  async function postImages(schema: Schema, ids: string[]): Promise<Map<string, RecordData>> {
    const out = new Map<string, RecordData>();
    for (const chunk of chunksBySize(ids, maxPayload, (id) => id.length + 250)) {
      const res = await api<{
        valueRanges?: {
          valueRange?: ValueRange;
          dataFilters?: { developerMetadataLookup?: { metadataValue?: string } }[];
        }[];
      }>('POST', '/values:batchGetByDataFilter', {
        body: {
          dataFilters: chunk.map((id) => rowFilter(schema.sheetId, id)),
          valueRenderOption: 'UNFORMATTED_VALUE',
          dateTimeRenderOption: 'SERIAL_NUMBER',
          majorDimension: 'ROWS',
        },
        idempotent: true,
      });
      for (const vr of res.valueRanges ?? []) {
        const id = vr.dataFilters?.[0]?.developerMetadataLookup?.metadataValue;
        if (id && vr.valueRange?.range && !out.has(id))
          out.set(id, { id, fields: toFields(schema, vr.valueRange.values?.[0] ?? []) });
      }
    }
    return out;
  }

  /** Runs a chunk; if Google refuses it as a whole (400), runs its items one by one. */
  async function chunked<T>(
    items: T[],
    size: (t: T) => number,
    run: (chunk: T[]) => Promise<WriteResult[]>,
  ): Promise<WriteResult[]> {
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

  type Create = {
    id: string;
    /** The tag's metadata id; undefined lets Google choose (after a collision with another row's). */
    metadataId: number | undefined;
    fields: Record<string, CanonicalValue>;
    values: CellValue[];
  };

  const created = (schema: Schema, p: Create): WriteResult => ({
    ok: true,
    remoteId: p.id,
    // Typed values are stored as given: the row now reads back as exactly these values.
    postImage: { id: p.id, fields: toFields(schema, p.values) },
  });

  /** Number formats for the new rows' date, date-time and currency cells (they show as such). */
  function formatRequests(schema: Schema, at: number, n: number) {
    return schema.columns
      .filter((c) => c.numberFormat && ['date', 'datetime', 'currency'].includes(c.fieldType) && !c.readOnly)
      .map((c) => ({
        repeatCell: {
          range: {
            sheetId: schema.sheetId,
            startRowIndex: at,
            endRowIndex: at + n,
            startColumnIndex: c.index,
            endColumnIndex: c.index + 1,
          },
          cell: { userEnteredFormat: { numberFormat: c.numberFormat } },
          fields: 'userEnteredFormat.numberFormat',
        },
      }));
  }

  const cellData = (v: CellValue) =>
    v === undefined
      ? {}
      : {
          userEnteredValue:
            typeof v === 'number'
              ? { numberValue: v }
              : typeof v === 'boolean'
                ? { boolValue: v }
                : { stringValue: v },
        };

  /**
   * One atomic batchUpdate: new rows inserted at the table's end, their typed values and formats, and
   * their tags. Nothing is applied when Google refuses any part of it.
   */
  async function insertRows(schema: Schema, items: Create[], at: number): Promise<void> {
    const sheetId = schema.sheetId;
    const n = items.length;
    const gridRows = grids.get(sheetId)?.rowCount ?? at;
    const requests = [
      {
        insertDimension: {
          range: { sheetId, dimension: 'ROWS', startIndex: at, endIndex: at + n },
          // The new rows take the formats of the table's last row (of the row below, under the header).
          inheritFromBefore: at > FIRST || at >= gridRows,
        },
      },
      {
        updateCells: {
          start: { sheetId, rowIndex: at, columnIndex: 0 },
          rows: items.map((p) => {
            const values = p.values.map(cellData);
            while (values.length && Object.keys(values[values.length - 1] as object).length === 0)
              values.pop();
            return { values };
          }),
          fields: 'userEnteredValue',
        },
      },
      ...formatRequests(schema, at, n),
      ...items.map((p, k) => rowTag(sheetId, at + k, p.id, p.metadataId)),
    ];
    await api('POST', ':batchUpdate', {
      body: { requests },
      // With every tag's id fixed, sending it twice is harmless: the second is refused as a whole.
      idempotent: items.every((p) => p.metadataId !== undefined),
    });
    moved(sheetId, at, n);
  }

  /** Keeps the grid size and the insertion row in step with rows this connector inserted (n > 0) or deleted. */
  function moved(sheetId: number, at: number, n: number) {
    const grid = grids.get(sheetId);
    if (grid) grid.rowCount = Math.max(1, grid.rowCount + n);
    const end = insertAt.get(sheetId);
    if (end !== undefined && at <= end) insertAt.set(sheetId, Math.max(FIRST, end + n));
  }

  /**
   * The table's end is not known (a long sheet not read yet): values.append finds it (Google's table
   * detection), then a second request tags the rows it reports. Not atomic: rows appended but not
   * tagged (a failure between the two) are read as new rows.
   */
  async function appendRows(schema: Schema, items: Create[]): Promise<void> {
    const sheetId = schema.sheetId;
    const title = quoteSheet(grids.get(sheetId)?.title ?? (await sheetOf(String(sheetId))).title);
    const res = await api<{ updates: { updatedRange: string } }>(
      'POST',
      `/values/${encodeURIComponent(`${title}!A1:${lastColumn(schema)}1`)}:append`,
      {
        query: { valueInputOption: 'RAW', insertDataOption: 'INSERT_ROWS' },
        body: { majorDimension: 'ROWS', values: items.map((p) => p.values.map((v) => v ?? null)) },
      },
    );
    const at = firstRowOf(res.updates.updatedRange);
    const grid = grids.get(sheetId);
    if (grid) grid.rowCount += items.length;
    insertAt.set(sheetId, at + items.length);
    const rows = items.map((p, k) => ({ p, index: at + k }));
    const tag = (list: typeof rows, withIds: boolean) =>
      api('POST', ':batchUpdate', {
        body: {
          requests: [
            ...formatRequests(schema, at, items.length),
            ...list.map(({ p, index }) => rowTag(sheetId, index, p.id, withIds ? p.metadataId : undefined)),
          ],
        },
        // Fixed metadata ids make a repeat harmless (refused as a whole).
        idempotent: withIds,
      });
    try {
      try {
        await tag(rows, true);
      } catch (err) {
        if (!isValidation(err)) throw err;
        // Tagged by an earlier attempt of this request, or a derived metadata id that another row
        // holds: the rows still without their id get ids Google chooses.
        const tagged = new Set(
          (await searchMetadata(rows.map(({ p }) => rowFilter(sheetId, p.id)))).map((m) => m.metadataValue),
        );
        const rest = rows.filter(({ p }) => !tagged.has(p.id));
        if (rest.length) await tag(rest, false);
      }
    } catch (err) {
      // The rows exist now: never let this fall back to appending them again.
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
  }

  /** One request (two when the table's end is unknown) for a chunk of new rows. */
  async function createOnce(schema: Schema, items: Create[]): Promise<void> {
    const at = insertAt.get(schema.sheetId);
    if (at === undefined) await appendRows(schema, items);
    else await insertRows(schema, items, Math.min(at, grids.get(schema.sheetId)?.rowCount ?? at));
  }

  /**
   * Creates a chunk of rows. Google refuses a batch as a whole (nothing applied) when a tag's metadata
   * id exists (a create made before: a retry), when the insertion row is past the grid (rows deleted
   * since), or when one item is invalid. Then: rows that exist are looked up by id, the schema and
   * the table's end are read again, derived metadata ids taken by other rows are dropped, and the
   * rest is tried again, then item by item.
   */
  async function createChunk(sheetId: number, chunk: Create[], out: Map<string, WriteResult>): Promise<void> {
    let schema = await schemaFor(sheetId);
    try {
      await createOnce(schema, chunk);
      for (const p of chunk) out.set(p.id, created(schema, p));
      return;
    } catch (err) {
      if (!isValidation(err)) throw err;
    }
    const existing = await postImages(
      schema,
      chunk.map((p) => p.id),
    );
    for (const p of chunk) {
      const image = existing.get(p.id);
      if (image) out.set(p.id, { ok: true, remoteId: p.id, postImage: image });
    }
    let pending = chunk.filter((p) => !existing.has(p.id));
    if (!pending.length) return;
    const fixed = pending.flatMap((p) => (p.metadataId !== undefined ? [p.metadataId] : []));
    const taken = new Set(
      fixed.length
        ? (
            await searchMetadata(fixed.map((metadataId) => ({ developerMetadataLookup: { metadataId } })))
          ).map((m) => m.metadataId)
        : [],
    );
    schema = await schemaFor(sheetId, true);
    pending = prepareCreates(
      schema,
      pending.map((p) => ({
        ...p,
        metadataId: p.metadataId !== undefined && taken.has(p.metadataId) ? undefined : p.metadataId,
      })),
      out,
    );
    if (!pending.length) return;
    try {
      await createOnce(schema, pending);
      for (const p of pending) out.set(p.id, created(schema, p));
      return;
    } catch (err) {
      if (!isValidation(err)) throw err;
      const only = pending.length === 1 ? pending[0] : undefined;
      if (only && only.metadataId === undefined) {
        out.set(only.id, failure(err));
        return;
      }
    }
    // Item by item; a last try lets Google choose the metadata id (one taken by metadata we cannot see).
    for (const p of pending) {
      let error: unknown;
      for (const metadataId of p.metadataId !== undefined ? [p.metadataId, undefined] : [undefined]) {
        try {
          await createOnce(schema, [{ ...p, metadataId }]);
          out.set(p.id, created(schema, p));
          error = undefined;
          break;
        } catch (err) {
          if (!isValidation(err)) throw err;
          error = err;
          const image = (await postImages(schema, [p.id])).get(p.id);
          if (image) {
            out.set(p.id, { ok: true, remoteId: p.id, postImage: image });
            error = undefined;
            break;
          }
        }
      }
      if (error !== undefined) out.set(p.id, failure(error));
    }
  }

  /** Typed values for each create under this schema; an item that does not fit fails alone. */
  function prepareCreates(
    schema: Schema,
    items: Omit<Create, 'values'>[],
    out: Map<string, WriteResult>,
  ): Create[] {
    const ok: Create[] = [];
    for (const p of items) {
      try {
        ok.push({ ...p, values: rowValues(schema, p.fields) });
      } catch (err) {
        out.set(p.id, failure(err));
      }
    }
    return ok;
  }

  async function creates(
    schema: Schema,
    items: { index: number; r: Extract<WriteRequest, { kind: 'create' }> }[],
    results: WriteResult[],
  ) {
    const sheetId = schema.sheetId;
    // One row per id: the same idempotency key twice in a batch makes one row.
    const unique = new Map<string, Omit<Create, 'values'>>();
    const ids: string[] = [];
    for (const { r } of items) {
      const id = idFor(sheetId, r.idempotencyKey);
      ids.push(id);
      if (!unique.has(id))
        unique.set(id, { id, fields: r.fields, metadataId: metadataIdFor(sheetId, r.idempotencyKey) });
    }
    const out = new Map<string, WriteResult>();
    const prepared = prepareCreates(schema, [...unique.values()], out);
    // A row's cells as updateCells values, its tag and the formats: the JSON of its values plus a margin.
    const size = (p: Create) => JSON.stringify(p.values).length + 40 * p.values.length + 400;
    for (const chunk of chunksBySize(prepared, maxPayload, size)) await createChunk(sheetId, chunk, out);
    for (const [k, { index }] of items.entries())
      results[index] = out.get(ids[k] as string) ?? failure(new Error('no result for the create'));
  }

  async function updates(
    schema: Schema,
    items: { index: number; r: Extract<WriteRequest, { kind: 'update' }> }[],
    results: WriteResult[],
  ) {
    const sheetId = schema.sheetId;
    const prepared: { index: number; id: string; values: (string | number | boolean | null)[] }[] = [];
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
              `No row with id ${p.id} in sheet ${sheetId}`,
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
    const sheetId = schema.sheetId;
    const found = byRow(await searchMetadata(items.map(({ r }) => rowFilter(sheetId, r.remoteId))));
    // Bottom-up: deleting a lower row first leaves the indexes of the rows above it unchanged.
    const rows = [...found.keys()].sort((a, b) => b - a);
    const requests = rows.map((at) => ({
      deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: at, endIndex: at + 1 } },
    }));
    for (const chunk of chunksBySize(requests, maxPayload)) {
      await api('POST', ':batchUpdate', { body: { requests: chunk } });
      for (const r of chunk) moved(sheetId, r.deleteDimension.range.startIndex, -1);
    }
    // A row already gone is a success: replaying a delete changes nothing.
    for (const { index, r } of items) results[index] = { ok: true, remoteId: r.remoteId, postImage: null };
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const schema = await schemaFor(await sheetIdOf(tableId));
    const results: WriteResult[] = new Array(requests.length);
    let i = 0;
    while (i < requests.length) {
      const kind = (requests[i] as WriteRequest).kind;
      let j = i;
      while (j < requests.length && (requests[j] as WriteRequest).kind === kind) j++;
      const group = requests.slice(i, j).map((r, k) => ({ index: i + k, r }));
      const current = schemas.get(schema.sheetId) ?? schema;
      if (kind === 'create') await creates(current, group as never, results);
      else if (kind === 'update') await updates(current, group as never, results);
      else await deletes(current, group as never, results);
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
      // Every page re-reads the header row, so a record carries every column the header has now:
      // a renamed or deleted header is missing from it, not read as emptied.
      recordsCarryEveryField: true,
    },
    stats,
    read,
    write,
    async check() {
      await loadSpreadsheet(true);
    },
    request: <T>(
      method: string,
      path: string,
      extra: { query?: Record<string, string>; body?: unknown } = {},
    ) => api<T>(method, path, extra),
    async discover() {
      const ss = await loadSpreadsheet(true);
      const out = [];
      for (const sheet of ss.sheets) {
        const schema = await schemaFor(sheet.sheetId, true);
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

function sheetInfoOf(p: {
  sheetId: number;
  title: string;
  gridProperties?: { rowCount?: number; columnCount?: number; frozenRowCount?: number };
}): SheetInfo {
  return {
    sheetId: p.sheetId,
    title: p.title,
    rowCount: p.gridProperties?.rowCount ?? 0,
    columnCount: p.gridProperties?.columnCount ?? 0,
    frozenRowCount: p.gridProperties?.frozenRowCount ?? 0,
  };
}

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
