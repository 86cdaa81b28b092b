/**
 * Google Sheets as a sync side (a TableConnector) on the Sheets API v4:
 * - a sheet is a table; its first row is the header, and the header names are the field ids. Types
 *   are inferred from a sample of cells (effective values and number formats: DATE, DATE_TIME,
 *   CURRENCY), formula columns are read-only.
 * - rows have no ids in Sheets, so Lockstep adds one id column to each synced sheet: after the last
 *   header column, headed `Lockstep ID` (`Lockstep ID 2`... when taken), hidden (hiddenByUser) and
 *   protected with a warning-only protected range. Each row's cell there holds a short random id
 *   (12 base64url characters). The column itself is found by column developer metadata
 *   (`lockstep.idColumn`): metadata attached to a column moves with it, so people may move the
 *   column and it is still found. Why a column and not developer metadata on every row (the design
 *   before): Google keeps at most 30,000 characters of developer metadata per sheet and per
 *   spreadsheet, so ~37 characters of row metadata per row stopped a sheet at ~810 rows. Now a sheet
 *   holds one metadata entry whatever its size. Ids live in the cells, so they move with their row
 *   on inserts, deletes, moves and sorts. The id column is never a field and never written by a sync.
 *   Sheets tagged the old way (row metadata `lockstep.rowId`) are migrated as they are read: each
 *   row's id moves into the column (same id) and its row metadata is deleted, in the same request.
 * - read: one `spreadsheets.getByDataFilter` per page, addressed by sheet id (grid ranges): the
 *   header row with the columns' developer metadata (which column holds the ids), a window of rows
 *   with their effective values (the id cells among them), each row's developer metadata (legacy
 *   ids, write tags), and the sheet's grid size, all in one answer. The first page of a pass also
 *   asks for formulas and number formats and infers the schema again from it. Rows with an empty id
 *   cell get a new id. A row whose id another row already carries (a person copied a row) is
 *   confirmed against one read of the id column; the first row keeps the id, the copy becomes a
 *   new record with a fresh id. New ids are never written by row number (a row moved into that
 *   place in the meantime would get it, maybe over its own id): they go through write tags like
 *   updates (see write, steps 1-4): the rows are tagged where the page read found them (value: the
 *   new id), the check reads the id column with the rows around the tags whole (the snapshot), and
 *   a tag holds only on a row with the cells the page read whose id cell is still empty (a copy:
 *   still holds the copied id, on a row that is not the first carrying it). A misplaced tag is
 *   deleted and its row looked for among the rows read whole (nearest first) and tagged again; after
 *   3 rounds a row still moving gets no id now and is not in the page (it gets one on a later read).
 *   The ids are written through the verified tags (values:batchUpdateByDataFilter, RAW, every other
 *   cell null: left as it is), then one batchUpdate deletes the tags and the write tags the page
 *   found (left by a write that never finished). A page with new rows costs 2 reads and 3 writes
 *   (the page, tag, check, write, untag; was 1 and 1); each extra tagging round 1 read and 1 write
 *   more, each further 400 new rows 1 read and 3 writes more (and a page with a copy the one read
 *   of the id column that confirms it). A page without new rows costs its one read, plus one
 *   batchUpdate when it found write tags to delete or legacy ids to move. No change feed exists,
 *   so incremental reads re-read the sheet and diff each row against the hash the cursor kept from
 *   the previous pass; rows whose id disappeared are reported deleted at the end of a pass
 *   (deleteDetection full_scan). Each window starts a few
 *   rows above the previous page's last row: finding that row somewhere else in the same answer
 *   tells that rows shifted between pages. Near the end of the data a window runs to the grid's end,
 *   so the last page also ends the pass.
 * - write: creates first look their ids up in the id column (one read): an id derived from the
 *   idempotency key that is already there is a create made before (a retry), answered with that
 *   row instead of made twice. The rest is one atomic `spreadsheets.batchUpdate`: insertDimension
 *   (new rows where values.append would write: after the table that starts at the header),
 *   updateCells with typed values and the id, and the number formats of date and currency columns.
 *   When the connector does not know where the table ends yet (a long sheet it has not read), the
 *   rows go through values.append, ids included.
 *   Updates and deletes do not trust a row number read earlier: people insert, delete, move and
 *   sort rows at any moment, and a write by number then lands on whichever row moved into place
 *   (Sheets has no conditional write). They pin their rows with row developer metadata, which moves
 *   with its row, for the duration of the write (updates then need no row number at all):
 *   1. tag: read the id column (one getByDataFilter on the column's metadata), then one batchUpdate
 *      of createDeveloperMetadata per row (key `lockstep.writing`, value the id, DOCUMENT) at the
 *      rows just read. Google answers with each tag's metadata id; tags are addressed by it from then
 *      on, never by key or value, so a tag left by a crash (same key, maybe the same id) never matches.
 *   2. verify: read the id column again with each row's metadata: every tag must sit on a row whose
 *      id cell holds the tag's id. A tag on another row (rows moved between the read and the tag) is
 *      deleted and its id tagged again where this read found it, in the next round's batchUpdate;
 *      after 3 rounds the ids still moving are a retryable error (nothing written for them).
 *   3. write: updates go through values:batchUpdateByDataFilter, each row addressed by its tag's
 *      metadata id (developerMetadataLookup): the values land on the tagged row wherever it is by
 *      then. The answer carries the row's id cell (its input is null, left as it is), checked once
 *      more; a tag that matched nothing (its row was deleted just now) is a retryable error.
 *      Deletes: a batchUpdate cannot address a row by its metadata (deleteDimension takes only a
 *      range), so the verified tags' rows are deleted by number, bottom-up, in the request right
 *      after the read that found them there. That verify read also takes a snapshot, in the same
 *      request (more data filters): the rows around each target (5 above and below, as entered:
 *      values, formulas, number formats, id cell), the rows a shift of up to 5 moves into a
 *      target's place. Afterwards one read of the id column (with its row metadata) tells what
 *      happened: a deleted row takes its tag with it, so a tag still there is a row that was not
 *      deleted (rows a person inserted, deleted or moved in the one request's time between the
 *      read and the delete shifted the numbers), reported as a retryable error. Then another row
 *      went in its place: the one of the read before that lay between the rows now around the
 *      delete's hole, is gone and was no target. It is inserted again (insertDimension and
 *      updateCells with its snapshot cells and id, all in one batchUpdate, right below the nearest
 *      row that was above it), so it is the same record to Lockstep and the next read sees no
 *      change. What remains: a row hit by a shift larger than the snapshot's margin cannot be put
 *      back; the target's error then names its id and tells the person to restore it from the
 *      version history, and the next read reports it deleted (nothing can stop that: its cells
 *      are gone). A row without an id yet (typed since the last read) is not found to put back.
 *      A person who deleted a row next to the hole in that same request's time gets it back too
 *      (a row brought back beats a row lost). The restored row's formulas are written as read: a
 *      relative reference to another row may point one row off after the shift. The restore has
 *      its own one-request window (rows moving right before it misplace the restored row, never
 *      overwrite one).
 *   4. untag: values:batchUpdateByDataFilter is a separate endpoint from batchUpdate, so the tags
 *      cannot go in the write's request: one more batchUpdate deletes them (deleted rows took
 *      theirs). A failure there is left alone; any read deletes the `lockstep.writing` tags it finds
 *      (left by a crash between tag and untag). A read racing a write of the same sheet may delete
 *      that write's tags: the write then matches nothing and reports a retryable error, never
 *      writes another row.
 *   At most 400 rows are tagged at once (~28 characters each, far under Google's 30,000 characters
 *   of metadata per sheet); larger batches are split. Requests per update batch: 2 reads and 3
 *   writes (was 1 and 1); per delete batch: 3 reads and 2 writes (was 1 and 1), plus one write
 *   when a shift made the delete hit another row (the restore). Requests stay under
 *   ~1.9 MB (Google recommends <= 2 MB).
 *   Still by number: the legacy ids moved into the id column while reading (rows tagged the old
 *   way) keep a one-request window, in which a row moved into that place gets the id meant for the
 *   row that was there.
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
/** Row developer metadata of the design before the id column (read to migrate, never written). */
export const ROW_ID_KEY = 'lockstep.rowId';
/** Column developer metadata marking the id column. */
export const ID_COLUMN_KEY = 'lockstep.idColumn';
/**
 * Row developer metadata that marks a row while Lockstep writes it (value: the row's id); it moves
 * with its row, so updates and deletes address the row through it, and it is deleted afterwards.
 */
