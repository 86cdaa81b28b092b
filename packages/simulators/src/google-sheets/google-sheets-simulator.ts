/**
 * An in-memory simulator of the Google Sheets API v4 (with the Drive v3 files.list and Google's
 * OAuth token endpoint), built from Google's public reference. See README.md beside this file.
 */
import { createHash } from 'node:crypto';
import {
  bearerToken,
  type Clock,
  FaultInjector,
  json,
  RequestLog,
  type RunningServer,
  randomAlphanumeric,
  type SimRequest,
  type SimResponse,
  seededRandom,
  startHttpServer,
  systemClock,
  type TokenInfo,
  TokenRegistry,
} from '../http.ts';
import { type A1, columnLetter, formatRange, type GridRange, parseA1 } from './a1.ts';
import {
  type Cell,
  cellFromExtended,
  type DateTimeRenderOption,
  extendedValue,
  formattedValue,
  inputCell,
  NUMBER_FORMAT_TYPES,
  type NumberFormatType,
  renderCell,
  type ValueRenderOption,
} from './cells.ts';
import { googleUserinfo, USERINFO_PATH } from './google-oauth.ts';
import {
  type Col,
  cellAt,
  dataExtent,
  deleteCols,
  deleteRows,
  gridRegion,
  insertCols,
  insertRows,
  intersects,
  type MetadataLocation,
  type MetadataState,
  ModelError,
  maxOf,
  metadataJson,
  moveCols,
  moveItems,
  newCol,
  newRow,
  protectedRangeJson,
  type Region,
  type Row,
  recalc,
  regionOf,
  type SheetState,
  type SpreadsheetState,
  setCell,
  spliceItems,
} from './model.ts';

// ---------------------------------------------------------------------------------------------
// Constants (from Google's docs)

export const SCOPES = {
  drive: 'https://www.googleapis.com/auth/drive',
  driveFile: 'https://www.googleapis.com/auth/drive.file',
  driveReadonly: 'https://www.googleapis.com/auth/drive.readonly',
  spreadsheets: 'https://www.googleapis.com/auth/spreadsheets',
  spreadsheetsReadonly: 'https://www.googleapis.com/auth/spreadsheets.readonly',
} as const;

export const SPREADSHEET_MIME = 'application/vnd.google-apps.spreadsheet';
export const DEFAULT_TOKEN = 'ya29.simulator-default-access-token';
export const DEFAULT_PROJECT = 'projects/100000000001';
export const DEFAULT_USER = 'user-simulator@example.com';
/** Per minute: 300 reads and 300 writes per project, 60 of each per user per project. */
export const DEFAULT_QUOTA = {
  readsPerMinutePerUser: 60,
  writesPerMinutePerUser: 60,
  readsPerMinutePerProject: 300,
  writesPerMinutePerProject: 300,
};
/** The front end refuses bodies over 10 MB; Google recommends keeping requests under 2 MB. */
export const DEFAULT_PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
export const ACCESS_TOKEN_TTL_S = 3599;
export const DEFAULT_ROW_COUNT = 1000;
/**
 * Developer metadata storage (Google's "Read & write developer metadata" guide, "Metadata storage
 * limits"): 30,000 characters for the spreadsheet and 30,000 for each sheet; every character of
 * metadataKey and metadataValue counts.
 */
export const DEVELOPER_METADATA_CHAR_LIMIT = 30_000;
export const DEFAULT_COLUMN_COUNT = 26;

const READ_SCOPES: string[] = Object.values(SCOPES);
const WRITE_SCOPES: string[] = [SCOPES.drive, SCOPES.driveFile, SCOPES.spreadsheets];

// ---------------------------------------------------------------------------------------------
// Errors: {"error":{"code":400,"message":"...","status":"INVALID_ARGUMENT"}}

export class GoogleApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
  body() {
    return { error: { code: this.code, message: this.message, ...this.extra, status: this.status } };
  }
}

const invalid = (message: string) => new GoogleApiError(400, 'INVALID_ARGUMENT', message);
const notFound = () => new GoogleApiError(404, 'NOT_FOUND', 'Requested entity was not found.');
const denied = () => new GoogleApiError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
const unauthenticated = () =>
  new GoogleApiError(
    401,
    'UNAUTHENTICATED',
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
  );
const insufficientScopes = () =>
  new GoogleApiError(403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', {
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
        domain: 'googleapis.com',
        metadata: { service: 'sheets.googleapis.com' },
      },
    ],
  });