export const WRITE_TAG_KEY = 'lockstep.writing';
/**
 * Most rows tagged at once: ~28 characters of metadata per tag keeps a batch far under Google's
 * 30,000 characters of developer metadata per sheet (with room for tags a crash left behind).
 */
export const MAX_TAGGED_ROWS = 400;
/**
 * Rows above and below each row a delete targets that are read whole before the delete: a shift of
 * up to this many rows in the one request before the delete moves one of them into the target's
 * place, and the connector can put it back.
 */
export const SNAPSHOT_MARGIN = 5;
/** Rounds of tagging rows that moved between the id-column read and the tag, before giving up. */
const TAG_ROUNDS = 3;
export const ID_HEADER = 'Lockstep ID';
export const ID_COLUMN_DESCRIPTION =
  'Lockstep keeps row ids here to sync this sheet. Editing or deleting them makes Lockstep see rows as new.';
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

type Schema = {
  sheetId: number;
  columns: SheetColumn[];
  header: string[];
  timeZone: string;
  /** The id column's index (undefined until Lockstep adds it). */
  idCol: number | undefined;
};

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
/** A cell as entered, read to put a row back as it was. */
type SnapshotCell = {
  userEnteredValue?: Record<string, unknown>;
  effectiveValue?: SampleCell['effectiveValue'];
  userEnteredFormat?: { numberFormat?: { type?: string; pattern?: string } };
};
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

  function columnsOf(header: unknown[], sample: SampleCell[][], idCol: number | undefined): SheetColumn[] {
    const seen = new Map<string, number>();
    const out: SheetColumn[] = [];
    for (const [index, h] of header.entries()) {
      if (index === idCol) continue; // Lockstep's id column is not a field
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
    /** The id column's index, from its developer metadata (undefined: the sheet has none yet). */
    idCol: number | undefined;
    /** Row index -> the row id in its id cell. */
    ids: Map<number, string>;
    /** Row index -> the id and metadata id of the row's legacy metadata (`lockstep.rowId`). */
    legacy: Map<number, { id: string; metadataId: number }>;
    /** Metadata ids of write tags (`lockstep.writing`) on the rows read. */
    writing: number[];
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
      `data(startRow,startColumn,rowData(values(${cellFields})),rowMetadata(developerMetadata(metadataId,metadataKey,metadataValue)),` +
      'columnMetadata(developerMetadata(metadataId,metadataKey))))';
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
              startColumn?: number;
              rowData?: { values?: SampleCell[] }[];
              rowMetadata?: { developerMetadata?: Omit<Metadata, 'location'>[] }[];
              columnMetadata?: { developerMetadata?: Omit<Metadata, 'location'>[] }[];
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
        const writing = new Set<number>();
        let idCol: { at: number; metadataId: number } | undefined;
        for (const data of found.data ?? []) {
          const start = data.startRow ?? 0;
          // Two id columns (two set-ups racing): the lower metadata id wins, so the choice is stable.
          for (const [k, col] of (data.columnMetadata ?? []).entries())
            for (const m of col.developerMetadata ?? [])
              if (m.metadataKey === ID_COLUMN_KEY && (!idCol || m.metadataId < idCol.metadataId))
                idCol = { at: (data.startColumn ?? 0) + k, metadataId: m.metadataId };
          for (const [k, r] of (data.rowData ?? []).entries()) rows.set(start + k, r.values ?? []);
          for (const [k, r] of (data.rowMetadata ?? []).entries()) {
            for (const m of r.developerMetadata ?? []) {
              if (m.metadataKey === WRITE_TAG_KEY) writing.add(m.metadataId);
              if (m.metadataKey !== ROW_ID_KEY || m.metadataValue === undefined) continue;
              const prev = tags.get(start + k);
              // Two ids on one row: the lower metadata id wins, so the choice is stable.
              if (!prev || m.metadataId < prev.metadataId)
                tags.set(start + k, { id: m.metadataValue, metadataId: m.metadataId });
            }
          }
        }
        const ids = new Map<number, string>();
        if (idCol)
          for (const [k, cells] of rows) {
            const id = idText(cells[idCol.at]);
            if (id) ids.set(k, id);
          }
        return {
          timeZone: res.properties?.timeZone ?? spreadsheet?.timeZone ?? 'UTC',
          sheet,
          rows,
          idCol: idCol?.at,
          ids,
          legacy: tags,
          writing: [...writing],
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
    const schema: Schema = {
      sheetId,
      header,
      columns: columnsOf(header, sample, grid.idCol),
      timeZone: grid.timeZone,
      idCol: grid.idCol,
    };
    schemas.set(sheetId, schema);
    return schema;
  }

  /**
   * Header columns wide, the id column included: cells to the right of the last named column are
   * not the table's.
   */
  const widthOf = (schema: Schema) =>
    Math.max(1, (schema.idCol ?? -1) + 1, ...schema.columns.map((c) => c.index + 1));
  const lastColumn = (schema: Schema) => columnLetter(widthOf(schema) - 1);

  /** A row's cells as UNFORMATTED_VALUE raw values, header columns wide; the id cell left out. */
  function rawRow(
    schema: Schema,
    cells: SampleCell[] | undefined,
  ): (string | number | boolean | undefined)[] {
    const width = widthOf(schema);
    const out: (string | number | boolean | undefined)[] = new Array(width);
    for (let c = 0; c < width; c++) out[c] = c === schema.idCol ? undefined : effectiveRaw(cells?.[c]);
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

  /**
   * Adds the id column to a sheet that has none: one atomic batchUpdate inserts a column after the
   * last header column, names it, marks it with column developer metadata, hides it and protects it
   * (warning only). Inserting (not writing into an empty column) never covers a person's cells.
   */
  async function ensureIdColumn(schema: Schema): Promise<Schema> {
    if (schema.idCol !== undefined) return schema;
    const sheetId = schema.sheetId;
    const at = Math.max(0, ...schema.columns.map((c) => c.index + 1));
    const taken = new Set(schema.header.map((h) => h.trim()));
    let title = ID_HEADER;
    for (let n = 2; taken.has(title); n++) title = `${ID_HEADER} ${n}`;
    const column = { sheetId, dimension: 'COLUMNS', startIndex: at, endIndex: at + 1 };
    await api('POST', ':batchUpdate', {
      body: {
        requests: [
          { insertDimension: { range: column, inheritFromBefore: false } },
          {
            updateCells: {
              start: { sheetId, rowIndex: 0, columnIndex: at },
              rows: [{ values: [{ userEnteredValue: { stringValue: title } }] }],
              fields: 'userEnteredValue',
            },
          },
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: ID_COLUMN_KEY,
                metadataValue: '1',
                visibility: 'DOCUMENT',
                location: { dimensionRange: column },
              },
            },
          },
          {
            updateDimensionProperties: {
              range: column,
              properties: { hiddenByUser: true },
              fields: 'hiddenByUser',
            },
          },
          {
            addProtectedRange: {
              protectedRange: {
                range: { sheetId, startColumnIndex: at, endColumnIndex: at + 1 },
                description: ID_COLUMN_DESCRIPTION,
                warningOnly: true,
              },
            },
          },
        ],
      },
    });
    const grid = grids.get(sheetId);
    if (grid) grid.columnCount += 1;
    const header = [...schema.header];
    header.splice(at, 0, title);
    const next: Schema = { ...schema, header, idCol: at };
    schemas.set(sheetId, next);
    return next;
  }

  type IdColumn = {
    idCol: number;
    title: string;
    /** Row index -> the id in its id cell. */
    ids: Map<number, string>;
    /** Id -> the first row carrying it. */
    at: Map<string, number>;
    /** Metadata id of each write tag (`lockstep.writing`) -> the row it sits on now. */
    tags: Map<number, number>;
    /**
     * Rows read whole with the column (deletes ask for them: see `snapshot`): row index -> its
     * cells as entered (values, formulas, number formats), header columns wide.
     */
    snapshot: Map<number, SnapshotCell[]>;
  };

  /** Rows to read whole along with the id column: [r0, r1) each, columns [0, c1). */
  type SnapshotAsk = { ranges: { r0: number; r1: number }[]; c1: number };

  /**
   * The id column of a sheet, read whole (one getByDataFilter addressed by the column's developer
   * metadata, so it is found wherever it was moved): its index, the sheet's title and each row's id;
   * with `ask`, the rows it names are read whole in the same request (the snapshot deletes take).
   */
  async function readIdColumn(sheetId: number, ask?: SnapshotAsk): Promise<IdColumn> {
    try {
      return await readIdColumnOnce(sheetId, ask);
    } catch (err) {
      // A snapshot range past the grid (rows deleted since its size was learnt) makes Google refuse
      // the request: the column alone then (the delete goes on without a snapshot).
      if (!ask?.ranges.length || !isValidation(err)) throw err;
      return readIdColumnOnce(sheetId);
    }
  }

  async function readIdColumnOnce(sheetId: number, ask?: SnapshotAsk): Promise<IdColumn> {
    const rowCount = grids.get(sheetId)?.rowCount;
    const ranges = (ask?.ranges ?? [])
      .map((r) => ({
        r0: Math.max(FIRST, r.r0),
        r1: rowCount === undefined ? r.r1 : Math.min(r.r1, rowCount),
      }))
      .filter((r) => r.r0 < r.r1);
    const cells = ranges.length
      ? 'effectiveValue,userEnteredValue,userEnteredFormat/numberFormat'
      : 'effectiveValue';
    const res = await api<{
      sheets?: {
        properties: Parameters<typeof sheetInfoOf>[0];
        data?: {
          startRow?: number;
          startColumn?: number;
          rowData?: { values?: SnapshotCell[] }[];
          rowMetadata?: { developerMetadata?: Omit<Metadata, 'location'>[] }[];
        }[];
      }[];
    }>('POST', ':getByDataFilter', {
      query: {
        fields:
          'sheets(properties(sheetId,title,gridProperties(rowCount,columnCount,frozenRowCount)),' +
          `data(startRow,startColumn,rowData(values(${cells})),` +
          'rowMetadata(developerMetadata(metadataId,metadataKey,metadataValue))))',
      },
      body: {
        dataFilters: [
          {
            developerMetadataLookup: {
              metadataKey: ID_COLUMN_KEY,
              locationType: 'COLUMN',
              metadataLocation: { sheetId },
              locationMatchingStrategy: 'INTERSECTING_LOCATION',
            },
          },
          // The snapshot rows ride on the same request.
          ...ranges.map((r) => ({
            gridRange: {
              sheetId,
              startRowIndex: r.r0,
              endRowIndex: r.r1,
              startColumnIndex: 0,
              endColumnIndex: Math.max(1, ask?.c1 ?? 1),
            },
          })),
        ],
      },
      idempotent: true,
    });
    const found = (res.sheets ?? []).find((x) => x.properties.sheetId === sheetId);
    // The column's data starts at row 0; the snapshot ranges start at FIRST or below.
    const data = found?.data?.find((d) => (d.startRow ?? 0) === 0);
    if (!found || !data) {
      // Someone deleted the id column (or the sheet): the next attempt reads the sheet again and adds
      // a new id column (a deleted sheet is reported as not found then).
      schemas.delete(sheetId);
      throw new ConnectorError(
        'transient',
        `Sheet ${sheetId} has no Lockstep id column`,
        userMessage('transient', ''),
      );
    }
    grids.set(sheetId, sheetInfoOf(found.properties));
    const ids = new Map<number, string>();
    const at = new Map<string, number>();
    const tags = new Map<number, number>();
    const start = data.startRow ?? 0;
    for (const [k, r] of (data.rowData ?? []).entries()) {
      if (start + k < FIRST) continue;
      const id = idText(r.values?.[0]);
      if (!id) continue;
      ids.set(start + k, id);
      // Two rows with one id (a copied row): the first keeps it.
      if (!at.has(id)) at.set(id, start + k);
    }
    for (const [k, r] of (data.rowMetadata ?? []).entries())
      for (const m of r.developerMetadata ?? [])
        if (m.metadataKey === WRITE_TAG_KEY) tags.set(m.metadataId, start + k);
    const snapshot = new Map<number, SnapshotCell[]>();
    for (const d of found.data ?? []) {
      if (d === data) continue;
      for (const [k, r] of (d.rowData ?? []).entries()) snapshot.set((d.startRow ?? 0) + k, r.values ?? []);
      // Rows past the last one with data come back without rowData: they are empty.
      for (let k = (d.rowData ?? []).length; k < (d.rowMetadata ?? []).length; k++)
        if (!snapshot.has((d.startRow ?? 0) + k)) snapshot.set((d.startRow ?? 0) + k, []);
    }
    return { idCol: data.startColumn ?? 0, title: found.properties.title, ids, at, tags, snapshot };
  }

  /**
   * Writes ids into id cells (runs of rows in one updateCells each) and deletes legacy row metadata,
   * in one batchUpdate per ~1.9 MB: a migrated row gets its id and loses its metadata together.
   */
  async function writeIds(
    schema: Schema,
    fills: { index: number; id: string }[],
    drops: number[],
  ): Promise<void> {
    const sheetId = schema.sheetId;
    const idCol = schema.idCol as number;
    const sorted = [...fills].sort((x, y) => x.index - y.index);
    const requests: unknown[] = [];
    for (let k = 0; k < sorted.length; ) {
      let end = k + 1;
      while (end < sorted.length && (sorted[end]?.index as number) === (sorted[end - 1]?.index as number) + 1)
        end++;
      requests.push({
        updateCells: {
          start: { sheetId, rowIndex: sorted[k]?.index, columnIndex: idCol },
          rows: sorted.slice(k, end).map((f) => ({ values: [{ userEnteredValue: { stringValue: f.id } }] })),
          fields: 'userEnteredValue',
        },
      });
      k = end;
    }
    for (const metadataId of drops)
      requests.push({ deleteDeveloperMetadata: { dataFilter: { developerMetadataLookup: { metadataId } } } });
    for (const chunk of chunksBySize(requests, maxPayload))
      await api('POST', ':batchUpdate', { body: { requests: chunk }, idempotent: true });
  }

  /** A row a page read found without an id of its own: an empty id cell, or a copy's (`replacing`). */
  type Fresh = { index: number; id: string; replacing?: string; raw: CellValue[] };

  /**
   * The row a new id is meant for. The first round tags it where the page read found it; the check
   * reads it whole (the snapshot) and accepts the tag only on a row with the cells the page read
   * (writable columns; so the record the page reports is the row that gets its id) whose id cell is still empty, or
   * for a copy still holds the copied id on a row that is not the first carrying it (the original).
   * A misplaced tag's row is then looked for among the rows read whole, nearest first.
   */
  function freshTarget(schema: Schema, f: Fresh, page: IdColumn): TagTarget {
    // The writable columns' cells: formula columns may compute another value by the next read
    // (NOW(), RAND()), and would keep the row from ever matching.
    const writable = schema.columns.filter((col) => !col.readOnly).map((col) => col.index);
    const cellsOf = (raw: CellValue[]) => JSON.stringify(writable.map((k) => raw[k] ?? null));
    const cells = cellsOf(f.raw);
    const holds = (column: IdColumn, at: number) => {
      const row = column.snapshot.get(at);
      if (!row) return false; // not read whole: nothing tells it is the row
      const id = column.ids.get(at);
      const free =
        f.replacing === undefined ? id === undefined : id === f.replacing && column.at.get(id) !== at;
      return free && cellsOf(rawRow(schema, row)) === cells;
    };
    return {
      key: f.id,
      holds,
      locate: (column, taken) => {
        if (column === page) return f.index;
        let best: number | undefined;
        for (const at of column.snapshot.keys())
          if (
            !taken.has(at) &&
            holds(column, at) &&
            (best === undefined || Math.abs(at - f.index) < Math.abs(best - f.index))
          )
            best = at;
        return best;
      },
    };
  }

  /**
   * Gives new ids to rows a page read found without one of their own, never by row number (a row
   * moved into that place would get the id, maybe over its own): tags the rows (tagRows, from where
   * the page found them), checks the tags, writes the ids through them (RAW, every other cell left
   * as it is) and untags, also deleting `stale` (write tags the page found, left by a crash).
   * Answers the ids that landed on no row (rows that kept moving, or were deleted or edited just
   * now): their rows get an id on a later read.
   */
  async function assignIds(
    schema: Schema,
    grid: Grid,
    fresh: Fresh[],
    stale: number[],
  ): Promise<Set<string>> {
    const sheetId = schema.sheetId;
    const idCol = schema.idCol as number;
    const failed = new Set<string>();
    const page: IdColumn = {
      idCol,
      title: grid.sheet.title,
      ids: grid.ids,
      at: new Map(),
      tags: new Map(),
      snapshot: new Map(),
    };
    for (let k = 0; k < fresh.length; k += MAX_TAGGED_ROWS) {
      const chunk = fresh.slice(k, k + MAX_TAGGED_ROWS);
      const { tags, missing, unsettled, drop } = await tagRows(
        sheetId,
        idCol,
        chunk.map((f) => freshTarget(schema, f, page)),
        { snapshotWidth: widthOf(schema), column: page },
      );
      for (const id of [...missing, ...unsettled]) failed.add(id);
      try {
        const targets = chunk.flatMap((f) => {
          const metadataId = tags.get(f.id);
          return metadataId === undefined ? [] : [{ f, metadataId }];
        });
        if (targets.length) {
          const answers = await writeThroughTags(
            targets.map(({ f, metadataId }) => ({
              metadataId,
              values: Array.from({ length: idCol + 1 }, (_, c) => (c === idCol ? f.id : null)),
            })),
            'RAW',
          );
          for (const { f, metadataId } of targets)
            if (String(answers.get(metadataId)?.[idCol] ?? '') !== f.id) failed.add(f.id);
        }
      } finally {
        await untag([...tags.values(), ...drop, ...(k === 0 ? stale : [])]);
      }
    }
    return failed;
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
      let grid = await fetchGrid(sheetId, asks, sampling);
      let schema: Schema;
      if (sampling) {
        schema = schemaFrom(sheetId, grid);
        sampling = false;
        if (schema.idCol === undefined) {
          // The sheet has no id column yet: add it, then read the window again (it now has the column).
          await ensureIdColumn(schema);
          grid = await fetchGrid(sheetId, asks, true);
          schema = schemaFrom(sheetId, grid);
          if (schema.idCol === undefined)
            throw new ConnectorError(
              'transient',
              `Sheet ${sheetId}: the id column was added but not found`,
              userMessage('transient', ''),
            );
        }
      } else {
        schema = current as Schema;
        schema.timeZone = grid.timeZone;
        const header = trimEnd(headerOf(grid.rows.get(0)));
        if (header.join('\u0000') !== trimEnd(schema.header).join('\u0000') || grid.idCol !== schema.idCol) {
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
      // Legacy ids moving into the id column (by number, with their metadata's delete).
      const fills: { index: number; id: string }[] = [];
      // New ids (rows typed in, copies), written through tags after the loop.
      const fresh: Fresh[] = [];
      // Write tags found by a read were left by a write that never finished (a crash): they go.
      const stale = grid.writing;
      const drops: number[] = [];
      let column: Awaited<ReturnType<typeof readIdColumn>> | undefined;
      const hadGap = gap !== null;
      // The rows this window reads, in order (where the next page finds its place again).
      const lastBefore = last;
      const seen: { id: string; at: number }[] = [];
      let i = row;
      for (; i < covered && records.length < pageSize; i++) {
        const raw = rawRow(schema, grid.rows.get(i));
        if (isBlank(raw)) {
          gap ??= i;
          continue;
        }
        let id = grid.ids.get(i);
        const legacy = grid.legacy.get(i);
        if (legacy) {
          // A row tagged the old way: its id moves into the id column (same id), its metadata goes.
          drops.push(legacy.metadataId);
          if (!id) {
            id = legacy.id;
            fills.push({ index: i, id });
          }
        }
        if (!id) {
          id = newRowId();
          fresh.push({ index: i, id, raw });
        } else if (c.acc[id] !== undefined || fills.some((f) => f.id === id && f.index !== i)) {
          // Read before in this pass: the same row again (the window overlaps, or the pass started
          // over), or a copy of that row. One read of the id column tells: a copy is a later row
          // carrying the same id; it becomes a new record with a fresh id.
          column ??= await readIdColumn(sheetId);
          const first = column.at.get(id);
          if (first !== undefined && first !== i && column.ids.get(i) === id) {
            const copied = id;
            id = newRowId();
            fresh.push({ index: i, id, replacing: copied, raw });
          } else {
            last = { id, at: i };
            seen.push(last);
            continue;
          }
        }
        last = { id, at: i };
        seen.push(last);
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
      // The write tags the page found go with the new ids' untag when there are new ids.
      if (fills.length > 0 || drops.length > 0 || (stale.length > 0 && fresh.length === 0))
        await writeIds(schema, fills, fresh.length > 0 ? drops : [...drops, ...stale]);
      if (fresh.length) {
        const failed = await assignIds(schema, grid, fresh, stale);
        if (failed.size) {
          // Rows whose id did not land are not reported: they get an id, and are read, next time.
          for (const id of failed) delete c.acc[id];
          for (let k = records.length - 1; k >= 0; k--)
            if (failed.has((records[k] as RecordData).id)) records.splice(k, 1);
          const kept = seen.filter((s) => !failed.has(s.id));
          last = kept[kept.length - 1] ?? lastBefore;
        }
      }
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

  /** A created row's id, derived from the idempotency key: a retried create finds its row by it. */
  const idFor = (sheetId: number, key: string) =>
    createHash('sha256').update(`${spreadsheetId}:${sheetId}:${key}`).digest('base64url').slice(0, 12);

  /** The schema for writing, with its id column (added when the sheet has none). */
  async function writeSchema(sheetId: number, refresh = false): Promise<Schema> {
    return ensureIdColumn(await schemaFor(sheetId, refresh));
  }

  /** The rows at these indexes with their values (a retried create's post-image). */
  async function rowsAt(schema: Schema, at: Map<string, number>): Promise<Map<string, RecordData>> {
    const out = new Map<string, RecordData>();
    const wanted = [...at];
    for (let k = 0; k < wanted.length; k += 200) {
      const chunk = wanted.slice(k, k + 200);
      const grid = await fetchGrid(
        schema.sheetId,
        chunk.map(([, index]) => ({ r0: index, r1: index + 1, c1: widthOf(schema) })),
        false,
      );
      for (const [id, index] of chunk)
        if (grid.ids.get(index) === id)
          out.set(id, { id, fields: toFields(schema, rawRow(schema, grid.rows.get(index))) });
    }
    return out;
  }

  /** Runs a chunk; if Google refuses it as a whole (400), runs its items one by one. */
  async function chunked<T>(
    items: T[],
    size: (t: T) => number,
    run: (chunk: T[]) => Promise<WriteResult[]>,
    maxItems?: number,
  ): Promise<WriteResult[]> {
    const out: WriteResult[] = [];
    for (const chunk of chunksBySize(items, maxPayload, size, maxItems)) {
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
    fields: Record<string, CanonicalValue>;
    /** The row's typed cells, the id cell included. */
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
   * One atomic batchUpdate: new rows inserted at the table's end, their typed values, ids and
   * formats. Nothing is applied when Google refuses any part of it. Not retried by the HTTP client
   * (a second send would insert the rows twice): a failure reaches the runtime, whose retry finds
   * the rows by their ids.
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
    ];
    await api('POST', ':batchUpdate', { body: { requests }, idempotent: false });
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
   * detection) and writes the rows with their ids in one request; their number formats follow in a
   * second (cosmetic: a failure there leaves the rows, with their ids, in place).
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
        idempotent: false,
      },
    );
    const at = firstRowOf(res.updates.updatedRange);
    const grid = grids.get(sheetId);
    if (grid) grid.rowCount += items.length;
    insertAt.set(sheetId, at + items.length);
    const formats = formatRequests(schema, at, items.length);
    if (formats.length)
      await api('POST', ':batchUpdate', { body: { requests: formats }, idempotent: true }).catch(() => {});
  }

  /** One request (two when the table's end is unknown) for a chunk of new rows. */
  async function createOnce(schema: Schema, items: Create[]): Promise<void> {
    const at = insertAt.get(schema.sheetId);
    if (at === undefined) await appendRows(schema, items);
    else await insertRows(schema, items, Math.min(at, grids.get(schema.sheetId)?.rowCount ?? at));
  }

  /**
   * Creates a chunk of rows. Google refuses a batch as a whole (nothing applied) when the insertion
   * row is past the grid (rows deleted since) or one item is invalid. Then the schema and the
   * table's end are read again and the rest is tried again, then item by item.
   */
  async function createChunk(sheetId: number, chunk: Create[], out: Map<string, WriteResult>): Promise<void> {
    let schema = await writeSchema(sheetId);
    try {
      await createOnce(schema, chunk);
      for (const p of chunk) out.set(p.id, created(schema, p));
      return;
    } catch (err) {
      if (!isValidation(err)) throw err;
    }
    schema = await writeSchema(sheetId, true);
    const pending = prepareCreates(schema, chunk, out);
    if (!pending.length) return;
    try {
      await createOnce(schema, pending);
      for (const p of pending) out.set(p.id, created(schema, p));
      return;
    } catch (err) {
      if (!isValidation(err)) throw err;
      if (pending.length === 1) {
        out.set((pending[0] as Create).id, failure(err));
        return;
      }
    }
    for (const p of pending) {
      try {
        await createOnce(schema, [p]);
        out.set(p.id, created(schema, p));
      } catch (err) {
        if (!isValidation(err)) throw err;
        out.set(p.id, failure(err));
      }
    }
  }

  /** Typed values (and the id cell) for each create under this schema; an item that does not fit fails alone. */
  function prepareCreates(
    schema: Schema,
    items: Omit<Create, 'values'>[],
    out: Map<string, WriteResult>,
  ): Create[] {
    const ok: Create[] = [];
    for (const p of items) {
      try {
        const values = rowValues(schema, p.fields);
        values[schema.idCol as number] = p.id;
        ok.push({ id: p.id, fields: p.fields, values });
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
      if (!unique.has(id)) unique.set(id, { id, fields: r.fields });
    }
    const out = new Map<string, WriteResult>();
    // A create made before (a retry after an answer that never came) left its id in the id column:
    // answer with that row instead of making it twice.
    const column = await readIdColumn(sheetId);
    const existing = new Map(
      [...unique.keys()].flatMap((id) => {
        const at = column.at.get(id);
        return at === undefined ? [] : [[id, at] as const];
      }),
    );
    if (existing.size) {
      const images = await rowsAt(schema, existing);
      for (const [id, image] of images) out.set(id, { ok: true, remoteId: id, postImage: image });
    }
    const prepared = prepareCreates(
      schema,
      [...unique.values()].filter((p) => !out.has(p.id)),
      out,
    );
    // A row's cells as updateCells values and the formats: the JSON of its values plus a margin.
    const size = (p: Create) => JSON.stringify(p.values).length + 40 * p.values.length + 400;
    for (const chunk of chunksBySize(prepared, maxPayload, size)) await createChunk(sheetId, chunk, out);
    for (const [k, { index }] of items.entries())
      results[index] = out.get(ids[k] as string) ?? failure(new Error('no result for the create'));
  }

  const dropTag = (metadataId: number) => ({
    deleteDeveloperMetadata: { dataFilter: { developerMetadataLookup: { metadataId } } },
  });

  /** A transient error for a row that could not be pinned down (rows kept moving under it). */
  const moving = (id: string) =>
    failure(
      new ConnectorError(
        'transient',
        `Row ${id} moved while Lockstep wrote it (rows were inserted, deleted or moved); it will be retried`,
        userMessage('transient', ''),
      ),
    );

  /**
   * A row to pin down with a tag (value `key`): `locate` finds it in a read of the id column (not
   * among `taken`, rows other tags of the batch hold), `holds` tells whether the row a tag sits on
   * in a later read is the one meant.
   */
  type TagTarget = {
    key: string;
    locate: (column: IdColumn, taken: Set<number>) => number | undefined;
    holds: (column: IdColumn, at: number) => boolean;
  };

  /** The row carrying this id (updates and deletes): found and checked by its id cell. */
  const byId = (id: string): TagTarget => ({
    key: id,
    locate: (column) => column.at.get(id),
    holds: (column, at) => column.ids.get(at) === id,
  });

  /**
   * Pins rows down before writing them: finds each target's row (for ids: in the id column), tags
   * that row with row developer metadata (`lockstep.writing`, value the key; one batchUpdate), and
   * reads the id column again with each row's metadata to check that every tag sits on the row it
   * meant (for ids: a row whose id cell holds the tag's id), one tag per row. A tag on another row
   * (rows were inserted, deleted or moved between the read and the tag) is deleted and its row
   * tagged again where the second read found it, in the next round's batchUpdate. A tag moves with
   * its row from then on, so writes addressed by it land on that row whatever people do to the
   * sheet meanwhile. Tags are addressed by the metadata id Google gave them, never by key or value:
   * a tag a crash left behind (same key, maybe the same id) never matches. The caller deletes `tags` and `drop` when done (see untag).
   */
  async function tagRows(
    sheetId: number,
    idCol: number,
    targets: TagTarget[],
    opts: {
      /** The verify reads also read the tagged rows whole, with a margin (header columns wide). */
      snapshotWidth?: number | undefined;
      /** Where the first round finds the rows (default: a read of the id column now). */
      column?: IdColumn | undefined;
    } = {},
  ): Promise<{
    /** Key -> its verified tag's metadata id. */
    tags: Map<string, number>;
    /** The last read of the id column (the verified tags' rows are in `column.tags`). */
    column: IdColumn;
    /** Keys no row matches. */
    missing: string[];
    /** Keys whose row kept moving under the tag. */
    unsettled: string[];
    /** Tags left on other rows, to delete. */
    drop: number[];
  }> {
    const snapshotWidth = opts.snapshotWidth;
    let column = opts.column ?? (await readIdColumn(sheetId));
    const tags = new Map<string, number>();
    const missing: string[] = [];
    const byKey = new Map(targets.map((t) => [t.key, t]));
    let pending = [...byKey.values()];
    let drop: number[] = [];
    for (let round = 0; round < TAG_ROUNDS && pending.length; round++) {
      if (column.idCol !== idCol) {
        // The id column moved since the schema was read: the field columns may have moved too.
        schemas.delete(sheetId);
        if (tags.size || drop.length) await untag([...tags.values(), ...drop]);
        throw new ConnectorError(
          'transient',
          `The id column of sheet ${sheetId} moved from ${idCol} to ${column.idCol}`,
          userMessage('transient', ''),
        );
      }
      const located: { id: string; at: number }[] = [];
      // A row carries one tag of the batch: rows whose tags held, and rows tagged this round.
      const taken = new Set(tagRowsOf(column, tags));
      for (const target of pending) {
        const at = target.locate(column, taken);
        if (at === undefined) missing.push(target.key);
        else {
          taken.add(at);
          located.push({ id: target.key, at });
        }
      }
      pending = [];
      if (!located.length) break;
      const requests = [
        ...drop.map(dropTag),
        ...located.map(({ id, at }) => ({
          createDeveloperMetadata: {
            developerMetadata: {
              metadataKey: WRITE_TAG_KEY,
              metadataValue: id,
              visibility: 'DOCUMENT',
              location: { dimensionRange: { sheetId, dimension: 'ROWS', startIndex: at, endIndex: at + 1 } },
            },
          },
        })),
      ];
      const res = await api<{
        replies?: { createDeveloperMetadata?: { developerMetadata?: { metadataId?: number } } }[];
      }>('POST', ':batchUpdate', { body: { requests }, idempotent: false });
      const made: { id: string; metadataId: number }[] = [];
      for (const [k, { id }] of located.entries()) {
        const metadataId =
          res.replies?.[drop.length + k]?.createDeveloperMetadata?.developerMetadata?.metadataId;
        if (metadataId === undefined)
          throw new ConnectorError(
            'transient',
            'Google did not answer with the tag it created',
            userMessage('transient', ''),
          );
        made.push({ id, metadataId });
      }
      drop = [];
      // Where the tags are now, and what the id cells of those rows hold (for deletes, with the
      // rows around the tagged ones: the rows found there before the tags, give or take a shift).
      const around = [...located.map(({ at }) => at), ...tagRowsOf(column, tags)];
      column = await readIdColumn(
        sheetId,
        snapshotWidth === undefined ? undefined : { ranges: snapshotRanges(around), c1: snapshotWidth },
      );
      const held = new Set(tagRowsOf(column, tags));
      for (const { id, metadataId } of made) {
        const row = column.tags.get(metadataId);
        const target = byKey.get(id) as TagTarget;
        if (row !== undefined && !held.has(row) && target.holds(column, row)) {
          tags.set(id, metadataId);
          held.add(row);
        } else {
          // The tag landed on another row (or that row is gone with its tag): tag the id's row again.
          if (row !== undefined) drop.push(metadataId);
          pending.push(target);
        }
      }
    }
    return { tags, column, missing, unsettled: pending.map((t) => t.key), drop };
  }

  /** The rows the tags sit on in this read. */
  const tagRowsOf = (column: IdColumn, tags: Map<string, number>) =>
    [...tags.values()].flatMap((metadataId) => {
      const at = column.tags.get(metadataId);
      return at === undefined ? [] : [at];
    });

  /** Rows [at - margin, at + margin] around each row, merged where they touch. */
  function snapshotRanges(rows: number[]): { r0: number; r1: number }[] {
    const out: { r0: number; r1: number }[] = [];
    for (const at of [...rows].sort((a, b) => a - b)) {
      const r0 = Math.max(FIRST, at - SNAPSHOT_MARGIN);
      const r1 = at + SNAPSHOT_MARGIN + 1;
      const last = out[out.length - 1];
      if (last && r0 <= last.r1) last.r1 = Math.max(last.r1, r1);
      else out.push({ r0, r1 });
    }
    return out;
  }

  /**
   * Deletes write tags (one batchUpdate). A failure here is left alone: the write it followed is
   * done, and the next read deletes tags left behind.
   */
  async function untag(metadataIds: number[]): Promise<void> {
    for (let k = 0; k < metadataIds.length; k += MAX_TAGGED_ROWS)
      await api('POST', ':batchUpdate', {
        body: { requests: metadataIds.slice(k, k + MAX_TAGGED_ROWS).map(dropTag) },
        idempotent: true,
      }).catch(() => {});
  }

  /**
   * Writes rows through their tags: one values:batchUpdateByDataFilter, each row addressed by its
   * tag's metadata id (the tag selects its whole row; the values start at column A, a null input
   * leaves its cell as it is), so the values land on the tagged row wherever it is by then. Answers
   * each tag's row as written (UNFORMATTED_VALUE, serial dates); a tag that matched nothing (its row
   * was deleted, with the tag, just now) has no answer.
   */
  async function writeThroughTags(
    rows: { metadataId: number; values: (string | number | boolean | null)[] }[],
    valueInputOption: 'RAW' | 'USER_ENTERED',
  ): Promise<Map<number, unknown[]>> {
    const res = await api<{
      responses?: {
        dataFilter?: { developerMetadataLookup?: { metadataId?: number } };
        updatedData?: ValueRange;
      }[];
    }>('POST', '/values:batchUpdateByDataFilter', {
      body: {
        valueInputOption,
        includeValuesInResponse: true,
        responseValueRenderOption: 'UNFORMATTED_VALUE',
        responseDateTimeRenderOption: 'SERIAL_NUMBER',
        data: rows.map(({ metadataId, values }) => ({
          dataFilter: { developerMetadataLookup: { metadataId } },
          majorDimension: 'ROWS',
          values: [values],
        })),
      },
      // Writing the same values through the same tags twice is harmless.
      idempotent: true,
    });
    // Each answer names the data filter that selected its range (a filter matching nothing has
    // none). Without the echo, answers follow the filters when every one matched.
    const answers = new Map<number, unknown[]>();
    const responses = res.responses ?? [];
    for (const [k, r] of responses.entries()) {
      const echoed = r.dataFilter?.developerMetadataLookup?.metadataId;
      const metadataId = echoed ?? (responses.length === rows.length ? rows[k]?.metadataId : undefined);
      if (metadataId !== undefined) answers.set(Number(metadataId), r.updatedData?.values?.[0] ?? []);
    }
    return answers;
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
    const idCol = schema.idCol as number;
    const notFound = (id: string) =>
      failure(
        new ConnectorError(
          'not_found',
          `No row with id ${id} in sheet ${sheetId}`,
          userMessage('not_found', ''),
        ),
      );
    const done = await chunked(
      prepared,
      (p) => JSON.stringify(p.values).length + 400,
      async (chunk) => {
        const out = new Map<string, WriteResult>();
        // Tag each row, then write through its tag: the write lands on the tagged row wherever
        // people moved it, never on a row that moved into its place.
        const { tags, missing, unsettled, drop } = await tagRows(
          sheetId,
          idCol,
          chunk.map((p) => byId(p.id)),
        );
        for (const id of missing) out.set(id, notFound(id));
        for (const id of unsettled) out.set(id, moving(id));
        try {
          const targets = chunk.flatMap((p) => {
            const metadataId = tags.get(p.id);
            return metadataId === undefined || out.has(p.id) ? [] : [{ p, metadataId }];
          });
          if (targets.length) {
            // The id cell's input is null (left as it is), so the answer carries the id the
            // written row holds.
            const answers = await writeThroughTags(
              targets.map(({ p, metadataId }) => ({
                metadataId,
                values: p.values.map((v, c) => (c === idCol ? null : v)),
              })),
              'USER_ENTERED',
            );
            for (const { p, metadataId } of targets) {
              const row = answers.get(metadataId);
              // No answer: the tag matched nothing (the row was deleted, with its tag, just now).
              if (!row) {
                out.set(p.id, moving(p.id));
                continue;
              }
              if (idText({ effectiveValue: { stringValue: String(row[idCol] ?? '') } }) !== p.id) {
                // Only a person editing the id cell in between gets here.
                out.set(p.id, moving(p.id));
                continue;
              }
              out.set(p.id, {
                ok: true,
                remoteId: p.id,
                postImage: {
                  id: p.id,
                  fields: toFields(
                    schema,
                    row.map((v, c) => (c === idCol ? undefined : v)),
                  ),
                },
              });
            }
          }
        } finally {
          await untag([...tags.values(), ...drop]);
        }
        return chunk.map((p) => out.get(p.id) ?? failure(new Error('no result for the update')));
      },
      MAX_TAGGED_ROWS,
    );
    for (const [k, p] of prepared.entries()) results[p.index] = done[k] as WriteResult;
  }

  async function deletes(
    schema: Schema,
    items: { index: number; r: Extract<WriteRequest, { kind: 'delete' }> }[],
    results: WriteResult[],
  ) {
    const sheetId = schema.sheetId;
    const idCol = schema.idCol as number;
    const out = new Map<string, WriteResult>();
    const unique = [...new Set(items.map(({ r }) => r.remoteId))];
    for (let k = 0; k < unique.length; k += MAX_TAGGED_ROWS) {
      const { tags, column, missing, unsettled, drop } = await tagRows(
        sheetId,
        idCol,
        unique.slice(k, k + MAX_TAGGED_ROWS).map(byId),
        { snapshotWidth: widthOf(schema) },
      );
      // A row already gone is a success: replaying a delete changes nothing.
      for (const id of missing) out.set(id, gone(id));
      for (const id of unsettled) out.set(id, moving(id));
      // Where the verified tags are, bottom-up: deleting a lower row first leaves the indexes of the
      // rows above it unchanged. A batchUpdate cannot address a row by its metadata, so the rows are
      // deleted by number, in the request right after the read that found the tags there.
      const rows = [...tags]
        .flatMap(([id, metadataId]) => {
          const at = column.tags.get(metadataId);
          return at === undefined ? [] : [{ id, at }];
        })
        .sort((a, b) => b.at - a.at);
      try {
        if (rows.length) {
          await api('POST', ':batchUpdate', {
            body: {
              requests: rows.map(({ at }) => ({
                deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: at, endIndex: at + 1 } },
              })),
            },
          });
          for (const { at } of rows) moved(sheetId, at, -1);
          // A deleted row takes its tag with it: a tag still there is a row that moved in that one
          // request's time, so another row went in its place. The id column read now tells which
          // (an id of the read before that is gone and was no target) and the snapshot puts it back.
          const after = await readIdColumn(sheetId);
          const kept = rows.filter(({ id }) => after.tags.has(tags.get(id) as number));
          for (const { id } of rows) out.set(id, gone(id));
          for (const { id } of kept) out.set(id, moving(id));
          if (kept.length) {
            const lost = await restoreRows(schema, column, after, rows, kept);
            for (const [target, ids] of lost) if (ids.length) out.set(target, lostRows(target, ids));
          }
        }
      } finally {
        const alive = rows
          .filter(({ id }) => out.get(id)?.ok !== true)
          .map(({ id }) => tags.get(id) as number);
        if (alive.length || drop.length) await untag([...alive, ...drop]);
      }
    }
    for (const { index, r } of items)
      results[index] = out.get(r.remoteId) ?? failure(new Error('no result for the delete'));
  }

  /**
   * After a delete by number hit other rows than the targets `kept` (rows shifted in the one request
   * between the read `before` and the delete): finds the rows deleted in their place and inserts
   * them again, with their cells and ids, from the snapshot `before` carries (one batchUpdate).
   * The delete of target t at row p left a hole between two rows of `after`; a row of `before`
   * that lay between those two rows, is gone and is no target is the one deleted instead (when a
   * person also deleted rows there, each of them is put back too: a row brought back is better than
   * a row lost). Answers, per target, the ids it cost that could not be put back (not in the
   * snapshot: the shift was larger than the margin, or the restore failed).
   */
  async function restoreRows(
    schema: Schema,
    before: IdColumn,
    after: IdColumn,
    rows: { id: string; at: number }[],
    kept: { id: string; at: number }[],
  ): Promise<Map<string, string[]>> {
    const sheetId = schema.sheetId;
    const idCol = schema.idCol as number;
    const targets = new Set(rows.map(({ id }) => id));
    const beforeRows = [...before.ids].sort((a, b) => a[0] - b[0]);
    const vanished = beforeRows.filter(([, id]) => !after.at.has(id) && !targets.has(id));
    const afterRows = [...after.ids].sort((a, b) => a[0] - b[0]);
    const positions = rows.map(({ at }) => at);
    /** Where an id of `after` was in `before` (undefined: a row inserted since, or no id). */
    const was = (entry: [number, string] | undefined) =>
      entry === undefined ? undefined : before.at.get(entry[1]);
    const blame = new Map<string, string[]>();
    const restore = new Map<string, number>();
    for (const { id, at } of kept) {
      // The hole the delete at `at` left in `after`: between rows hole - 1 and hole.
      const hole = at - positions.filter((p) => p < at).length;
      let lo = Number.NEGATIVE_INFINITY;
      for (let i = afterRows.length - 1; i >= 0; i--) {
        const entry = afterRows[i] as [number, string];
        const w = entry[0] < hole ? was(entry) : undefined;
        if (w !== undefined) {
          lo = w;
          break;
        }
      }
      let hi = Number.POSITIVE_INFINITY;
      for (const entry of afterRows) {
        const w = entry[0] >= hole ? was(entry) : undefined;
        if (w !== undefined) {
          hi = w;
          break;
        }
      }
      const instead = vanished.filter(([i]) => i > lo && i < hi);
      blame.set(
        id,
        instead.map(([, x]) => x),
      );
      for (const [i, x] of instead) restore.set(x, i);
    }
    const lost = new Set<string>();
    const now: (string | undefined)[] = [];
    for (const [i, x] of afterRows) now[i] = x;
    const requests: unknown[] = [];
    const inserted: number[] = [];
    for (const [x, i] of [...restore].sort((a, b) => a[1] - b[1])) {
      const cells = before.snapshot.get(i);
      if (!cells) {
        lost.add(x);
        continue;
      }
      // Right below the nearest row above it that is still there (or above the nearest below).
      let pos: number | undefined;
      for (let k = beforeRows.findIndex(([r]) => r === i) - 1; k >= 0 && pos === undefined; k--) {
        const found = now.indexOf((beforeRows[k] as [number, string])[1]);
        if (found >= 0) pos = found + 1;
      }
      for (
        let k = beforeRows.findIndex(([r]) => r === i) + 1;
        k < beforeRows.length && pos === undefined;
        k++
      ) {
        const found = now.indexOf((beforeRows[k] as [number, string])[1]);
        if (found >= 0) pos = found;
      }
      const at = Math.max(FIRST, Math.min(pos ?? i, now.length));
      now.splice(at, 0, x);
      inserted.push(at);
      const values = Array.from({ length: Math.max(cells.length, idCol + 1) }, (_, c) => {
        const cell = cells[c];
        if (c === idCol) return { userEnteredValue: { stringValue: x } };
        const format = cell?.userEnteredFormat?.numberFormat;
        return {
          ...(cell?.userEnteredValue ? { userEnteredValue: cell.userEnteredValue } : {}),
          ...(format ? { userEnteredFormat: { numberFormat: format } } : {}),
        };
      });
      requests.push(
        {
          insertDimension: {
            range: { sheetId, dimension: 'ROWS', startIndex: at, endIndex: at + 1 },
            inheritFromBefore: at > FIRST,
          },
        },
        {
          updateCells: {
            start: { sheetId, rowIndex: at, columnIndex: 0 },
            rows: [{ values }],
            fields: 'userEnteredValue,userEnteredFormat.numberFormat',
          },
        },
      );
    }
    if (requests.length) {
      try {
        await api('POST', ':batchUpdate', { body: { requests }, idempotent: false });
        for (const at of inserted) moved(sheetId, at, 1);
      } catch {
        for (const x of restore.keys()) lost.add(x);
      }
    }
    return new Map([...blame].map(([target, ids]) => [target, ids.filter((x) => lost.has(x))]));
  }

  /** A delete that hit rows it could not put back: says which, and where to get them back. */
  const lostRows = (target: string, ids: string[]): WriteResult => {
    const which =
      ids.length === 1
        ? `The row with Lockstep ID ${ids[0]} was`
        : `The rows with Lockstep IDs ${ids.join(', ')} were`;
    return failure(
      new ConnectorError(
        'transient',
        `Deleting row ${target} deleted ${ids.join(', ')} instead (rows moved during the delete); not restorable from the snapshot`,
        `${which} deleted in place of another row: rows were inserted, deleted or moved in the sheet at the moment Lockstep deleted a row (a concurrent edit), and Lockstep could not put ${ids.length === 1 ? 'it' : 'them'} back. Restore ${ids.length === 1 ? 'it' : 'them'} from the spreadsheet's version history (File > Version history); until then the next sync may carry the deletion to the other app. Lockstep will retry the intended delete.`,
      ),
    );
  };

  const gone = (id: string): WriteResult => ({ ok: true, remoteId: id, postImage: null });

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const schema = await writeSchema(await sheetIdOf(tableId));
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

/** A new row id: 12 random base64url characters (72 bits). */
function newRowId(): string {
  return randomBytes(9).toString('base64url');
}

/** The id an id cell holds (text as typed; a number a person typed in reads as its digits). */
function idText(cell: SampleCell | undefined): string | undefined {
  const ev = cell?.effectiveValue;
  const v = ev?.stringValue ?? (ev?.numberValue !== undefined ? String(ev.numberValue) : undefined);
  const id = v?.trim();
  return id ? id : undefined;
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
  maxItems = 1000,
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const s = size(item);
    if (current.length && (bytes + s > limit || current.length >= maxItems)) {
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