function quotaExceeded(kind: 'read' | 'write', scope: 'user' | 'project', limit: number): GoogleApiError {
  const metric = kind === 'read' ? 'Read requests' : 'Write requests';
  const limitName = `${metric} per minute${scope === 'user' ? ' per user' : ''}`;
  const limitId = `${kind === 'read' ? 'Read' : 'Write'}RequestsPerMinutePer${scope === 'user' ? 'User' : 'Project'}`;
  return new GoogleApiError(
    429,
    'RESOURCE_EXHAUSTED',
    `Quota exceeded for quota metric '${metric}' and limit '${limitName}' of service 'sheets.googleapis.com' for consumer '${DEFAULT_PROJECT.replace('projects/', 'project_number:')}'.`,
    {
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'RATE_LIMIT_EXCEEDED',
          domain: 'googleapis.com',
          metadata: {
            service: 'sheets.googleapis.com',
            consumer: DEFAULT_PROJECT,
            quota_metric: `sheets.googleapis.com/${kind}_requests`,
            quota_limit: limitId,
            quota_limit_value: String(limit),
          },
        },
      ],
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Options and state

export type QuotaOptions = typeof DEFAULT_QUOTA;

export type OAuthClient = { clientId: string; clientSecret: string; redirectUris: string[] };

export type GoogleSheetsSimulatorOptions = {
  clock?: Clock;
  /** Seed for spreadsheet, sheet and metadata ids. */
  idSeed?: number;
  /** Per-minute quotas; false turns them off. */
  quota?: false | Partial<QuotaOptions>;
  payloadLimitBytes?: number;
  /**
   * Characters of developer metadata (keys and values) allowed on the spreadsheet and on each sheet
   * (its sheet, row and column metadata); default 30,000 as Google documents; false turns it off.
   */
  developerMetadataLimit?: number | false;
  /** Extra access tokens. */
  tokens?: { token: string; scopes: string[]; userId?: string; project?: string; expiresAt?: number }[];
  oauthClients?: OAuthClient[];
};

type AuthCode = {
  clientId: string;
  redirectUri: string;
  scope: string;
  offline: boolean;
  challenge?: { value: string; method: string };
  expiresAt: number;
  used: boolean;
};

type Ctx = { token: TokenInfo; project: string };
/** A bounded rectangle of a sheet, half open. */
type Rect = { startRow: number; endRow: number; startCol: number; endCol: number };

export type SheetSeed = {
  title: string;
  sheetId?: number;
  /** Rows of user input (USER_ENTERED: dates, TRUE/FALSE, formulas). */
  rows: unknown[][];
  rowCount?: number;
  columnCount?: number;
  frozenRowCount?: number;
  /** Number formats per column index, applied to every data row (below the frozen rows). */
  columnFormats?: Record<number, Cell['fmt']>;
};

export type SpreadsheetSeed = {
  spreadsheetId?: string;
  title: string;
  timeZone?: string;
  locale?: string;
  openedByApp?: boolean;
  sheets: SheetSeed[];
};

export class GoogleSheetsState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly spreadsheets = new Map<string, SpreadsheetState>();
  readonly quota: QuotaOptions | false;
  readonly payloadLimitBytes: number;
  readonly developerMetadataLimit: number | false;
  /** Size of every request body seen, for payload assertions. */
  readonly payloads: { method: string; path: string; bytes: number }[] = [];
  private readonly random: () => number;
  private readonly tokenProjects = new Map<string, string>();
  private readonly hits = new Map<string, number[]>();
  private readonly oauthClients = new Map<string, OAuthClient>();
  private readonly authCodes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<
    string,
    { clientId: string; scope: string; access: Set<string> }
  >();

  constructor(options: GoogleSheetsSimulatorOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.idSeed !== undefined ? seededRandom(options.idSeed) : Math.random;
    this.tokens = new TokenRegistry(this.clock);
    this.quota = options.quota === false ? false : { ...DEFAULT_QUOTA, ...(options.quota ?? {}) };
    this.payloadLimitBytes = options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT_BYTES;
    this.developerMetadataLimit = options.developerMetadataLimit ?? DEVELOPER_METADATA_CHAR_LIMIT;
    this.tokens.add({
      token: DEFAULT_TOKEN,
      scopes: [SCOPES.driveFile],
      kind: 'oauth',
      userId: DEFAULT_USER,
    });
    for (const t of options.tokens ?? []) {
      this.tokens.add({
        token: t.token,
        scopes: t.scopes,
        kind: 'oauth',
        userId: t.userId ?? DEFAULT_USER,
        ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}),
      });
      if (t.project) this.tokenProjects.set(t.token, t.project);
    }
    for (const c of options.oauthClients ?? [
      {
        clientId: 'lockstep-simulator.apps.googleusercontent.com',
        clientSecret: 'GOCSPX-simulator',
        redirectUris: [],
      },
    ])
      this.oauthClients.set(c.clientId, c);
  }

  // -------------------------------------------------------------------------------------------
  // Ids

  private newSpreadsheetId(): string {
    return `1${randomAlphanumeric(43, this.random)}`;
  }

  private newSheetId(ss: SpreadsheetState): number {
    for (;;) {
      const id = 1 + Math.floor(this.random() * 2_000_000_000);
      if (!ss.sheets.some((s) => s.sheetId === id)) return id;
    }
  }

  private newMetadataId(ss: SpreadsheetState): number {
    for (;;) {
      const id = 1 + Math.floor(this.random() * 2_000_000_000);
      if (!ss.metadata.some((m) => m.metadataId === id)) return id;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Out-of-band handles: what a person does in the Sheets UI.

  addSpreadsheet(seed: SpreadsheetSeed): SpreadsheetState {
    const now = this.clock.now();
    const ss: SpreadsheetState = {
      spreadsheetId: seed.spreadsheetId ?? this.newSpreadsheetId(),
      title: seed.title,
      locale: seed.locale ?? 'en_US',
      timeZone: seed.timeZone ?? 'America/New_York',
      sheets: [],
      metadata: [],
      openedByApp: seed.openedByApp ?? true,
      ownerUserId: DEFAULT_USER,
      createdTime: now,
      modifiedTime: now,
    };
    for (const [i, s] of seed.sheets.entries()) {
      const sheet = this.makeSheet(ss, {
        title: s.title,
        sheetId: s.sheetId ?? (i === 0 ? 0 : undefined),
        rowCount: Math.max(s.rowCount ?? DEFAULT_ROW_COUNT, s.rows.length),
        columnCount: maxOf(
          s.rows.map((r) => r.length),
          s.columnCount ?? DEFAULT_COLUMN_COUNT,
        ),
      });
      sheet.frozenRowCount = s.frozenRowCount ?? 0;
      for (const [c, fmt] of Object.entries(s.columnFormats ?? {})) {
        for (let r = sheet.frozenRowCount; r < sheet.rows.length; r++)
          setCell(sheet, r, Number(c), { v: null, ...(fmt ? { fmt: { ...fmt } } : {}) });
      }
      for (const [r, values] of s.rows.entries())
        for (const [c, value] of values.entries()) this.typeInto(sheet, r, c, value);
    }
    recalc(ss);
    this.spreadsheets.set(ss.spreadsheetId, ss);
    return ss;
  }

  private makeSheet(
    ss: SpreadsheetState,
    p: { title: string; sheetId?: number | undefined; rowCount: number; columnCount: number; index?: number },
  ): SheetState {
    const sheet: SheetState = {
      sheetId: p.sheetId ?? this.newSheetId(ss),
      title: p.title,
      rows: Array.from({ length: p.rowCount }, newRow),
      cols: Array.from({ length: p.columnCount }, newCol),
      frozenRowCount: 0,
    };
    ss.sheets.splice(p.index ?? ss.sheets.length, 0, sheet);
    return sheet;
  }

  private typeInto(sheet: SheetState, r: number, c: number, value: unknown): void {
    const cell = inputCell(value, 'USER_ENTERED', cellAt(sheet, r, c));
    if ('error' in cell) throw new ModelError(cell.error);
    setCell(sheet, r, c, cell);
  }

  spreadsheet(spreadsheetId: string): SpreadsheetState {
    const ss = this.spreadsheets.get(spreadsheetId);
    if (!ss) throw new Error(`No spreadsheet ${spreadsheetId}`);
    return ss;
  }

  sheet(spreadsheetId: string, sheet: string | number): SheetState {
    const found = this.spreadsheet(spreadsheetId).sheets.find(
      (s) => s.title === sheet || s.sheetId === sheet,
    );
    if (!found) throw new Error(`No sheet ${sheet}`);
    return found;
  }

  private touched(ss: SpreadsheetState): void {
    recalc(ss);
    ss.modifiedTime = this.clock.now();
  }

  /** A person types into one cell (`A1` notation on the sheet), as USER_ENTERED input. */
  editCell(spreadsheetId: string, sheet: string | number, a1: string, value: unknown): void {
    const s = this.sheet(spreadsheetId, sheet);
    const parsed = parseA1(a1, []);
    if (!parsed || parsed.startRow === undefined || parsed.startCol === undefined)
      throw new Error(`Not a cell: ${a1}`);
    this.typeInto(s, parsed.startRow, parsed.startCol, value);
    this.touched(this.spreadsheet(spreadsheetId));
  }

  /** A person edits cells of one row (0-based row index), by column index. */
  editRow(
    spreadsheetId: string,
    sheet: string | number,
    rowIndex: number,
    values: Record<number, unknown>,
  ): void {
    const s = this.sheet(spreadsheetId, sheet);
    for (const [c, v] of Object.entries(values)) this.typeInto(s, rowIndex, Number(c), v);
    this.touched(this.spreadsheet(spreadsheetId));
  }

  /** A person inserts rows at a 0-based index (rows below shift down) and fills them. */
  insertRows(spreadsheetId: string, sheet: string | number, index: number, rows: unknown[][]): void {
    const s = this.sheet(spreadsheetId, sheet);
    insertRows(s, index, rows.length, index > 0);
    for (const [i, values] of rows.entries())
      for (const [c, v] of values.entries()) this.typeInto(s, index + i, c, v);
    this.touched(this.spreadsheet(spreadsheetId));
  }

  /** A person appends rows after the last row with data (the grid grows when needed). */
  appendRows(spreadsheetId: string, sheet: string | number, rows: unknown[][]): number {
    const s = this.sheet(spreadsheetId, sheet);
    const at = dataExtent(s);
    const missing = at + rows.length - s.rows.length;
    if (missing > 0) insertRows(s, s.rows.length, missing, true);
    for (const [i, values] of rows.entries())
      for (const [c, v] of values.entries()) this.typeInto(s, at + i, c, v);
    this.touched(this.spreadsheet(spreadsheetId));
    return at;
  }

  /** A person deletes rows [index, index + count); their developer metadata goes with them. */
  deleteRows(spreadsheetId: string, sheet: string | number, index: number, count = 1): void {
    const ss = this.spreadsheet(spreadsheetId);
    deleteRows(ss, this.sheet(spreadsheetId, sheet), index, index + count);
    this.touched(ss);
  }

  /** A person drags rows [start, start + count) to before row `destination` (pre-move index). */
  moveRows(
    spreadsheetId: string,
    sheet: string | number,
    start: number,
    count: number,
    destination: number,
  ): void {
    moveItems(this.sheet(spreadsheetId, sheet).rows, start, start + count, destination);
    this.touched(this.spreadsheet(spreadsheetId));
  }

  /** A person drags columns [start, start + count) to before column `destination` (pre-move index). */
  moveColumns(
    spreadsheetId: string,
    sheet: string | number,
    start: number,
    count: number,
    destination: number,
  ): void {
    moveCols(this.sheet(spreadsheetId, sheet), start, start + count, destination);
    this.touched(this.spreadsheet(spreadsheetId));
  }

  /**
   * A person sorts the rows below the frozen header by one column. The simulator moves whole rows,
   * so row metadata moves with its row.
   */
  sortRows(spreadsheetId: string, sheet: string | number, column: number, ascending = true): void {
    const s = this.sheet(spreadsheetId, sheet);
    const header = Math.max(s.frozenRowCount, 1);
    const extent = dataExtent(s);
    const body = s.rows.slice(header, extent);
    const key = (r: (typeof body)[number]) => r.cells[column]?.v ?? null;
    body.sort((a, b) => {
      const x = key(a);
      const y = key(b);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return ascending ? cmp : -cmp;
    });
    spliceItems(s.rows, header, body.length, body);
    this.touched(this.spreadsheet(spreadsheetId));
  }

  /** Unformatted values of a sheet (trailing empties trimmed), for assertions. */
  values(spreadsheetId: string, sheet: string | number): (string | number | boolean)[][] {
    const s = this.sheet(spreadsheetId, sheet);
    return readRect(s, 0, dataExtent(s), 0, s.cols.length, 'ROWS', 'UNFORMATTED_VALUE', 'SERIAL_NUMBER');
  }

  /** The row indexes holding row metadata with this key (and value), in sheet order. */
  rowsWithMetadata(
    spreadsheetId: string,
    key: string,
    value?: string,
  ): { index: number; value?: string; sheetId: number }[] {
    const ss = this.spreadsheet(spreadsheetId);
    return ss.metadata
      .filter((m) => m.loc.kind === 'ROW' && m.key === key && (value === undefined || m.value === value))
      .map((m) => {
        const loc = m.loc as Extract<MetadataLocation, { kind: 'ROW' }>;
        return {
          index: loc.sheet.rows.indexOf(loc.row),
          sheetId: loc.sheet.sheetId,
          ...(m.value !== undefined ? { value: m.value } : {}),
        };
      })
      .sort((a, b) => a.index - b.index);
  }

  grantToApp(spreadsheetId: string, granted = true): void {
    this.spreadsheet(spreadsheetId).openedByApp = granted;
  }

  resetQuotas(): void {
    this.hits.clear();
  }

  // -------------------------------------------------------------------------------------------
  // Quotas: sliding 60 s windows per user and per project, reads and writes apart.

  private chargeQuota(ctx: Ctx, kind: 'read' | 'write'): void {
    if (!this.quota) return;
    const now = this.clock.now();
    const q = this.quota;
    const checks: [string, number, 'user' | 'project'][] = [
      [
        `user:${ctx.token.userId}:${ctx.project}:${kind}`,
        kind === 'read' ? q.readsPerMinutePerUser : q.writesPerMinutePerUser,
        'user',
      ],
      [
        `project:${ctx.project}:${kind}`,
        kind === 'read' ? q.readsPerMinutePerProject : q.writesPerMinutePerProject,
        'project',
      ],
    ];
    const lists = checks.map(([key]) => (this.hits.get(key) ?? []).filter((t) => t > now - 60_000));
    for (const [i, [, limit, scope]] of checks.entries()) {
      if ((lists[i] as number[]).length >= limit) throw quotaExceeded(kind, scope, limit);
    }
    for (const [i, [key]] of checks.entries()) {
      (lists[i] as number[]).push(now);
      this.hits.set(key, lists[i] as number[]);
    }
  }

  rateLimitResponse(): SimResponse {
    const e = quotaExceeded('read', 'user', this.quota ? this.quota.readsPerMinutePerUser : 60);
    return json(e.code, e.body());
  }

  // -------------------------------------------------------------------------------------------
  // HTTP

  async handle(req: SimRequest): Promise<SimResponse> {
    try {
      return this.route(req);
    } catch (err) {
      if (err instanceof GoogleApiError) return json(err.code, err.body());
      if (err instanceof ModelError) return json(400, invalid(err.message).body());
      throw err;
    }
  }

  private route(req: SimRequest): SimResponse {
    this.payloads.push({ method: req.method, path: req.path, bytes: Buffer.byteLength(req.rawBody) });
    if (Buffer.byteLength(req.rawBody) > this.payloadLimitBytes)
      throw invalid(`Request payload size exceeds the limit: ${this.payloadLimitBytes} bytes.`);
    const path = req.path;
    if (path === '/token' && req.method === 'POST') return this.oauthToken(req);
    if (path === '/o/oauth2/v2/auth' && req.method === 'GET') return this.oauthAuthorize(req);
    if (path === '/revoke' && req.method === 'POST') return this.oauthRevoke(req);
    if (path === USERINFO_PATH) return googleUserinfo(req, this.tokens);
    if (path.startsWith('/drive/v3/')) return this.driveRoute(req);
    if (!path.startsWith('/v4/spreadsheets')) throw notFound();

    const auth = this.tokens.check(bearerToken(req.headers));
    if (!auth.ok) throw unauthenticated();
    const ctx: Ctx = {
      token: auth.info,
      project: this.tokenProjects.get(auth.info.token) ?? DEFAULT_PROJECT,
    };
    if (req.bodyInvalid) throw invalid('Invalid JSON payload received. Unexpected token.');

    // /v4/spreadsheets[/{id}[:verb | /values... | /developerMetadata...]]
    const rest = path.slice('/v4/spreadsheets'.length);
    if (rest === '' || rest === '/') {
      if (req.method !== 'POST') throw notFound();
      this.requireScope(ctx, WRITE_SCOPES);
      this.chargeQuota(ctx, 'write');
      return this.createSpreadsheet(req, ctx);
    }
    const segments = rest.slice(1).split('/');
    let first: string;
    try {
      first = decodeURIComponent(segments[0] ?? '');
    } catch {
      throw notFound();
    }
    const colon = first.indexOf(':');
    const id = colon >= 0 ? first.slice(0, colon) : first;
    const verb = colon >= 0 ? first.slice(colon + 1) : undefined;
    const ss = this.spreadsheets.get(id);

    const isRead =
      req.method === 'GET' ||
      verb === 'getByDataFilter' ||
      /^values:batchGetByDataFilter$|^developerMetadata:search$/.test(segments[1] ?? '');
    this.requireScope(ctx, isRead ? READ_SCOPES : WRITE_SCOPES);
    if (!ss) throw notFound();
    this.requireFileAccess(ctx, ss);
    this.chargeQuota(ctx, isRead ? 'read' : 'write');

    if (segments.length === 1) {
      if (verb === undefined && req.method === 'GET') return this.getSpreadsheet(req, ss, ctx);
      if (verb === 'getByDataFilter' && req.method === 'POST') return this.getByDataFilter(req, ss, ctx);
      if (verb === 'batchUpdate' && req.method === 'POST') return this.batchUpdate(req, ss, ctx);
      throw notFound();
    }
    if (verb !== undefined) throw notFound();
    const sub = segments.slice(1).join('/');
    if (sub.startsWith('values')) return this.valuesRoute(req, ss, ctx, sub);
    if (sub === 'developerMetadata:search' && req.method === 'POST') {
      const filters = asArray((req.body as { dataFilters?: unknown } | undefined)?.dataFilters);
      const matched = this.searchMetadata(ss, ctx, filters);
      return json(200, matched.length ? { matchedDeveloperMetadata: matched } : {});
    }
    const dm = /^developerMetadata\/(\d+)$/.exec(sub);
    if (dm && req.method === 'GET') {
      const m = this.visibleMetadata(ss, ctx).find((x) => x.metadataId === Number(dm[1]));
      if (!m) throw new GoogleApiError(404, 'NOT_FOUND', `No developer metadata with ID: ${dm[1]}`);
      return json(200, metadataJson(m));
    }
    throw notFound();
  }

  private requireScope(ctx: Ctx, accepted: string[]): void {
    if (!ctx.token.scopes.some((s) => accepted.includes(s))) throw insufficientScopes();
  }

  /** drive.file alone reaches only files the app created or was granted. */
  private canSee(ctx: Ctx, ss: SpreadsheetState): boolean {
    const broad = ctx.token.scopes.some((s) => s !== SCOPES.driveFile);
    return broad || ss.openedByApp;
  }

  private requireFileAccess(ctx: Ctx, ss: SpreadsheetState): void {
    if (!this.canSee(ctx, ss)) throw denied();
  }

  // -------------------------------------------------------------------------------------------
  // Ranges

  private resolveA1(ss: SpreadsheetState, text: string): { sheet: SheetState; a1: A1 } {
    const parsed = parseA1(
      text,
      ss.sheets.map((s) => s.title),
    );
    if (!parsed) throw invalid(`Unable to parse range: ${text}`);
    const sheet =
      parsed.sheetName === undefined ? ss.sheets[0] : ss.sheets.find((s) => s.title === parsed.sheetName);
    if (!sheet) throw invalid(`Unable to parse range: ${text}`);
    return { sheet, a1: parsed };
  }

  /** A bounded rectangle inside the grid; `exceeds grid limits` when it reaches past it. */
  private rect(sheet: SheetState, a1: A1 | GridRange, label: string) {
    const g =
      'sheetId' in a1
        ? a1
        : {
            startRowIndex: a1.startRow,
            endRowIndex: a1.endRow,
            startColumnIndex: a1.startCol,
            endColumnIndex: a1.endCol,
          };
    const rowCount = sheet.rows.length;
    const columnCount = sheet.cols.length;
    const r = {
      startRow: g.startRowIndex ?? 0,
      endRow: g.endRowIndex ?? rowCount,
      startCol: g.startColumnIndex ?? 0,
      endCol: g.endColumnIndex ?? columnCount,
    };
    if (r.endRow > rowCount || r.endCol > columnCount || r.startRow >= rowCount || r.startCol >= columnCount)
      throw invalid(
        `Range (${label}) exceeds grid limits. Max rows: ${rowCount}, max columns: ${columnCount}`,
      );
    return r;
  }

  /** Indexes are non-negative integers and each start is at most its end. */
  private checkGridRange(g: GridRange, where: string): void {
    for (const k of ['startRowIndex', 'endRowIndex', 'startColumnIndex', 'endColumnIndex'] as const) {
      const v = g[k];
      if (v !== undefined && (!Number.isInteger(v) || v < 0))
        throw invalid(`Invalid ${where}: ${k} must be a non-negative integer, got ${JSON.stringify(v)}`);
    }
    if (g.startRowIndex !== undefined && g.endRowIndex !== undefined && g.startRowIndex > g.endRowIndex)
      throw invalid(
        `Invalid ${where}: startRowIndex (${g.startRowIndex}) must be <= endRowIndex (${g.endRowIndex})`,
      );
    if (
      g.startColumnIndex !== undefined &&
      g.endColumnIndex !== undefined &&
      g.startColumnIndex > g.endColumnIndex
    )
      throw invalid(
        `Invalid ${where}: startColumnIndex (${g.startColumnIndex}) must be <= endColumnIndex (${g.endColumnIndex})`,
      );
  }

  private gridRangeSheet(ss: SpreadsheetState, g: GridRange, where: string): SheetState {
    const sheet = ss.sheets.find((s) => s.sheetId === (g.sheetId ?? 0));
    if (!sheet) throw invalid(`Invalid ${where}: No grid with id: ${g.sheetId}`);
    return sheet;
  }

  // -------------------------------------------------------------------------------------------
  // spreadsheets.create / get

  private createSpreadsheet(req: SimRequest, ctx: Ctx): SimResponse {
    const body = (req.body ?? {}) as {
      properties?: { title?: string; timeZone?: string; locale?: string };
      sheets?: {
        properties?: {
          title?: string;
          sheetId?: number;
          gridProperties?: { rowCount?: number; columnCount?: number };
        };
      }[];
    };
    const sheets = body.sheets?.length ? body.sheets : [{ properties: { title: 'Sheet1' } }];
    const ss = this.addSpreadsheet({
      title: body.properties?.title ?? 'Untitled spreadsheet',
      ...(body.properties?.timeZone ? { timeZone: body.properties.timeZone } : {}),
      ...(body.properties?.locale ? { locale: body.properties.locale } : {}),
      openedByApp: true,
      sheets: sheets.map((s, i) => ({
        title: s.properties?.title ?? `Sheet${i + 1}`,
        ...(s.properties?.sheetId !== undefined ? { sheetId: s.properties.sheetId } : {}),
        rows: [],
        ...(s.properties?.gridProperties?.rowCount ? { rowCount: s.properties.gridProperties.rowCount } : {}),
        ...(s.properties?.gridProperties?.columnCount
          ? { columnCount: s.properties.gridProperties.columnCount }
          : {}),
      })),
    });
    ss.ownerUserId = ctx.token.userId;
    return json(200, this.spreadsheetJson(ss, ctx, { includeGridData: false }));
  }

  private getSpreadsheet(req: SimRequest, ss: SpreadsheetState, ctx: Ctx): SimResponse {
    const fields = req.query.get('fields') ?? undefined;
    const mask = fields ? parseFieldMask(fields) : undefined;
    const wantsData =
      req.query.get('includeGridData') === 'true' || (fields !== undefined && /\bdata\b/.test(fields));
    const ranges = req.query.getAll('ranges');
    const body = this.spreadsheetJson(ss, ctx, { includeGridData: wantsData, ranges });
    return json(200, mask ? applyFieldMask(body, mask) : body);
  }

  /**
   * spreadsheets.getByDataFilter: the spreadsheet with only the sheets and grid portions that the
   * DataFilters select (gridRange, a1Range, or developerMetadataLookup: a row's metadata selects its
   * row). Grid data comes with includeGridData, or when the `fields` mask asks for it (a mask makes
   * Google ignore includeGridData).
   */
  private getByDataFilter(req: SimRequest, ss: SpreadsheetState, ctx: Ctx): SimResponse {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.dataFilters !== undefined && !Array.isArray(body.dataFilters))
      throw invalid(
        "Invalid value at 'data_filters' (type.googleapis.com/google.apps.sheets.v4.DataFilter), expected a list",
      );
    if (body.includeGridData !== undefined && typeof body.includeGridData !== 'boolean')
      throw invalid(
        `Invalid value at 'include_grid_data' (TYPE_BOOL), ${JSON.stringify(body.includeGridData)}`,
      );
    const fields = req.query.get('fields') ?? undefined;
    const mask = fields ? parseFieldMask(fields) : undefined;
    const wantsData = fields !== undefined ? /\bdata\b/.test(fields) : body.includeGridData === true;
    const filters = asArray(body.dataFilters);
    let rects: Map<SheetState, Rect[]> | undefined;
    if (filters.length) {
      rects = new Map();
      for (const [i, filter] of filters.entries())
        for (const t of this.filterTargets(ss, ctx, filter, `dataFilters[${i}]`))
          rects.set(t.sheet, [...(rects.get(t.sheet) ?? []), t.rect]);
    }
    const out = this.spreadsheetJson(ss, ctx, { includeGridData: wantsData, ...(rects ? { rects } : {}) });
    return json(200, mask ? applyFieldMask(out, mask) : out);
  }

  private sheetProperties(sheet: SheetState, index: number) {
    return {
      sheetId: sheet.sheetId,
      title: sheet.title,
      index,
      sheetType: 'GRID',
      gridProperties: {
        rowCount: sheet.rows.length,
        columnCount: sheet.cols.length,
        ...(sheet.frozenRowCount ? { frozenRowCount: sheet.frozenRowCount } : {}),
      },
    };
  }

  spreadsheetJson(
    ss: SpreadsheetState,
    ctx: Ctx | undefined,
    o: { includeGridData: boolean; ranges?: string[]; rects?: Map<SheetState, Rect[]> },
  ) {
    const meta = ctx ? this.visibleMetadata(ss, ctx) : ss.metadata;
    const dataBySheet = new Map<SheetState, Rect[]>(o.rects ?? []);
    for (const text of o.ranges ?? []) {
      const { sheet, a1 } = this.resolveA1(ss, text);
      const r = this.rect(sheet, a1, text);
      dataBySheet.set(sheet, [...(dataBySheet.get(sheet) ?? []), r]);
    }
    // With ranges (or data filters), only the sheets they touch are described.
    const limited = Boolean(o.ranges?.length) || o.rects !== undefined;
    const sheets = ss.sheets
      .map((sheet, index) => ({ sheet, index }))
      .filter(({ sheet }) => !limited || dataBySheet.has(sheet))
      .map(({ sheet, index }) => {
        const sheetMeta = meta
          .filter((m) => m.loc.kind === 'SHEET' && m.loc.sheet === sheet)
          .map(metadataJson);
        const out: Record<string, unknown> = { properties: this.sheetProperties(sheet, index) };
        if (o.includeGridData) {
          const rects = dataBySheet.get(sheet) ?? [
            { startRow: 0, endRow: sheet.rows.length, startCol: 0, endCol: sheet.cols.length },
          ];
          out.data = rects.map((r) => this.gridData(sheet, r, meta));
        }
        if (sheetMeta.length) out.developerMetadata = sheetMeta;
        const protectedRanges = (sheet.protectedRanges ?? []).flatMap((p) => {
          const j = protectedRangeJson(sheet, p);
          return j ? [j] : [];
        });
        if (protectedRanges.length) out.protectedRanges = protectedRanges;
        return out;
      });
    const top = meta.filter((m) => m.loc.kind === 'SPREADSHEET').map(metadataJson);
    return {
      spreadsheetId: ss.spreadsheetId,
      properties: {
        title: ss.title,
        locale: ss.locale,
        autoRecalc: 'ON_CHANGE',
        timeZone: ss.timeZone,
        defaultFormat: { backgroundColor: { red: 1, green: 1, blue: 1 } },
      },
      sheets,
      ...(top.length ? { developerMetadata: top } : {}),
      spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${ss.spreadsheetId}/edit`,
    };
  }

  private gridData(sheet: SheetState, r: Rect, meta: MetadataState[]) {
    const byRow = new Map<unknown, MetadataState[]>();
    const byCol = new Map<unknown, MetadataState[]>();
    for (const m of meta) {
      if (m.loc.kind === 'ROW' && m.loc.sheet === sheet)
        byRow.set(m.loc.row, [...(byRow.get(m.loc.row) ?? []), m]);
      if (m.loc.kind === 'COLUMN' && m.loc.sheet === sheet)
        byCol.set(m.loc.col, [...(byCol.get(m.loc.col) ?? []), m]);
    }
    const last = Math.min(r.endRow, dataExtent(sheet, r.startCol, r.endCol));
    const rowData = [];
    for (let i = r.startRow; i < last; i++) {
      const values = [];
      for (let c = r.startCol; c < r.endCol; c++) {
        const cell = cellAt(sheet, i, c);
        if (!cell || (cell.v === null && cell.f === undefined && !cell.fmt)) {
          values.push({});
          continue;
        }
        const entered = extendedValue(cell, false);
        const effective = extendedValue(cell, true);
        values.push({
          ...(entered ? { userEnteredValue: entered } : {}),
          ...(effective ? { effectiveValue: effective, formattedValue: formattedValue(cell) } : {}),
          ...(cell.fmt ? { userEnteredFormat: { numberFormat: cell.fmt } } : {}),
          effectiveFormat: {
            ...(cell.fmt ? { numberFormat: cell.fmt } : {}),
            verticalAlignment: 'BOTTOM',
            wrapStrategy: 'OVERFLOW_CELL',
          },
        });
      }
      while (values.length && Object.keys(values[values.length - 1] as object).length === 0) values.pop();
      rowData.push(values.length ? { values } : {});
    }
    const rowMetadata = sheet.rows.slice(r.startRow, r.endRow).map((row) => {
      const dm = (byRow.get(row) ?? []).map(metadataJson);
      return {
        pixelSize: 21,
        ...(row.hiddenByUser ? { hiddenByUser: true } : {}),
        ...(dm.length ? { developerMetadata: dm } : {}),
      };
    });
    const columnMetadata = sheet.cols.slice(r.startCol, r.endCol).map((col) => {
      const dm = (byCol.get(col) ?? []).map(metadataJson);
      return {
        pixelSize: 100,
        ...(col.hiddenByUser ? { hiddenByUser: true } : {}),
        ...(dm.length ? { developerMetadata: dm } : {}),
      };
    });
    return {
      ...(r.startRow ? { startRow: r.startRow } : {}),
      ...(r.startCol ? { startColumn: r.startCol } : {}),
      ...(rowData.length ? { rowData } : {}),
      rowMetadata,
      columnMetadata,
    };
  }

  // -------------------------------------------------------------------------------------------
  // spreadsheets.values

  private renderOptions(source: { get(k: string): string | null | undefined }, prefix = '') {
    const cap = (s: string) => (prefix ? `${prefix}${s[0]?.toUpperCase()}${s.slice(1)}` : s);
    const render = (source.get(cap('valueRenderOption')) ?? 'FORMATTED_VALUE') as ValueRenderOption;
    const dateTime = (source.get(cap('dateTimeRenderOption')) ?? 'SERIAL_NUMBER') as DateTimeRenderOption;
    if (!['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'].includes(render))
      throw invalid(
        `Invalid value at '${cap('valueRenderOption')}' (type.googleapis.com/google.apps.sheets.v4.ValueRenderOption), "${render}"`,
      );
    if (!['SERIAL_NUMBER', 'FORMATTED_STRING'].includes(dateTime))
      throw invalid(
        `Invalid value at '${cap('dateTimeRenderOption')}' (type.googleapis.com/google.apps.sheets.v4.DateTimeRenderOption), "${dateTime}"`,
      );
    return { render, dateTime };
  }

  private majorOf(value: string | null | undefined): 'ROWS' | 'COLUMNS' {
    const major = value ?? 'ROWS';
    if (major === 'DIMENSION_UNSPECIFIED') return 'ROWS';
    if (major !== 'ROWS' && major !== 'COLUMNS')
      throw invalid(
        `Invalid value at 'major_dimension' (type.googleapis.com/google.apps.sheets.v4.Dimension), "${major}"`,
      );
    return major;
  }

  private valueRange(
    ss: SpreadsheetState,
    text: string,
    major: 'ROWS' | 'COLUMNS',
    render: ValueRenderOption,
    dateTime: DateTimeRenderOption,
  ) {
    const { sheet, a1 } = this.resolveA1(ss, text);
    const r = this.rect(sheet, a1, text);
    return this.rangeValues(sheet, r, major, render, dateTime);
  }

  private rangeValues(
    sheet: SheetState,
    r: { startRow: number; endRow: number; startCol: number; endCol: number },
    major: 'ROWS' | 'COLUMNS',
    render: ValueRenderOption,
    dateTime: DateTimeRenderOption,
  ) {
    const values = readRect(sheet, r.startRow, r.endRow, r.startCol, r.endCol, major, render, dateTime);
    return {
      range: formatRange(sheet.title, r),
      majorDimension: major,
      ...(values.length ? { values } : {}),
    };
  }

  private valuesRoute(req: SimRequest, ss: SpreadsheetState, ctx: Ctx, sub: string): SimResponse {
    const q = req.query;
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (sub === 'values:batchGet' && req.method === 'GET') {
      const { render, dateTime } = this.renderOptions(q);
      const major = this.majorOf(q.get('majorDimension'));
      const ranges = q.getAll('ranges');
      return json(200, {
        spreadsheetId: ss.spreadsheetId,
        ...(ranges.length
          ? { valueRanges: ranges.map((text) => this.valueRange(ss, text, major, render, dateTime)) }
          : {}),
      });
    }
    if (sub === 'values:batchUpdate' && req.method === 'POST') return this.valuesBatchUpdate(ss, body);
    if (sub === 'values:batchGetByDataFilter' && req.method === 'POST') {
      const { render, dateTime } = this.renderOptions(
        new Map(Object.entries(body).map(([k, v]) => [k, String(v)])),
      );
      const major = this.majorOf(body.majorDimension as string | undefined);
      const out = [];
      for (const filter of asArray(body.dataFilters)) {
        for (const t of this.filterTargets(ss, ctx, filter, 'dataFilters')) {
          out.push({
            valueRange: this.rangeValues(t.sheet, t.rect, major, render, dateTime),
            dataFilters: [filter],
          });
        }
      }
      return json(200, { spreadsheetId: ss.spreadsheetId, ...(out.length ? { valueRanges: out } : {}) });
    }
    if (sub === 'values:batchUpdateByDataFilter' && req.method === 'POST')
      return this.valuesBatchUpdateByDataFilter(ss, ctx, body);
    if (sub === 'values:batchClear' && req.method === 'POST') {
      const snapshot = structuredClone(ss);
      try {
        const cleared = asArray(body.ranges).map((text) => this.clearRange(ss, String(text)));
        this.touched(ss);
        return json(200, { spreadsheetId: ss.spreadsheetId, clearedRanges: cleared });
      } catch (e) {
        this.restore(ss, snapshot);
        throw e;
      }
    }
    if (!sub.startsWith('values/')) throw notFound();
    let range: string;
    try {
      range = decodeURIComponent(sub.slice('values/'.length));
    } catch {
      throw invalid('Unable to parse range');
    }
    if (range.endsWith(':append') && req.method === 'POST')
      return this.append(ss, range.slice(0, -7), q, body);
    if (range.endsWith(':clear') && req.method === 'POST') {
      const cleared = this.clearRange(ss, range.slice(0, -6));
      this.touched(ss);
      return json(200, { spreadsheetId: ss.spreadsheetId, clearedRange: cleared });
    }
    if (req.method === 'GET') {
      const { render, dateTime } = this.renderOptions(q);
      return json(200, this.valueRange(ss, range, this.majorOf(q.get('majorDimension')), render, dateTime));
    }
    if (req.method === 'PUT') {
      const option = this.inputOption(q.get('valueInputOption'));
      const snapshot = structuredClone(ss);
      try {
        if (body.range !== undefined && body.range !== range)
          throw invalid(
            `Requested entity range [${body.range}] does not match the range in the URL [${range}].`,
          );
        const { sheet, a1 } = this.resolveA1(ss, range);
        const res = this.writeValues(sheet, a1, range, body, option, 'data');
        this.touched(ss);
        return json(200, {
          spreadsheetId: ss.spreadsheetId,
          ...res.summary,
          ...this.updatedData(sheet, res, q.get('includeValuesInResponse') === 'true', q, 'response'),
        });
      } catch (e) {
        this.restore(ss, snapshot);
        throw e;
      }
    }
    throw notFound();
  }

  private inputOption(value: string | null | undefined): 'RAW' | 'USER_ENTERED' {
    if (value === 'RAW' || value === 'USER_ENTERED') return value;
    if (value === undefined || value === null || value === 'INPUT_VALUE_OPTION_UNSPECIFIED')
      throw invalid("'valueInputOption' is required but not specified");
    throw invalid(
      `Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), "${value}"`,
    );
  }

  private restore(ss: SpreadsheetState, snapshot: SpreadsheetState): void {
    Object.assign(ss, snapshot);
  }

  private clearRange(ss: SpreadsheetState, text: string): string {
    const { sheet, a1 } = this.resolveA1(ss, text);
    const r = this.rect(sheet, a1, text);
    for (let i = r.startRow; i < r.endRow; i++)
      for (let c = r.startCol; c < r.endCol; c++) {
        const cell = cellAt(sheet, i, c);
        if (cell) setCell(sheet, i, c, cell.fmt ? { v: null, fmt: cell.fmt } : undefined);
      }
    return formatRange(sheet.title, r);
  }

  /**
   * Writes a ValueRange at the top-left of a range. Values past a bounded range are refused; null
   * skips a cell; '' clears it.
   */
  private writeValues(
    sheet: SheetState,
    target:
      | A1
      | { startRow: number; endRow?: number; startCol: number; endCol?: number; wholeSheet?: boolean },
    label: string,
    vr: Record<string, unknown>,
    option: 'RAW' | 'USER_ENTERED',
    where: string,
  ) {
    const major = this.majorOf(vr.majorDimension as string | undefined);
    const raw = vr.values === undefined ? [] : vr.values;
    if (!Array.isArray(raw) || raw.some((r) => !Array.isArray(r)))
      throw invalid(`Invalid value at '${where}.values' (type.googleapis.com/google.protobuf.ListValue)`);
    let grid = raw as unknown[][];
    if (major === 'COLUMNS') {
      const width = maxOf(
        grid.map((c) => c.length),
        0,
      );
      grid = Array.from({ length: width }, (_, r) => grid.map((col) => col[r] ?? null));
    }
    const startRow = target.startRow ?? 0;
    const startCol = target.startCol ?? 0;
    const height = grid.length;
    const width = maxOf(
      grid.map((r) => r.length),
      0,
    );
    const rangeText = () => label;
    if (target.endRow !== undefined && startRow + height > target.endRow)
      throw invalid(
        `Requested writing within range [${rangeText()}], but tried writing to row [${startRow + height}]`,
      );
    if (target.endCol !== undefined && startCol + width > target.endCol)
      throw invalid(
        `Requested writing within range [${rangeText()}], but tried writing to column [${columnLetter(startCol + width - 1)}]`,
      );
    if (startRow + height > sheet.rows.length || startCol + width > sheet.cols.length)
      throw invalid(
        `Range (${label}) exceeds grid limits. Max rows: ${sheet.rows.length}, max columns: ${sheet.cols.length}`,
      );
    let cells = 0;
    for (const [i, row] of grid.entries()) {
      for (const [j, value] of row.entries()) {
        if (value === null) continue;
        const cell = inputCell(value, option, cellAt(sheet, startRow + i, startCol + j));
        if ('error' in cell) throw invalid(`Invalid ${where}: ${cell.error}`);
        setCell(sheet, startRow + i, startCol + j, cell);
        cells += 1;
      }
    }
    const rect = {
      startRow,
      endRow: startRow + Math.max(height, 1),
      startCol,
      endCol: startCol + Math.max(width, 1),
    };
    return {
      rect,
      summary: {
        updatedRange: formatRange(sheet.title, rect),
        ...(height ? { updatedRows: height, updatedColumns: width, updatedCells: cells } : {}),
      },
    };
  }

  private updatedData(
    sheet: SheetState,
    res: { rect: { startRow: number; endRow: number; startCol: number; endCol: number } },
    include: boolean,
    source: { get(k: string): string | null | undefined },
    prefix: string,
  ) {
    if (!include) return {};
    const { render, dateTime } = this.renderOptions(source, prefix);
    return { updatedData: this.rangeValues(sheet, res.rect, 'ROWS', render, dateTime) };
  }

  private valuesBatchUpdate(ss: SpreadsheetState, body: Record<string, unknown>): SimResponse {
    const option = this.inputOption(body.valueInputOption as string | undefined);
    const include = body.includeValuesInResponse === true;
    const opts = new Map(Object.entries(body).map(([k, v]) => [k, String(v)]));
    const snapshot = structuredClone(ss);
    try {
      const responses = asArray(body.data).map((vr, i) => {
        const v = vr as Record<string, unknown>;
        const text = String(v.range ?? '');
        const { sheet, a1 } = this.resolveA1(ss, text);
        const res = this.writeValues(sheet, a1, text, v, option, `data[${i}]`);
        return { sheet, res };
      });
      this.touched(ss);
      return json(200, {
        spreadsheetId: ss.spreadsheetId,
        ...totals(responses.map((r) => ({ ...r.res.summary, sheet: r.sheet }))),
        ...(responses.length
          ? {
              responses: responses.map(({ sheet, res }) => ({
                spreadsheetId: ss.spreadsheetId,
                ...res.summary,
                ...this.updatedData(sheet, res, include, opts, 'response'),
              })),
            }
          : {}),
      });
    } catch (e) {
      this.restore(ss, snapshot);
      throw e;
    }
  }

  private valuesBatchUpdateByDataFilter(
    ss: SpreadsheetState,
    ctx: Ctx,
    body: Record<string, unknown>,
  ): SimResponse {
    const option = this.inputOption(body.valueInputOption as string | undefined);
    const include = body.includeValuesInResponse === true;
    const opts = new Map(Object.entries(body).map(([k, v]) => [k, String(v)]));
    const snapshot = structuredClone(ss);
    try {
      const responses: {
        sheet: SheetState;
        res: ReturnType<GoogleSheetsState['writeValues']>;
        dataFilter: unknown;
      }[] = [];
      for (const [i, item] of asArray(body.data).entries()) {
        const v = item as Record<string, unknown>;
        for (const t of this.filterTargets(ss, ctx, v.dataFilter, `data[${i}].dataFilter`)) {
          const label = formatRange(t.sheet.title, t.rect);
          const res = this.writeValues(t.sheet, t.rect, label, v, option, `data[${i}]`);
          responses.push({ sheet: t.sheet, res, dataFilter: v.dataFilter });
        }
      }
      this.touched(ss);
      return json(200, {
        spreadsheetId: ss.spreadsheetId,
        ...totals(responses.map((r) => ({ ...r.res.summary, sheet: r.sheet }))),
        ...(responses.length
          ? {
              responses: responses.map(({ sheet, res, dataFilter }) => ({
                ...res.summary,
                dataFilter,
                ...this.updatedData(sheet, res, include, opts, 'response'),
              })),
            }
          : {}),
      });
    } catch (e) {
      this.restore(ss, snapshot);
      throw e;
    }
  }

  /**
   * values.append: finds the table at the range (the last row with data in its columns) and writes
   * after it. INSERT_ROWS inserts new rows; OVERWRITE writes over empty rows, growing the grid.
   */
  private append(
    ss: SpreadsheetState,
    range: string,
    q: URLSearchParams,
    body: Record<string, unknown>,
  ): SimResponse {
    const option = this.inputOption(q.get('valueInputOption'));
    const insert = q.get('insertDataOption') ?? 'OVERWRITE';
    if (insert !== 'OVERWRITE' && insert !== 'INSERT_ROWS')
      throw invalid(
        `Invalid value at 'insert_data_option' (type.googleapis.com/google.apps.sheets.v4.InsertDataOption), "${insert}"`,
      );
    const snapshot = structuredClone(ss);
    try {
      const { sheet, a1 } = this.resolveA1(ss, range);
      const c0 = a1.startCol ?? 0;
      const c1 = a1.endCol ?? sheet.cols.length;
      const r0 = a1.startRow ?? 0;
      const extent = Math.max(dataExtent(sheet, c0, c1), r0);
      const rows = Array.isArray(body.values) ? (body.values as unknown[][]) : [];
      const height =
        this.majorOf(body.majorDimension as string | undefined) === 'COLUMNS'
          ? maxOf(
              rows.map((c) => (Array.isArray(c) ? c.length : 0)),
              0,
            )
          : rows.length;
      const width =
        this.majorOf(body.majorDimension as string | undefined) === 'COLUMNS'
          ? rows.length
          : maxOf(
              rows.map((r) => (Array.isArray(r) ? r.length : 0)),
              0,
            );
      if (c0 + width > sheet.cols.length)
        insertCols(sheet, sheet.cols.length, c0 + width - sheet.cols.length);
      if (insert === 'INSERT_ROWS')
        insertRows(sheet, Math.min(extent, sheet.rows.length), height, extent > 0);
      else if (extent + height > sheet.rows.length)
        insertRows(sheet, sheet.rows.length, extent + height - sheet.rows.length, true);
      const res = this.writeValues(
        sheet,
        { startRow: extent, startCol: c0 },
        formatRange(sheet.title, {
          startRow: extent,
          endRow: extent + Math.max(height, 1),
          startCol: c0,
          endCol: c0 + Math.max(width, 1),
        }),
        body,
        option,
        'data',
      );
      this.touched(ss);
      // The table ends where the data ends; it starts after the last empty row above it.
      let tableStart = extent;
      while (tableStart > r0 && dataExtent(sheet, c0, c1, tableStart - 1) === tableStart) tableStart--;
      return json(200, {
        spreadsheetId: ss.spreadsheetId,
        ...(extent > tableStart
          ? {
              tableRange: formatRange(sheet.title, {
                startRow: tableStart,
                endRow: extent,
                startCol: c0,
                endCol: Math.min(c1, sheet.cols.length),
              }),
            }
          : {}),
        updates: {
          spreadsheetId: ss.spreadsheetId,
          ...res.summary,
          ...this.updatedData(sheet, res, q.get('includeValuesInResponse') === 'true', q, 'response'),
        },
      });
    } catch (e) {
      this.restore(ss, snapshot);
      throw e;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Data filters and developer metadata

  private visibleMetadata(ss: SpreadsheetState, ctx: Ctx): MetadataState[] {
    return ss.metadata.filter((m) => m.visibility === 'DOCUMENT' || m.project === ctx.project);
  }

  private locationRegion(
    ss: SpreadsheetState,
    loc: Record<string, unknown>,
    where: string,
  ): { region: Region; kind: string } {
    if (loc.spreadsheet === true)
      return { region: { sheetId: '*', r0: 0, r1: Infinity, c0: 0, c1: Infinity }, kind: 'SPREADSHEET' };
    if (typeof loc.sheetId === 'number') {
      if (!ss.sheets.some((s) => s.sheetId === loc.sheetId))
        throw invalid(`Invalid ${where}: No grid with id: ${loc.sheetId}`);
      return { region: { sheetId: loc.sheetId, r0: 0, r1: Infinity, c0: 0, c1: Infinity }, kind: 'SHEET' };
    }
    const d = loc.dimensionRange as
      | { sheetId?: number; dimension?: string; startIndex?: number; endIndex?: number }
      | undefined;
    if (d) {
      const sheetId = d.sheetId ?? 0;
      if (!ss.sheets.some((s) => s.sheetId === sheetId))
        throw invalid(`Invalid ${where}: No grid with id: ${sheetId}`);
      const a = d.startIndex ?? 0;
      const b = d.endIndex ?? Infinity;
      if (d.dimension === 'ROWS')
        return { region: { sheetId, r0: a, r1: b, c0: 0, c1: Infinity }, kind: 'ROW' };
      if (d.dimension === 'COLUMNS')
        return { region: { sheetId, r0: 0, r1: Infinity, c0: a, c1: b }, kind: 'COLUMN' };
      throw invalid(`Invalid ${where}: dimensionRange.dimension must be ROWS or COLUMNS`);
    }
    throw invalid(`Invalid ${where}: metadataLocation must specify a location`);
  }

  private lookupMatches(
    ss: SpreadsheetState,
    m: MetadataState,
    lookup: Record<string, unknown>,
    where: string,
  ): boolean {
    if (lookup.metadataId !== undefined && Number(lookup.metadataId) !== m.metadataId) return false;
    if (lookup.metadataKey !== undefined && lookup.metadataKey !== m.key) return false;
    if (lookup.metadataValue !== undefined && lookup.metadataValue !== m.value) return false;
    if (lookup.visibility !== undefined && lookup.visibility !== m.visibility) return false;
    if (lookup.locationType !== undefined && lookup.locationType !== m.loc.kind) return false;
    const location = lookup.metadataLocation as Record<string, unknown> | undefined;
    if (location) {
      const { region, kind } = this.locationRegion(ss, location, where);
      const mine = regionOf(m.loc);
      const strategy = lookup.locationMatchingStrategy ?? 'EXACT_LOCATION';
      if (strategy === 'INTERSECTING_LOCATION') {
        if (!intersects(region, mine)) return false;
      } else if (
        m.loc.kind !== kind ||
        region.sheetId !== mine.sheetId ||
        region.r0 !== mine.r0 ||
        region.r1 !== mine.r1 ||
        region.c0 !== mine.c0 ||
        region.c1 !== mine.c1
      )
        return false;
    }
    return true;
  }

  private filterRegion(
    ss: SpreadsheetState,
    filter: Record<string, unknown>,
    where: string,
  ): Region | undefined {
    if (typeof filter.a1Range === 'string') {
      const { sheet, a1 } = this.resolveA1(ss, filter.a1Range);
      return gridRegion({
        sheetId: sheet.sheetId,
        ...(a1.startRow !== undefined ? { startRowIndex: a1.startRow } : {}),
        ...(a1.endRow !== undefined ? { endRowIndex: a1.endRow } : {}),
        ...(a1.startCol !== undefined ? { startColumnIndex: a1.startCol } : {}),
        ...(a1.endCol !== undefined ? { endColumnIndex: a1.endCol } : {}),
      });
    }
    if (filter.gridRange && typeof filter.gridRange === 'object') {
      const g = filter.gridRange as GridRange;
      this.gridRangeSheet(ss, g, where);
      return gridRegion({ ...g, sheetId: g.sheetId ?? 0 });
    }
    return undefined;
  }

  /** Metadata selected by one DataFilter. */
  private metadataFor(ss: SpreadsheetState, ctx: Ctx, filter: unknown, where: string): MetadataState[] {
    if (!filter || typeof filter !== 'object') throw invalid(`Invalid ${where}: a data filter is required`);
    const f = filter as Record<string, unknown>;
    const lookup = f.developerMetadataLookup as Record<string, unknown> | undefined;
    const visible = this.visibleMetadata(ss, ctx);
    if (lookup) return visible.filter((m) => this.lookupMatches(ss, m, lookup, where));
    const region = this.filterRegion(ss, f, where);
    if (!region) throw invalid(`Invalid ${where}: the data filter must specify a filter`);
    return visible.filter((m) => intersects(region, regionOf(m.loc)));
  }

  searchMetadata(ss: SpreadsheetState, ctx: Ctx, filters: unknown[]) {
    if (!filters.length) throw invalid('Invalid dataFilters: must specify at least one data filter.');
    const matched = new Map<MetadataState, unknown[]>();
    for (const [i, f] of filters.entries()) {
      for (const m of this.metadataFor(ss, ctx, f, `dataFilters[${i}]`))
        matched.set(m, [...(matched.get(m) ?? []), f]);
    }
    return [...matched.entries()]
      .sort(([a], [b]) => a.metadataId - b.metadataId)
      .map(([m, dataFilters]) => ({ developerMetadata: metadataJson(m), dataFilters }));
  }

  /** The ranges a DataFilter selects for reading or writing values. */
  private filterTargets(ss: SpreadsheetState, ctx: Ctx, filter: unknown, where: string) {
    if (!filter || typeof filter !== 'object') throw invalid(`Invalid ${where}: a data filter is required`);
    const f = filter as Record<string, unknown>;
    const out: {
      sheet: SheetState;
      rect: { startRow: number; endRow: number; startCol: number; endCol: number };
    }[] = [];
    if (f.developerMetadataLookup) {
      for (const m of this.metadataFor(ss, ctx, f, where)) {
        if (m.loc.kind === 'SPREADSHEET') continue;
        const sheet = m.loc.sheet;
        const r = regionOf(m.loc);
        out.push({
          sheet,
          rect: {
            startRow: r.r0,
            endRow: Math.min(r.r1, sheet.rows.length),
            startCol: r.c0,
            endCol: Math.min(r.c1, sheet.cols.length),
          },
        });
      }
      return out;
    }
    if (typeof f.a1Range === 'string') {
      const { sheet, a1 } = this.resolveA1(ss, f.a1Range);
      return [{ sheet, rect: this.rect(sheet, a1, f.a1Range) }];
    }
    if (f.gridRange && typeof f.gridRange === 'object') {
      const g = { ...(f.gridRange as GridRange) };
      g.sheetId ??= 0;
      const sheet = this.gridRangeSheet(ss, g, where);
      this.checkGridRange(g, `${where}.gridRange`);
      return [{ sheet, rect: this.rect(sheet, g, gridLabel(sheet, g)) }];
    }
    throw invalid(`Invalid ${where}: the data filter must specify a filter`);
  }

  // -------------------------------------------------------------------------------------------
  // spreadsheets.batchUpdate (atomic: one invalid request and nothing is applied)

  private batchUpdate(req: SimRequest, ss: SpreadsheetState, ctx: Ctx): SimResponse {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const requests = asArray(body.requests);
    if (!requests.length) throw invalid('Must specify at least one request.');
    const snapshot = structuredClone(ss);
    try {
      const replies = requests.map((r, i) => this.applyRequest(ss, ctx, r as Record<string, unknown>, i));
      this.touched(ss);
      return json(200, {
        spreadsheetId: ss.spreadsheetId,
        replies,
        ...(body.includeSpreadsheetInResponse === true
          ? {
              updatedSpreadsheet: this.spreadsheetJson(ss, ctx, {
                includeGridData: body.responseIncludeGridData === true,
              }),
            }
          : {}),
      });
    } catch (e) {
      this.restore(ss, snapshot);
      throw e;
    }
  }

  /**
   * Google's metadata storage limits: the spreadsheet's own metadata and each sheet's (sheet, row
   * and column metadata) may hold `developerMetadataLimit` characters of keys and values. The
   * error's wording is not documented; its shape (400 INVALID_ARGUMENT naming the request) is
   * Google's.
   */
  private checkMetadataStorage(ss: SpreadsheetState, loc: MetadataLocation, where: string): void {
    const limit = this.developerMetadataLimit;
    if (limit === false) return;
    const sheet = loc.kind === 'SPREADSHEET' ? undefined : loc.sheet;
    let used = 0;
    for (const m of ss.metadata) {
      const owner = m.loc.kind === 'SPREADSHEET' ? undefined : m.loc.sheet;
      if (owner === sheet) used += m.key.length + (m.value?.length ?? 0);
    }
    if (used <= limit) return;
    const scope = sheet ? `sheet ${sheet.sheetId}` : 'the spreadsheet';
    throw invalid(
      `Invalid ${where}: Developer metadata storage limit exceeded: ${scope} would hold ${used} characters of metadata keys and values; the limit is ${limit} characters for the spreadsheet and for each sheet.`,
    );
  }

  private dimensionTarget(ss: SpreadsheetState, range: unknown, where: string) {
    const d = (range ?? {}) as {
      sheetId?: number;
      dimension?: string;
      startIndex?: number;
      endIndex?: number;
    };
    const sheet = ss.sheets.find((s) => s.sheetId === (d.sheetId ?? 0));
    if (!sheet) throw invalid(`Invalid ${where}: No grid with id: ${d.sheetId ?? 0}`);
    if (d.dimension !== 'ROWS' && d.dimension !== 'COLUMNS')
      throw invalid(`Invalid ${where}: range.dimension must be ROWS or COLUMNS`);
    const size = d.dimension === 'ROWS' ? sheet.rows.length : sheet.cols.length;
    const start = d.startIndex ?? 0;
    const end = d.endIndex ?? size;
    if (start < 0 || end < start)
      throw invalid(`Invalid ${where}: range.startIndex must be less than or equal to range.endIndex`);
    return { sheet, rows: d.dimension === 'ROWS', start, end, size };
  }

  private applyRequest(
    ss: SpreadsheetState,
    ctx: Ctx,
    request: Record<string, unknown>,
    i: number,
  ): Record<string, unknown> {
    const kinds = Object.keys(request);
    if (kinds.length !== 1) throw invalid(`Invalid requests[${i}]: exactly one kind of request must be set.`);
    const kind = kinds[0] as string;
    const r = (request[kind] ?? {}) as Record<string, unknown>;
    const where = `requests[${i}].${kind}`;
    switch (kind) {
      case 'insertDimension': {
        const t = this.dimensionTarget(ss, r.range, where);
        if (t.start > t.size)
          throw invalid(`Invalid ${where}: range.startIndex is past the end of the grid (${t.size}).`);
        if (r.inheritFromBefore === true && t.start === 0)
          throw invalid(`Invalid ${where}: Cannot inherit properties from before the first row or column.`);
        if (t.rows) insertRows(t.sheet, t.start, t.end - t.start, r.inheritFromBefore === true);
        else insertCols(t.sheet, t.start, t.end - t.start);
        return {};
      }
      case 'appendDimension': {
        const sheet = ss.sheets.find((s) => s.sheetId === (r.sheetId ?? 0));
        if (!sheet) throw invalid(`Invalid ${where}: No grid with id: ${r.sheetId}`);
        const length = Number(r.length);
        if (!Number.isInteger(length) || length < 1)
          throw invalid(`Invalid ${where}: length must be positive.`);
        if (r.dimension === 'ROWS') insertRows(sheet, sheet.rows.length, length, true);
        else if (r.dimension === 'COLUMNS') insertCols(sheet, sheet.cols.length, length);
        else throw invalid(`Invalid ${where}: dimension must be ROWS or COLUMNS`);
        return {};
      }
      case 'deleteDimension': {
        const t = this.dimensionTarget(ss, r.range, where);
        if (t.end > t.size)
          throw invalid(`Invalid ${where}: Range [${t.start}, ${t.end}) is out of bounds (${t.size}).`);
        if (t.end === t.start) return {};
        if (t.rows && t.end - t.start >= t.size - t.sheet.frozenRowCount)
          throw invalid(`Invalid ${where}: You can't delete all the rows on the sheet.`);
        if (!t.rows && t.end - t.start >= t.size)
          throw invalid(`Invalid ${where}: You can't delete all the columns on the sheet.`);
        if (t.rows) deleteRows(ss, t.sheet, t.start, t.end);
        else deleteCols(ss, t.sheet, t.start, t.end);
        return {};
      }
      case 'moveDimension': {
        const t = this.dimensionTarget(ss, r.source, where);
        const dest = Number(r.destinationIndex);
        if (t.rows) moveItems(t.sheet.rows, t.start, t.end, dest);
        else moveCols(t.sheet, t.start, t.end, dest);
        return {};
      }
      case 'updateDimensionProperties': {
        if (r.dataSourceSheetRange !== undefined)
          throw invalid(`Invalid ${where}: the simulator does not support dataSourceSheetRange.`);
        const t = this.dimensionTarget(ss, r.range, where);
        if (t.end > t.size)
          throw invalid(`Invalid ${where}: Range [${t.start}, ${t.end}) is out of bounds (${t.size}).`);
        if (typeof r.fields !== 'string' || r.fields.trim() === '')
          throw invalid(`Invalid ${where}: fields is required.`);
        const fields = r.fields.split(',').map((f) => f.trim());
        const props = (r.properties ?? {}) as { hiddenByUser?: unknown };
        for (const f of fields)
          if (f !== 'hiddenByUser' && f !== '*')
            throw invalid(`Invalid ${where}: the simulator only models the hiddenByUser field, not '${f}'.`);
        const items: { hiddenByUser?: boolean }[] = t.rows ? t.sheet.rows : t.sheet.cols;
        for (let k = t.start; k < t.end; k++) {
          const item = items[k] as { hiddenByUser?: boolean };
          if (props.hiddenByUser === true) item.hiddenByUser = true;
          else delete item.hiddenByUser;
        }
        return {};
      }
      case 'addProtectedRange': {
        const p = (r.protectedRange ?? {}) as {
          protectedRangeId?: number;
          range?: GridRange;
          namedRangeId?: string;
          description?: string;
          warningOnly?: boolean;
          editors?: unknown;
          unprotectedRanges?: unknown[];
        };
        if (p.namedRangeId !== undefined)
          throw invalid(`Invalid ${where}: the simulator does not support named ranges.`);
        if (!p.range) throw invalid(`Invalid ${where}: protectedRange.range is required.`);
        if (p.warningOnly === true && p.editors !== undefined)
          throw invalid(`Invalid ${where}: Editors are not supported with warning_only protection.`);
        const g = { ...p.range, sheetId: p.range.sheetId ?? 0 };
        const sheet = this.gridRangeSheet(ss, g, where);
        this.checkGridRange(g, `${where}.protectedRange.range`);
        const area = this.rect(sheet, g, gridLabel(sheet, g));
        const all = ss.sheets.flatMap((x) => x.protectedRanges ?? []);
        if (p.protectedRangeId !== undefined && all.some((x) => x.protectedRangeId === p.protectedRangeId))
          throw invalid(`Invalid ${where}: A protected range with ID ${p.protectedRangeId} already exists.`);
        let id = p.protectedRangeId;
        while (id === undefined || all.some((x) => x.protectedRangeId === id))
          id = 1 + Math.floor(this.random() * 2_000_000_000);
        const rowsBound = g.startRowIndex !== undefined || g.endRowIndex !== undefined;
        const colsBound = g.startColumnIndex !== undefined || g.endColumnIndex !== undefined;
        const state = {
          protectedRangeId: id,
          ...(p.description !== undefined ? { description: p.description } : {}),
          warningOnly: p.warningOnly === true,
          ...(rowsBound
            ? { rows: [sheet.rows[area.startRow], sheet.rows[area.endRow - 1]] as [Row, Row] }
            : {}),
          ...(colsBound
            ? { cols: [sheet.cols[area.startCol], sheet.cols[area.endCol - 1]] as [Col, Col] }
            : {}),
        };
        if ((state.rows && !state.rows.every(Boolean)) || (state.cols && !state.cols.every(Boolean)))
          throw invalid(`Invalid ${where}: protectedRange.range is empty.`);
        sheet.protectedRanges = [...(sheet.protectedRanges ?? []), state];
        return { addProtectedRange: { protectedRange: protectedRangeJson(sheet, state) } };
      }
      case 'addSheet': {
        const p = (r.properties ?? {}) as {
          title?: string;
          sheetId?: number;
          index?: number;
          gridProperties?: { rowCount?: number; columnCount?: number };
        };
        const title = p.title ?? `Sheet${ss.sheets.length + 1}`;
        if (ss.sheets.some((s) => s.title.toLowerCase() === title.toLowerCase()))
          throw invalid(
            `Invalid ${where}: A sheet with the name "${title}" already exists. Please enter another name.`,
          );
        if (p.sheetId !== undefined && ss.sheets.some((s) => s.sheetId === p.sheetId))
          throw invalid(`Invalid ${where}: Sheet with id ${p.sheetId} already exists.`);
        const sheet = this.makeSheet(ss, {
          title,
          sheetId: p.sheetId,
          rowCount: p.gridProperties?.rowCount ?? DEFAULT_ROW_COUNT,
          columnCount: p.gridProperties?.columnCount ?? DEFAULT_COLUMN_COUNT,
          ...(p.index !== undefined ? { index: p.index } : {}),
        });
        return { addSheet: { properties: this.sheetProperties(sheet, ss.sheets.indexOf(sheet)) } };
      }
      case 'deleteSheet': {
        const sheet = ss.sheets.find((s) => s.sheetId === r.sheetId);
        if (!sheet) throw invalid(`Invalid ${where}: No grid with id: ${r.sheetId}`);
        if (ss.sheets.length === 1)
          throw invalid(`Invalid ${where}: You can't remove all the sheets in a document.`);
        ss.sheets = ss.sheets.filter((s) => s !== sheet);
        ss.metadata = ss.metadata.filter((m) => m.loc.kind === 'SPREADSHEET' || m.loc.sheet !== sheet);
        return {};
      }
      case 'createDeveloperMetadata': {
        const dm = (r.developerMetadata ?? {}) as Record<string, unknown>;
        if (typeof dm.metadataKey !== 'string' || dm.metadataKey === '')
          throw invalid(`Invalid ${where}: Developer metadata must specify a key.`);
        if (dm.visibility !== 'DOCUMENT' && dm.visibility !== 'PROJECT')
          throw invalid(`Invalid ${where}: Developer metadata must specify a visibility.`);
        const loc = this.newLocation(ss, dm.location, where);
        let metadataId: number;
        if (dm.metadataId !== undefined) {
          metadataId = Number(dm.metadataId);
          if (!Number.isInteger(metadataId) || metadataId <= 0)
            throw invalid(`Invalid ${where}: metadataId must be positive.`);
          if (ss.metadata.some((m) => m.metadataId === metadataId))
            throw invalid(`Invalid ${where}: Developer metadata with ID ${metadataId} already exists.`);
        } else metadataId = this.newMetadataId(ss);
        const m: MetadataState = {
          metadataId,
          key: dm.metadataKey,
          ...(typeof dm.metadataValue === 'string' ? { value: dm.metadataValue } : {}),
          visibility: dm.visibility,
          project: ctx.project,
          loc,
        };
        ss.metadata.push(m);
        this.checkMetadataStorage(ss, m.loc, where);
        return { createDeveloperMetadata: { developerMetadata: metadataJson(m) } };
      }
      case 'updateDeveloperMetadata': {
        const filters = asArray(r.dataFilters);
        if (!filters.length) throw invalid(`Invalid ${where}: must specify at least one data filter.`);
        const fields = typeof r.fields === 'string' ? r.fields : '';
        if (!fields) throw invalid(`Invalid ${where}: fields is required.`);
        const dm = (r.developerMetadata ?? {}) as Record<string, unknown>;
        const all = fields === '*' || fields === '';
        const set = new Set(fields.split(',').map((s) => s.trim()));
        const targets = new Set(
          filters.flatMap((f, j) => this.metadataFor(ss, ctx, f, `${where}.dataFilters[${j}]`)),
        );
        for (const m of targets) {
          if (all || set.has('metadataKey')) {
            if (typeof dm.metadataKey !== 'string' || !dm.metadataKey)
              throw invalid(`Invalid ${where}: Developer metadata must specify a key.`);
            m.key = dm.metadataKey;
          }
          if (all || set.has('metadataValue')) {
            if (typeof dm.metadataValue === 'string') m.value = dm.metadataValue;
            else delete m.value;
          }
          if (all || set.has('visibility')) {
            if (dm.visibility !== 'DOCUMENT' && dm.visibility !== 'PROJECT')
              throw invalid(`Invalid ${where}: Developer metadata must specify a visibility.`);
            m.visibility = dm.visibility;
          }
          if (all || set.has('location')) m.loc = this.newLocation(ss, dm.location, where);
          if (set.has('metadataId')) throw invalid(`Invalid ${where}: metadataId cannot be updated.`);
          this.checkMetadataStorage(ss, m.loc, where);
        }
        return { updateDeveloperMetadata: { developerMetadata: [...targets].map(metadataJson) } };
      }
      case 'deleteDeveloperMetadata': {
        const targets = new Set(this.metadataFor(ss, ctx, r.dataFilter, `${where}.dataFilter`));
        ss.metadata = ss.metadata.filter((m) => !targets.has(m));
        return { deleteDeveloperMetadata: { deletedDeveloperMetadata: [...targets].map(metadataJson) } };
      }
      case 'updateCells': {
        const mask = cellFieldMask(r.fields, where);
        if (r.rows !== undefined && !Array.isArray(r.rows))
          throw invalid(`Invalid ${where}: rows must be a list of RowData.`);
        const rows = (r.rows ?? []) as unknown[];
        if ((r.start === undefined) === (r.range === undefined))
          throw invalid(`Invalid ${where}: exactly one of start or range must be set.`);
        let sheet: SheetState;
        let area: Rect | undefined;
        let r0: number;
        let c0: number;
        if (r.start !== undefined) {
          const g = (r.start ?? {}) as { sheetId?: number; rowIndex?: number; columnIndex?: number };
          const found = ss.sheets.find((x) => x.sheetId === (g.sheetId ?? 0));
          if (!found) throw invalid(`Invalid ${where}: No grid with id: ${g.sheetId ?? 0}`);
          sheet = found;
          r0 = g.rowIndex ?? 0;
          c0 = g.columnIndex ?? 0;
          if (!Number.isInteger(r0) || r0 < 0 || !Number.isInteger(c0) || c0 < 0)
            throw invalid(
              `Invalid ${where}: start.rowIndex and start.columnIndex must be non-negative integers.`,
            );
        } else {
          const g = { ...(r.range as GridRange), sheetId: (r.range as GridRange).sheetId ?? 0 };
          sheet = this.gridRangeSheet(ss, g, where);
          this.checkGridRange(g, `${where}.range`);
          area = this.rect(sheet, g, gridLabel(sheet, g));
          r0 = area.startRow;
          c0 = area.startCol;
        }
        const written = new Set<string>();
        for (const [k, rowData] of rows.entries()) {
          const values = (rowData as { values?: unknown } | null)?.values ?? [];
          if (!Array.isArray(values)) throw invalid(`Invalid ${where}: rows[${k}].values must be a list.`);
          for (const [j, cellData] of values.entries()) {
            const row = r0 + k;
            const col = c0 + j;
            if (area && (row >= area.endRow || col >= area.endCol))
              throw invalid(
                `Invalid ${where}: the data (rows[${k}].values[${j}]) does not fit in the range ${gridLabel(sheet, r.range as GridRange)}.`,
              );
            if (row >= sheet.rows.length || col >= sheet.cols.length)
              throw invalid(
                `Invalid ${where}: Range (${formatRange(sheet.title, { startRow: row, endRow: row + 1, startCol: col, endCol: col + 1 })}) exceeds grid limits. Max rows: ${sheet.rows.length}, max columns: ${sheet.cols.length}`,
              );
            applyCellData(sheet, row, col, cellData, mask, `${where}.rows[${k}].values[${j}]`);
            written.add(`${row}:${col}`);
          }
        }
        // With a range, the cells the rows do not reach have the masked fields cleared.
        if (area)
          for (let row = area.startRow; row < area.endRow; row++)
            for (let col = area.startCol; col < area.endCol; col++)
              if (!written.has(`${row}:${col}`)) applyCellData(sheet, row, col, {}, mask, where);
        return {};
      }
      case 'repeatCell': {
        const mask = cellFieldMask(r.fields, where);
        if (!r.range || typeof r.range !== 'object') throw invalid(`Invalid ${where}: range is required.`);
        const g = { ...(r.range as GridRange), sheetId: (r.range as GridRange).sheetId ?? 0 };
        const sheet = this.gridRangeSheet(ss, g, where);
        this.checkGridRange(g, `${where}.range`);
        const area = this.rect(sheet, g, gridLabel(sheet, g));
        for (let row = area.startRow; row < area.endRow; row++)
          for (let col = area.startCol; col < area.endCol; col++)
            applyCellData(sheet, row, col, r.cell ?? {}, mask, `${where}.cell`);
        return {};
      }
      default:
        throw invalid(`Invalid requests[${i}]: the simulator does not support the '${kind}' request.`);
    }
  }

  private newLocation(ss: SpreadsheetState, location: unknown, where: string): MetadataLocation {
    const loc = (location ?? {}) as Record<string, unknown>;
    if (loc.spreadsheet === true) return { kind: 'SPREADSHEET' };
    if (typeof loc.sheetId === 'number') {
      const sheet = ss.sheets.find((s) => s.sheetId === loc.sheetId);
      if (!sheet) throw invalid(`Invalid ${where}: No grid with id: ${loc.sheetId}`);
      return { kind: 'SHEET', sheet };
    }
    const d = loc.dimensionRange as
      | { sheetId?: number; dimension?: string; startIndex?: number; endIndex?: number }
      | undefined;
    if (!d) throw invalid(`Invalid ${where}: Developer metadata must specify a location.`);
    const sheet = ss.sheets.find((s) => s.sheetId === (d.sheetId ?? 0));
    if (!sheet) throw invalid(`Invalid ${where}: No grid with id: ${d.sheetId ?? 0}`);
    const start = d.startIndex ?? -1;
    if (d.endIndex !== start + 1 || start < 0)
      throw invalid(
        `Invalid ${where}: Developer metadata may only be associated with a single row or column.`,
      );
    if (d.dimension === 'ROWS') {
      const row = sheet.rows[start];
      if (!row) throw invalid(`Invalid ${where}: Row ${start} is outside the grid.`);
      return { kind: 'ROW', sheet, row };
    }
    if (d.dimension === 'COLUMNS') {
      const col = sheet.cols[start];
      if (!col) throw invalid(`Invalid ${where}: Column ${start} is outside the grid.`);
      return { kind: 'COLUMN', sheet, col };
    }
    throw invalid(`Invalid ${where}: dimensionRange.dimension must be ROWS or COLUMNS`);
  }

  // -------------------------------------------------------------------------------------------
  // Drive v3: files.list and files.get for spreadsheets

  private driveError(code: number, message: string, reason: string, status?: string): GoogleApiError {
    return new GoogleApiError(code, status ?? '', message, {
      errors: [{ message, domain: 'global', reason }],
    });
  }

  private driveRoute(req: SimRequest): SimResponse {
    const auth = this.tokens.check(bearerToken(req.headers));
    if (!auth.ok) {
      const e = unauthenticated();
      return json(401, {
        error: {
          code: 401,
          message: e.message,
          errors: [
            {
              message: 'Invalid Credentials',
              domain: 'global',
              reason: 'authError',
              location: 'Authorization',
              locationType: 'header',
            },
          ],
          status: 'UNAUTHENTICATED',
        },
      });
    }
    const ctx: Ctx = {
      token: auth.info,
      project: this.tokenProjects.get(auth.info.token) ?? DEFAULT_PROJECT,
    };
    const driveScopes = [
      SCOPES.drive,
      SCOPES.driveFile,
      SCOPES.driveReadonly,
      'https://www.googleapis.com/auth/drive.metadata.readonly',
    ];
    if (!ctx.token.scopes.some((s) => driveScopes.includes(s)))
      throw this.driveError(
        403,
        'Request had insufficient authentication scopes.',
        'insufficientPermissions',
        'PERMISSION_DENIED',
      );
    const q = req.query;
    const mask = q.get('fields') ? parseFieldMask(q.get('fields') as string) : undefined;
    const visible = [...this.spreadsheets.values()].filter((ss) => this.canSee(ctx, ss));
    const fileJson = (ss: SpreadsheetState) => ({
      kind: 'drive#file',
      id: ss.spreadsheetId,
      name: ss.title,
      mimeType: SPREADSHEET_MIME,
      createdTime: new Date(ss.createdTime).toISOString(),
      modifiedTime: new Date(ss.modifiedTime).toISOString(),
      trashed: false,
      webViewLink: `https://docs.google.com/spreadsheets/d/${ss.spreadsheetId}/edit?usp=drivesdk`,
    });
    const defaultFile = (f: ReturnType<typeof fileJson>) => ({
      kind: f.kind,
      mimeType: f.mimeType,
      id: f.id,
      name: f.name,
    });
    if (req.path === '/drive/v3/files' && req.method === 'GET') {
      const predicate = parseDriveQuery(q.get('q') ?? '');
      if (!predicate) {
        throw new GoogleApiError(400, '', 'Invalid Value', {
          errors: [
            {
              message: 'Invalid Value',
              domain: 'global',
              reason: 'invalid',
              location: 'q',
              locationType: 'parameter',
            },
          ],
        });
      }
      const pageSize = Number(q.get('pageSize') ?? 100);
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
        throw new GoogleApiError(
          400,
          '',
          `Invalid value '${q.get('pageSize')}'. Values must be within the range: [1, 1000]`,
          {
            errors: [
              {
                message: 'Invalid value',
                domain: 'global',
                reason: 'invalid',
                location: 'pageSize',
                locationType: 'parameter',
              },
            ],
          },
        );
      const all = visible
        .map(fileJson)
        .filter(predicate)
        .sort((a, b) => b.modifiedTime.localeCompare(a.modifiedTime) || a.id.localeCompare(b.id));
      const offset = q.get('pageToken')
        ? Number(Buffer.from(q.get('pageToken') as string, 'base64url').toString())
        : 0;
      if (!Number.isInteger(offset) || offset < 0) throw invalid('Invalid pageToken');
      const page = all.slice(offset, offset + pageSize);
      const body = {
        kind: 'drive#fileList',
        ...(offset + pageSize < all.length
          ? { nextPageToken: Buffer.from(String(offset + pageSize)).toString('base64url') }
          : {}),
        incompleteSearch: false,
        files: page.map((f) => (mask ? f : defaultFile(f))),
      };
      return json(200, mask ? applyFieldMask(body, mask) : body);
    }
    const m = /^\/drive\/v3\/files\/([^/]+)$/.exec(req.path);
    if (m && req.method === 'GET') {
      const ss = visible.find((s) => s.spreadsheetId === m[1]);
      if (!ss) throw this.driveError(404, `File not found: ${m[1]}.`, 'notFound');
      const f = fileJson(ss);
      return json(200, mask ? applyFieldMask(f, mask) : defaultFile(f));
    }
    throw notFound();
  }

  // -------------------------------------------------------------------------------------------
  // Google OAuth 2.0: authorization code (access_type=offline for a refresh token), refresh, revoke

  private oauthAuthorize(req: SimRequest): SimResponse {
    const q = req.query;
    const client = this.oauthClients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client)
      return json(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    if (!redirectUri || (client.redirectUris.length > 0 && !client.redirectUris.includes(redirectUri)))
      return json(400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
    const redirect = new URL(redirectUri);
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    if (q.get('response_type') !== 'code') {
      redirect.searchParams.set('error', 'unsupported_response_type');
      return { status: 302, headers: { location: redirect.toString() } };
    }
    const scope = (q.get('scope') ?? '').split(/\s+/).filter(Boolean).join(' ');
    if (!scope) {
      redirect.searchParams.set('error', 'invalid_request');
      return { status: 302, headers: { location: redirect.toString() } };
    }
    const code = `4/0${randomAlphanumeric(70, this.random)}`;
    const challenge = q.get('code_challenge');
    this.authCodes.set(code, {
      clientId: client.clientId,
      redirectUri,
      scope,
      offline: q.get('access_type') === 'offline',
      ...(challenge
        ? { challenge: { value: challenge, method: q.get('code_challenge_method') ?? 'plain' } }
        : {}),
      expiresAt: this.clock.now() + 10 * 60_000,
      used: false,
    });
    redirect.searchParams.set('code', code);
    redirect.searchParams.set('scope', scope);
    return { status: 302, headers: { location: redirect.toString() } };
  }

  private oauthToken(req: SimRequest): SimResponse {
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    let clientId = body.client_id;
    let clientSecret = body.client_secret;
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (basic?.[1]) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = id;
      clientSecret = secret;
    }
    const client = this.oauthClients.get(clientId ?? '');
    if (!client || client.clientSecret !== clientSecret)
      return json(401, { error: 'invalid_client', error_description: 'Unauthorized' });
    const bad = (error: string, description = 'Bad Request') =>
      json(400, { error, error_description: description });
    const now = this.clock.now();
    if (body.grant_type === 'authorization_code') {
      const code = this.authCodes.get(body.code ?? '');
      if (!code || code.used || now >= code.expiresAt || code.clientId !== client.clientId)
        return bad('invalid_grant', 'Malformed auth code.');
      if (body.redirect_uri !== code.redirectUri) return bad('redirect_uri_mismatch');
      if (code.challenge) {
        const verifier = body.code_verifier ?? '';
        const computed =
          code.challenge.method === 'S256'
            ? createHash('sha256').update(verifier).digest('base64url')
            : verifier;
        if (computed !== code.challenge.value) return bad('invalid_grant', 'Invalid code verifier.');
      }
      code.used = true;
      const access = this.issueAccessToken(code.scope);
      const out: Record<string, unknown> = {
        access_token: access,
        expires_in: ACCESS_TOKEN_TTL_S,
        scope: code.scope,
        token_type: 'Bearer',
      };
      if (code.offline) {
        const refresh = `1//0${randomAlphanumeric(90, this.random)}`;
        this.refreshTokens.set(refresh, {
          clientId: client.clientId,
          scope: code.scope,
          access: new Set([access]),
        });
        out.refresh_token = refresh;
      }
      return json(200, out);
    }
    if (body.grant_type === 'refresh_token') {
      const rt = this.refreshTokens.get(body.refresh_token ?? '');
      if (!rt || rt.clientId !== client.clientId)
        return bad('invalid_grant', 'Token has been expired or revoked.');
      const access = this.issueAccessToken(rt.scope);
      rt.access.add(access);
      // Google keeps the refresh token: no rotation, no new refresh_token in the answer.
      return json(200, {
        access_token: access,
        expires_in: ACCESS_TOKEN_TTL_S,
        scope: rt.scope,
        token_type: 'Bearer',
      });
    }
    return bad('unsupported_grant_type', `Invalid grant_type: ${body.grant_type ?? ''}`);
  }

  private issueAccessToken(scope: string): string {
    const token = `ya29.${randomAlphanumeric(120, this.random)}`;
    this.tokens.add({
      token,
      scopes: scope.split(' ').filter(Boolean),
      kind: 'oauth',
      userId: DEFAULT_USER,
      expiresAt: this.clock.now() + ACCESS_TOKEN_TTL_S * 1000,
    });
    return token;
  }

  private oauthRevoke(req: SimRequest): SimResponse {
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    const token = req.query.get('token') ?? body.token ?? '';
    const rt = this.refreshTokens.get(token);
    if (rt) {
      for (const a of rt.access) this.tokens.revoke(a);
      this.refreshTokens.delete(token);
      return json(200, {});
    }
    if (this.tokens.get(token)) {
      this.tokens.revoke(token);
      return json(200, {});
    }
    return json(400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
  }

  /** Expires every access token issued so far (the clock is not moved). */
  expireAccessTokens(): void {
    for (const rt of this.refreshTokens.values()) for (const a of rt.access) this.tokens.revoke(a);
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Which CellData fields an updateCells / repeatCell `fields` mask writes (the simulator models two). */
type CellMask = { value: boolean; format: boolean };

const CELL_DATA_FIELDS = new Set([
  'userEnteredValue',
  'effectiveValue',
  'formattedValue',
  'userEnteredFormat',
  'effectiveFormat',
  'hyperlink',
  'note',
  'textFormatRuns',
  'dataValidation',
  'pivotTable',
  'dataSourceTable',
  'dataSourceFormula',
  'chipRuns',
]);

function cellFieldMask(fields: unknown, where: string): CellMask {
  if (typeof fields !== 'string' || fields.trim() === '')
    throw invalid(`Invalid ${where}: At least one field must be specified.`);
  const mask: CellMask = { value: false, format: false };
  for (const part of fields.split(',')) {
    const path = part.trim().replaceAll('/', '.');
    if (path === '*') {
      mask.value = true;
      mask.format = true;
    } else if (path === 'userEnteredValue') mask.value = true;
    else if (path === 'userEnteredFormat' || path === 'userEnteredFormat.numberFormat') mask.format = true;
    else if (CELL_DATA_FIELDS.has(path.split('.')[0] ?? ''))
      throw invalid(`Invalid ${where}: the simulator does not support writing the field '${path}'.`);
    else throw invalid(`Invalid ${where}: Invalid field mask: '${path}' is not a field of CellData.`);
  }
  return mask;
}

/** Writes one CellData into a cell: the masked fields are replaced, an absent masked field is cleared. */
function applyCellData(
  sheet: SheetState,
  row: number,
  col: number,
  data: unknown,
  mask: CellMask,
  where: string,
): void {
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw invalid(`Invalid ${where}: a CellData object is required.`);
  const d = data as { userEnteredValue?: unknown; userEnteredFormat?: { numberFormat?: unknown } };
  const previous = cellAt(sheet, row, col);
  let cell: Cell = previous ? { ...previous } : { v: null };
  if (mask.value) {
    const next = cellFromExtended(d.userEnteredValue, previous);
    if ('error' in next) throw invalid(`Invalid ${where}.userEnteredValue: ${next.error}`);
    cell = next;
  }
  if (mask.format) {
    const nf = d.userEnteredFormat?.numberFormat as { type?: unknown; pattern?: unknown } | undefined;
    if (nf === undefined || nf === null) delete cell.fmt;
    else {
      if (!NUMBER_FORMAT_TYPES.includes(nf.type as NumberFormatType))
        throw invalid(
          `Invalid value at '${where}.userEnteredFormat.numberFormat.type' (type.googleapis.com/google.apps.sheets.v4.NumberFormat.Type), ${JSON.stringify(nf.type)}`,
        );
      if (nf.pattern !== undefined && typeof nf.pattern !== 'string')
        throw invalid(`Invalid ${where}: userEnteredFormat.numberFormat.pattern must be a string.`);
      cell.fmt = {
        type: nf.type as NumberFormatType,
        ...(typeof nf.pattern === 'string' && nf.pattern ? { pattern: nf.pattern } : {}),
      };
    }
  }
  setCell(sheet, row, col, cell);
}

/** A GridRange in A1 notation for messages; unbounded sides run to the grid's edge. */
function gridLabel(sheet: SheetState, g: GridRange): string {
  return formatRange(sheet.title, {
    startRow: g.startRowIndex ?? 0,
    endRow: Math.max(g.endRowIndex ?? sheet.rows.length, (g.startRowIndex ?? 0) + 1),
    startCol: g.startColumnIndex ?? 0,
    endCol: Math.max(g.endColumnIndex ?? sheet.cols.length, (g.startColumnIndex ?? 0) + 1),
  });
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function totals(
  items: { updatedRows?: number; updatedColumns?: number; updatedCells?: number; sheet: SheetState }[],
) {
  const withData = items.filter((i) => i.updatedCells !== undefined);
  if (!withData.length) return {};
  return {
    totalUpdatedRows: withData.reduce((a, b) => a + (b.updatedRows ?? 0), 0),
    totalUpdatedColumns: maxOf(withData.map((b) => b.updatedColumns ?? 0)),
    totalUpdatedCells: withData.reduce((a, b) => a + (b.updatedCells ?? 0), 0),
    totalUpdatedSheets: new Set(withData.map((b) => b.sheet)).size,
  };
}

/** Values of a rectangle: trailing empty cells and rows omitted, inner empties as ''. */
export function readRect(
  sheet: SheetState,
  r0: number,
  r1: number,
  c0: number,
  c1: number,
  major: 'ROWS' | 'COLUMNS',
  render: ValueRenderOption,
  dateTime: DateTimeRenderOption,
): (string | number | boolean)[][] {
  const lines: (string | number | boolean)[][] = [];
  const [outerA, outerB, innerA, innerB] = major === 'ROWS' ? [r0, r1, c0, c1] : [c0, c1, r0, r1];
  for (let a = outerA; a < outerB; a++) {
    const line: (string | number | boolean | undefined)[] = [];
    for (let b = innerA; b < innerB; b++) {
      const cell = major === 'ROWS' ? cellAt(sheet, a, b) : cellAt(sheet, b, a);
      line.push(renderCell(cell, render, dateTime));
    }
    while (line.length && line[line.length - 1] === undefined) line.pop();
    lines.push(line.map((v) => (v === undefined ? '' : v)));
  }
  while (lines.length && (lines[lines.length - 1] as unknown[]).length === 0) lines.pop();
  return lines;
}

// Field masks: `a,b.c,d(e,f/g)`.
export type FieldMask = Map<string, FieldMask | true>;

export function parseFieldMask(text: string): FieldMask {
  let i = 0;
  const list = (): FieldMask => {
    const out: FieldMask = new Map();
    for (;;) {
      let name = '';
      const path: string[] = [];
      while (i < text.length && !',()'.includes(text[i] as string)) {
        const ch = text[i++] as string;
        if (ch === '.' || ch === '/') {
          path.push(name.trim());
          name = '';
        } else name += ch;
      }
      path.push(name.trim());
      let leaf: FieldMask | true = true;
      if (text[i] === '(') {
        i++;
        leaf = list();
        if (text[i] === ')') i++;
      }
      let node = out;
      for (const [k, part] of path.entries()) {
        if (!part) continue;
        if (k === path.length - 1) {
          const existing = node.get(part);
          node.set(
            part,
            existing instanceof Map && leaf instanceof Map
              ? new Map([...existing, ...leaf])
              : existing === true
                ? true
                : leaf,
          );
        } else {
          let next = node.get(part);
          if (next === true) break;
          if (!next) {
            next = new Map();
            node.set(part, next);
          }
          node = next;
        }
      }
      if (text[i] === ',') {
        i++;
        continue;
      }
      return out;
    }
  };
  return list();
}

export function applyFieldMask(value: unknown, mask: FieldMask): unknown {
  if (Array.isArray(value)) return value.map((v) => applyFieldMask(v, mask));
  if (!value || typeof value !== 'object') return value;
  if (mask.has('*')) return value;
  const out: Record<string, unknown> = {};
  for (const [k, sub] of mask) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out[k] = sub === true ? v : applyFieldMask(v, sub);
  }
  return out;
}

/** A small subset of Drive's query language: `mimeType = '...'`, `name contains '...'`, `name = '...'`, `trashed = false`, joined by `and`. */
function parseDriveQuery(
  q: string,
): ((f: { name: string; mimeType: string; trashed: boolean }) => boolean) | undefined {
  if (q.trim() === '') return () => true;
  const parts = q.split(/\s+and\s+/i);
  const tests: ((f: { name: string; mimeType: string; trashed: boolean }) => boolean)[] = [];
  for (const part of parts) {
    const m = /^\s*(mimeType|name|trashed)\s*(=|!=|contains)\s*(?:'((?:[^'\\]|\\.)*)'|(true|false))\s*$/.exec(
      part,
    );
    if (!m) return undefined;
    const [, field, op, str, bool] = m;
    const value = str !== undefined ? str.replace(/\\(.)/g, '$1') : bool === 'true';
    tests.push((f) => {
      const actual = field === 'mimeType' ? f.mimeType : field === 'name' ? f.name : f.trashed;
      if (op === 'contains')
        return typeof actual === 'string' && actual.toLowerCase().includes(String(value).toLowerCase());
      return op === '=' ? actual === value : actual !== value;
    });
  }
  return (f) => tests.every((t) => t(f));
}

// ---------------------------------------------------------------------------------------------
// Server

export type GoogleSheetsSimulatorServer = RunningServer & {
  state: GoogleSheetsState;
  faults: FaultInjector;
  requestLog: RequestLog;
};

export async function startGoogleSheetsServer(
  state: GoogleSheetsState,
): Promise<GoogleSheetsSimulatorServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const server = await startHttpServer({
    handler: (req) => state.handle(req),
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => state.rateLimitResponse(),
  });
  return { ...server, state, faults, requestLog };
}
