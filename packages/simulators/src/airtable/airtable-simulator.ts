/**
 * An in-memory simulator of Airtable's Web API, built from its public documentation
 * (airtable.com/developers/web/api). See README.md beside this file for what is supported.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
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
import {
  type AttachmentValue,
  choiceColor,
  choicesOf,
  defaultOptions,
  FIELD_TYPES,
  type FieldOptions,
  type FieldState,
  type FieldType,
  filenameFromUrl,
  guessMime,
  isEmptyCell,
  isNumberType,
  isTextType,
  READ_ONLY_TYPES,
  type SelectChoice,
} from './fields.ts';
import {
  evaluate,
  FormulaError,
  type FormulaNode,
  type FormulaValue,
  isTruthy,
  parseFormula,
  referencedFields,
} from './formula.ts';

// ---------------------------------------------------------------------------------------------
// Constants (from Airtable's docs)

export const MAX_PAGE_SIZE = 100;
export const MAX_RECORDS_PER_WRITE = 10;
export const RATE_LIMIT_PER_BASE_PER_SECOND = 5;
export const RATE_LIMIT_PER_TOKEN_PER_SECOND = 50;
export const RATE_LIMIT_PENALTY_MS = 30_000;
export const WEBHOOK_LIFETIME_MS = 7 * 24 * 3600 * 1000;
export const WEBHOOK_PAYLOAD_RETENTION_MS = 7 * 24 * 3600 * 1000;
export const WEBHOOK_PAYLOADS_PAGE_MAX = 50;
export const OAUTH_ACCESS_TOKEN_TTL_S = 3600;
/**
 * "Iteration may timeout due to client inactivity or server restarts. In that case, the client will
 * receive a 422 response with error message LIST_RECORDS_ITERATOR_NOT_AVAILABLE. It may then restart
 * iteration from the beginning." Airtable does not publish the timeout; the simulator expires an
 * offset after 5 minutes without a page read through it.
 */
export const DEFAULT_ITERATOR_TTL_MS = 5 * 60_000;
/** Airtable's attachment download URLs "stay active for at least 2 hours after receiving them". */
export const ATTACHMENT_URL_TTL_MS = 2 * 3600_000;
export const ATTACHMENT_URL_HOST = 'https://v5.airtableusercontent.com';
export const OAUTH_REFRESH_TOKEN_TTL_S = 5_270_400;

export const ALL_SCOPES = [
  'data.records:read',
  'data.records:write',
  'schema.bases:read',
  'schema.bases:write',
  'webhook:manage',
];

export const DEFAULT_TOKEN =
  'patSimulator00000.0000000000000000000000000000000000000000000000000000000000000000';

const INVALID_PERMISSIONS_MESSAGE =
  'Invalid permissions, or the requested model was not found. Check that both your user and your token have the required permissions, and that the model names and/or ids are correct.';
const PARAMETER_VALIDATION_MESSAGE = 'Invalid request: parameter validation failed. Check your request data.';

// ---------------------------------------------------------------------------------------------
// Errors

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(typeof body === 'object' ? JSON.stringify(body) : String(body));
  }
}

function apiError(status: number, type: string, message: string): ApiError {
  return new ApiError(status, { error: { type, message } });
}

const notFound = () => new ApiError(404, { error: 'NOT_FOUND' });
const invalidPermissions = () =>
  apiError(403, 'INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND', INVALID_PERMISSIONS_MESSAGE);
const invalidRequest = (message = PARAMETER_VALIDATION_MESSAGE) =>
  apiError(422, 'INVALID_REQUEST_UNKNOWN', message);

// ---------------------------------------------------------------------------------------------
// State

export type RecordState = {
  id: string;
  createdTime: number;
  lastModifiedTime: number;
  /** Per field: when its value last changed (for lastModifiedTime fields watching some fields). */
  fieldModified: Map<string, number>;
  cells: Map<string, unknown>;
  autoNumber: number;
};

export type ViewState = { id: string; name: string; type: 'grid' };

export type TableState = {
  id: string;
  name: string;
  description?: string;
  primaryFieldId: string;
  fields: FieldState[];
  views: ViewState[];
  records: Map<string, RecordState>;
  nextAutoNumber: number;
};

export type WebhookSpecification = {
  options: {
    filters: {
      dataTypes: string[];
      recordChangeScope?: string;
      fromSources?: string[];
      watchDataInFieldIds?: string[];
    };
    includes?: {
      includePreviousCellValues?: boolean;
      includeCellValuesInFieldIds?: string[] | 'all';
    };
  };
};

export type WebhookPayload = {
  timestamp: string;
  baseTransactionNumber: number;
  payloadFormat: 'v0';
  actionMetadata: { source: string; sourceMetadata: Record<string, unknown> };
  changedTablesById: Record<string, TablePayload>;
};

type TablePayload = {
  createdRecordsById?: Record<string, { createdTime: string; cellValuesByFieldId: Record<string, unknown> }>;
  changedRecordsById?: Record<
    string,
    {
      current: { cellValuesByFieldId: Record<string, unknown> };
      previous?: { cellValuesByFieldId: Record<string, unknown> };
      unchanged?: { cellValuesByFieldId: Record<string, unknown> };
    }
  >;
  destroyedRecordIds?: string[];
};

export type NotificationResult = {
  success: boolean;
  completionTimestamp: string;
  durationMs: number;
  retryNumber: number;
  error?: { message: string };
};

export type WebhookState = {
  id: string;
  baseId: string;
  notificationUrl: string | null;
  specification: WebhookSpecification;
  macSecretBase64: string;
  createdTime: number;
  expirationTime: number;
  areNotificationsEnabled: boolean;
  payloads: { number: number; at: number; payload: WebhookPayload }[];
  nextPayloadNumber: number;
  lastNotificationResult: NotificationResult | null;
  lastSuccessfulNotificationTime: string | null;
  /** The token that created it (OAuth integrations only see their own webhooks). */
  createdBy: string;
};

export type BaseState = {
  id: string;
  name: string;
  permissionLevel: 'none' | 'read' | 'comment' | 'edit' | 'create';
  tables: TableState[];
  transactionNumber: number;
  webhooks: Map<string, WebhookState>;
};

type Iterator = { tableId: string; ids: string[]; createdAt: number; lastUsedAt: number };

type OAuthClient = { clientId: string; clientSecret?: string; redirectUris: string[] };

type AuthCode = {
  code: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  challenge: string;
  expiresAt: number;
  used: boolean;
};

type RefreshToken = { token: string; clientId: string; scope: string; expiresAt: number; used: boolean };

export type ChangeSource = 'publicApi' | 'client';

// ---------------------------------------------------------------------------------------------
// Definitions used to build bases (seed data, tests)

export type FieldDef = {
  name: string;
  type: FieldType;
  description?: string;
  /**
   * Metadata options. For multipleRecordLinks give `{ linkedTable: 'Table name', inverseName?: 'Field' }`;
   * the inverse field is created on the linked table. For singleSelect/multipleSelects, `choices` may be
   * plain names. For formula, `{ formula: '...', resultType?: 'singleLineText' }`.
   */
  options?: FieldOptions;
};

export type TableDef = { name: string; description?: string; fields: FieldDef[] };

export type BaseDef = { name: string; id?: string; tables: TableDef[] };

// ---------------------------------------------------------------------------------------------

export type RateLimitOptions = {
  perBasePerSecond?: number;
  perTokenPerSecond?: number;
  penaltyMs?: number;
};

export type AirtableSimulatorOptions = {
  clock?: Clock;
  /** Seed for reproducible ids. */
  idSeed?: number;
  /** Extra tokens; DEFAULT_TOKEN (all scopes, all bases) is always registered unless `defaultToken: false`. */
  tokens?: { token: string; scopes?: string[]; bases?: string[] }[];
  defaultToken?: boolean;
  /** `false` turns the per-base and per-token limits off. */
  rateLimit?: false | RateLimitOptions;
  oauthClients?: OAuthClient[];
  /**
   * List-records iterators (offsets) expire after this long without use (client inactivity), with
   * 422 LIST_RECORDS_ITERATOR_NOT_AVAILABLE; default DEFAULT_ITERATOR_TTL_MS (5 minutes); false = never.
   */
  iteratorTtlMs?: number | false;
  /**
   * How attachment URLs read back. 'rehosted' (Airtable since November 2022): a signed
   * v5.airtableusercontent.com URL that expires 2 to 3 hours after the read, signed anew as time
   * passes; 'original': the URL that was written.
   */
  attachmentUrls?: 'rehosted' | 'original';
  /** Used to deliver webhook notification pings. */
  fetch?: typeof fetch;
};

/** Types create field and create table take here (Airtable's computed types are not created by API here). */
const CREATABLE_TYPES: ReadonlySet<FieldType> = new Set<FieldType>([
  'singleLineText',
  'multilineText',
  'email',
  'url',
  'phoneNumber',
  'number',
  'currency',
  'percent',
  'checkbox',
  'singleSelect',
  'multipleSelects',
  'date',
  'dateTime',
  'multipleAttachments',
]);

/** Types a table's primary field may have (of those created here). */
const PRIMARY_FIELD_TYPES: ReadonlySet<FieldType> = new Set<FieldType>([
  'singleLineText',
  'multilineText',
  'email',
  'url',
  'phoneNumber',
  'number',
  'currency',
  'percent',
  'date',
  'dateTime',
]);

const DATE_FORMATS: Record<string, string> = {
  local: 'l',
  friendly: 'LL',
  us: 'M/D/YYYY',
  european: 'D/M/YYYY',
  iso: 'YYYY-MM-DD',
};
/** A written dateFormat as Airtable reads it back: its name with the format it stands for. */
function completeDateFormat(d: unknown) {
  const name = String((d as { name?: unknown }).name);
  return { name, format: DATE_FORMATS[name] ?? 'YYYY-MM-DD' };
}
function completeTimeFormat(t: unknown) {
  const name = String((t as { name?: unknown }).name);
  return { name, format: name === '12hour' ? 'h:mma' : 'HH:mm' };
}

export class AirtableState {
  readonly bases: BaseState[] = [];
  readonly tokens: TokenRegistry;
  readonly clock: Clock;
  private readonly random: () => number;
  private readonly iterators = new Map<string, Iterator>();
  private readonly hits = new Map<string, number[]>();
  private readonly limitedUntil = new Map<string, number>();
  private readonly oauthClients = new Map<string, OAuthClient>();
  private readonly authCodes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<string, RefreshToken>();
  private readonly deliveries = new Set<Promise<void>>();
  private readonly fetchImpl: typeof fetch;
  readonly rateLimit: Required<RateLimitOptions> | false;
  readonly iteratorTtlMs: number | false;
  readonly attachmentUrls: 'rehosted' | 'original';
  readonly userId: string;

  constructor(options: AirtableSimulatorOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.tokens = new TokenRegistry(this.clock);
    this.fetchImpl = options.fetch ?? fetch;
    this.iteratorTtlMs = options.iteratorTtlMs ?? DEFAULT_ITERATOR_TTL_MS;
    this.attachmentUrls = options.attachmentUrls ?? 'rehosted';
    this.rateLimit =
      options.rateLimit === false
        ? false
        : {
            perBasePerSecond: options.rateLimit?.perBasePerSecond ?? RATE_LIMIT_PER_BASE_PER_SECOND,
            perTokenPerSecond: options.rateLimit?.perTokenPerSecond ?? RATE_LIMIT_PER_TOKEN_PER_SECOND,
            penaltyMs: options.rateLimit?.penaltyMs ?? RATE_LIMIT_PENALTY_MS,
          };
    this.userId = this.newId('usr');
    if (options.defaultToken !== false) {
      this.tokens.add({ token: DEFAULT_TOKEN, scopes: [...ALL_SCOPES], kind: 'pat', userId: this.userId });
    }
    for (const t of options.tokens ?? []) {
      this.tokens.add({
        token: t.token,
        scopes: t.scopes ?? [...ALL_SCOPES],
        ...(t.bases ? { bases: t.bases } : {}),
        kind: 'pat',
        userId: this.userId,
      });
    }
    for (const c of options.oauthClients ?? [{ clientId: 'lockstep-simulator-client', redirectUris: [] }]) {
      this.oauthClients.set(c.clientId, c);
    }
  }

  /** Airtable ids: a 3-letter prefix and 14 alphanumerics (17 characters). */
  newId(prefix: string): string {
    return prefix + randomAlphanumeric(14, this.random);
  }

  /** Record times have whole-second precision, as Airtable's do. */
  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000) * 1000;
  }

  // -------------------------------------------------------------------------------------------
  // Schema

  addBase(def: BaseDef): BaseState {
    const base: BaseState = {
      id: def.id ?? this.newId('app'),
      name: def.name,
      permissionLevel: 'create',
      tables: [],
      transactionNumber: 0,
      webhooks: new Map(),
    };
    this.bases.push(base);
    const pendingLinks: { table: TableState; field: FieldState; def: FieldDef }[] = [];
    for (const t of def.tables) {
      const table: TableState = {
        id: this.newId('tbl'),
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        primaryFieldId: '',
        fields: [],
        views: [{ id: this.newId('viw'), name: 'Grid view', type: 'grid' }],
        records: new Map(),
        nextAutoNumber: 1,
      };
      for (const f of t.fields) {
        const field = this.buildField(f);
        table.fields.push(field);
        if (f.type === 'multipleRecordLinks') pendingLinks.push({ table, field, def: f });
      }
      const first = table.fields[0];
      if (!first) throw new Error(`Table ${t.name} needs at least one field`);
      table.primaryFieldId = first.id;
      base.tables.push(table);
    }
    for (const { table, field, def: f } of pendingLinks) {
      if (field.options?.linkedTableId) continue; // already wired as the inverse of another link
      const linkedName = String(f.options?.linkedTable ?? '');
      const linked = base.tables.find((x) => x.name === linkedName || x.id === linkedName);
      if (!linked) throw new Error(`Link field ${f.name}: no table ${linkedName}`);
      const single = f.options?.prefersSingleRecordLink === true;
      const inverseName = f.options?.inverseName === undefined ? table.name : String(f.options.inverseName);
      let inverse: FieldState | undefined;
      if (linked !== table) {
        inverse = linked.fields.find((x) => x.name === inverseName);
        if (!inverse) {
          inverse = { id: this.newId('fld'), name: inverseName, type: 'multipleRecordLinks' };
          linked.fields.push(inverse);
        }
        inverse.options = {
          linkedTableId: table.id,
          isReversed: false,
          prefersSingleRecordLink: f.options?.inversePrefersSingleRecordLink === true,
          inverseLinkFieldId: field.id,
        };
      }
      field.options = {
        linkedTableId: linked.id,
        isReversed: false,
        prefersSingleRecordLink: single,
        ...(inverse ? { inverseLinkFieldId: inverse.id } : {}),
      };
    }
    // Formula fields: record referenced field ids now that every field exists.
    for (const table of base.tables) {
      for (const field of table.fields) {
        if (field.type !== 'formula') continue;
        const formula = String(field.options?.formula ?? '');
        const referenced = new Set<string>();
        try {
          for (const name of referencedFields(parseFormula(formula))) {
            const ref = table.fields.find((x) => x.name === name || x.id === name);
            if (ref) referenced.add(ref.id);
          }
          field.options = { ...field.options, isValid: true, referencedFieldIds: [...referenced] };
        } catch {
          field.options = { ...field.options, isValid: false, referencedFieldIds: [] };
        }
      }
    }
    return base;
  }

  private buildField(f: FieldDef): FieldState {
    if (!FIELD_TYPES.includes(f.type)) throw new Error(`Unsupported field type ${f.type}`);
    const field: FieldState = { id: this.newId('fld'), name: f.name, type: f.type };
    if (f.description) field.description = f.description;
    const defaults = defaultOptions(f.type);
    let options: FieldOptions | undefined = defaults || f.options ? { ...defaults, ...f.options } : undefined;
    if ((f.type === 'singleSelect' || f.type === 'multipleSelects') && options) {
      const raw = Array.isArray(options.choices) ? (options.choices as (string | SelectChoice)[]) : [];
      options = {
        ...options,
        choices: raw.map((c, i) =>
          typeof c === 'string' ? { id: this.newId('sel'), name: c, color: choiceColor(i) } : c,
        ),
      };
    }
    if (f.type === 'formula') {
      const resultType = String(f.options?.resultType ?? 'singleLineText');
      options = { formula: String(f.options?.formula ?? ''), result: { type: resultType } };
    }
    if (f.type === 'multipleRecordLinks') options = undefined; // wired in addBase
    if (options) field.options = options;
    return field;
  }

  getBase(baseId: string): BaseState | undefined {
    return this.bases.find((b) => b.id === baseId);
  }

  findBase(idOrName: string): BaseState {
    const base = this.bases.find((b) => b.id === idOrName || b.name === idOrName);
    if (!base) throw new Error(`No base ${idOrName}`);
    return base;
  }

  findTable(base: BaseState, idOrName: string): TableState | undefined {
    return base.tables.find((t) => t.id === idOrName) ?? base.tables.find((t) => t.name === idOrName);
  }

  table(baseIdOrName: string, tableIdOrName: string): TableState {
    const table = this.findTable(this.findBase(baseIdOrName), tableIdOrName);
    if (!table) throw new Error(`No table ${tableIdOrName}`);
    return table;
  }

  private fieldByKey(table: TableState, key: string): FieldState | undefined {
    return table.fields.find((f) => f.id === key) ?? table.fields.find((f) => f.name === key);
  }

  private tableById(base: BaseState, id: string): TableState {
    const t = base.tables.find((x) => x.id === id);
    if (!t) throw new Error(`No table ${id}`);
    return t;
  }

  // -------------------------------------------------------------------------------------------
  // Reading records

  /** A cell value as the API returns it (computed fields evaluated). */
  readCell(base: BaseState, table: TableState, rec: RecordState, field: FieldState, depth = 0): unknown {
    switch (field.type) {
      case 'createdTime':
        return new Date(rec.createdTime).toISOString();
      case 'lastModifiedTime': {
        const watched = (field.options?.referencedFieldIds as string[] | undefined) ?? [];
        if (watched.length === 0) return new Date(rec.lastModifiedTime).toISOString();
        const times = watched
          .map((id) => rec.fieldModified.get(id))
          .filter((t): t is number => t !== undefined);
        return times.length ? new Date(Math.max(...times)).toISOString() : null;
      }
      case 'autoNumber':
        return rec.autoNumber;
      case 'multipleAttachments': {
        const stored = rec.cells.get(field.id) as AttachmentValue[] | undefined;
        return stored && this.attachmentUrls === 'rehosted' ? stored.map((a) => this.rehosted(a)) : stored;
      }
      case 'formula': {
        if (depth > 5) return { error: '#ERROR!' };
        try {
          const v = evaluate(
            parseFormula(String(field.options?.formula ?? '')),
            this.formulaContext(base, table, rec, depth + 1),
          );
          if (v instanceof Date) return v.toISOString();
          if (typeof v === 'boolean') return v ? 1 : 0;
          if (typeof v === 'number' && Number.isNaN(v)) return { specialValue: 'NaN' };
          return v;
        } catch {
          return { error: '#ERROR!' };
        }
      }
      default:
        return rec.cells.get(field.id);
    }
  }

  /**
   * An attachment as Airtable serves it: re-hosted on airtableusercontent.com behind a signed URL
   * that expires at least 2 hours after the read (here: 2 hours, rounded up to the next hour), so a
   * later read returns another URL for the same attachment.
   */
  private rehosted(a: AttachmentValue): AttachmentValue {
    const hour = 3600_000;
    const expires = Math.ceil((this.clock.now() + ATTACHMENT_URL_TTL_MS) / hour) * hour;
    const sig = createHmac('sha256', 'lockstep-simulator')
      .update(`${a.id}:${a.url}:${expires}`)
      .digest('base64url')
      .slice(0, 22);
    return {
      ...a,
      url: `${ATTACHMENT_URL_HOST}/v3/u/1/1/${expires}/${sig}/${a.id}/${encodeURIComponent(a.filename)}`,
    };
  }

  /** The URL an attachment was written with (what `attachmentUrls: 'original'` reads back). */
  attachmentSource(baseIdOrName: string, tableIdOrName: string, recordId: string, attachmentId: string) {
    const table = this.table(baseIdOrName, tableIdOrName);
    for (const v of table.records.get(recordId)?.cells.values() ?? []) {
      if (!Array.isArray(v)) continue;
      const hit = (v as AttachmentValue[]).find((a) => typeof a === 'object' && a?.id === attachmentId);
      if (hit) return hit.url;
    }
    return undefined;
  }

  private formulaValue(
    base: BaseState,
    table: TableState,
    rec: RecordState,
    field: FieldState,
    depth: number,
  ): FormulaValue {
    const v = this.readCell(base, table, rec, field, depth);
    if (v === undefined || v === null) return null;
    switch (field.type) {
      case 'date':
      case 'dateTime':
      case 'createdTime':
      case 'lastModifiedTime':
        return new Date(String(v));
      case 'multipleSelects':
        return (v as string[]).join(', ');
      case 'multipleRecordLinks': {
        const linked = this.tableById(base, String(field.options?.linkedTableId));
        const primary = linked.fields.find((f) => f.id === linked.primaryFieldId)!;
        return (v as string[])
          .map((id) => {
            const r = linked.records.get(id);
            return r ? String(this.readCell(base, linked, r, primary, depth + 1) ?? '') : '';
          })
          .join(', ');
      }
      case 'multipleAttachments':
        return (v as AttachmentValue[]).map((a) => `${a.filename} (${a.url})`).join(', ');
      default:
        if (typeof v === 'object') return JSON.stringify(v);
        return v as FormulaValue;
    }
  }

  private formulaContext(base: BaseState, table: TableState, rec: RecordState, depth = 0) {
    return {
      field: (key: string): FormulaValue => {
        const f = this.fieldByKey(table, key);
        if (!f) throw new FormulaError(`Unknown field names: ${key}`);
        return this.formulaValue(base, table, rec, f, depth);
      },
      recordId: rec.id,
      createdTime: rec.createdTime,
      lastModifiedTime: rec.lastModifiedTime,
      now: this.clock.now(),
    };
  }

  renderRecord(
    base: BaseState,
    table: TableState,
    rec: RecordState,
    opts: { byId?: boolean; only?: Set<string> } = {},
  ): { id: string; createdTime: string; fields: Record<string, unknown> } {
    const fields: Record<string, unknown> = {};
    for (const f of table.fields) {
      if (opts.only && !opts.only.has(f.id)) continue;
      const v = this.readCell(base, table, rec, f);
      if (isEmptyCell(v)) continue;
      fields[opts.byId ? f.id : f.name] = v;
    }
    return { id: rec.id, createdTime: new Date(rec.createdTime).toISOString(), fields };
  }

  // -------------------------------------------------------------------------------------------
  // Writing records (one transaction per API request or out-of-band edit)

  private coerce(
    base: BaseState,
    field: FieldState,
    value: unknown,
    typecast: boolean,
    tx: Transaction,
    rec: RecordState | undefined,
  ): unknown {
    if (READ_ONLY_TYPES.has(field.type)) {
      throw apiError(
        422,
        'INVALID_VALUE_FOR_COLUMN',
        `Field "${field.name}" cannot accept a value because the field is computed`,
      );
    }
    const cannot = () =>
      apiError(422, 'INVALID_VALUE_FOR_COLUMN', `Field "${field.name}" cannot accept the provided value`);
    if (value === null || value === undefined) return undefined;
    const t = field.type;

    if (isTextType(t)) {
      if (typeof value === 'string') return value === '' ? undefined : value;
      if (typecast && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
      throw cannot();
    }
    if (isNumberType(t)) {
      let n: number;
      if (typeof value === 'number') n = value;
      else if (typecast && typeof value === 'string') {
        if (value.trim() === '') return undefined;
        n = Number(value.replace(/[$,%\s]/g, ''));
        if (Number.isNaN(n)) throw cannot();
        if (t === 'percent' && value.includes('%')) n /= 100;
      } else throw cannot();
      if (!Number.isFinite(n)) throw cannot();
      const precision = Number(field.options?.precision ?? 0) + (t === 'percent' ? 2 : 0);
      const factor = 10 ** precision;
      return Math.round(n * factor) / factor;
    }
    if (t === 'checkbox') {
      if (typeof value === 'boolean') return value ? true : undefined;
      if (typecast) {
        const s = String(value).trim().toLowerCase();
        return ['true', '1', 'yes', 'y', 'checked', 'x', 'on'].includes(s) ? true : undefined;
      }
      throw cannot();
    }
    if (t === 'singleSelect') {
      if (typeof value !== 'string') throw cannot();
      if (value === '') return undefined;
      return this.choose(field, value, typecast, tx);
    }
    if (t === 'multipleSelects') {
      let names: unknown[];
      if (Array.isArray(value)) names = value;
      else if (typecast && typeof value === 'string') names = value.split(',').map((s) => s.trim());
      else throw cannot();
      const out: string[] = [];
      for (const n of names) {
        if (typeof n !== 'string') throw cannot();
        if (n === '') continue;
        const name = this.choose(field, n, typecast, tx);
        if (!out.includes(name)) out.push(name);
      }
      return out.length ? out : undefined;
    }
    if (t === 'date' || t === 'dateTime') {
      if (typeof value !== 'string') throw cannot();
      if (value === '') return undefined;
      const strict = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(
        value,
      );
      const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00.000Z` : value);
      if ((!strict && !typecast) || Number.isNaN(d.getTime())) throw cannot();
      return t === 'date' ? d.toISOString().slice(0, 10) : d.toISOString();
    }
    if (t === 'multipleRecordLinks') {
      const linked = this.tableById(base, String(field.options?.linkedTableId));
      let items: unknown[];
      if (Array.isArray(value)) items = value;
      else if (typecast && typeof value === 'string') items = [value];
      else throw apiError(422, 'INVALID_VALUE_FOR_COLUMN', 'Value is not an array of record IDs.');
      const out: string[] = [];
      for (const item of items) {
        const id = this.resolveLink(base, linked, item, typecast, tx);
        if (!out.includes(id)) out.push(id);
      }
      return out.length ? out : undefined;
    }
    if (t === 'multipleAttachments') {
      if (!Array.isArray(value)) throw cannot();
      const existing = (rec?.cells.get(field.id) as AttachmentValue[] | undefined) ?? [];
      const out: AttachmentValue[] = [];
      for (const a of value) {
        if (typeof a !== 'object' || a === null) throw cannot();
        const att = a as { id?: unknown; url?: unknown; filename?: unknown };
        if (typeof att.id === 'string' && att.url === undefined) {
          const kept = existing.find((x) => x.id === att.id);
          if (!kept) throw cannot();
          out.push(kept);
          continue;
        }
        if (typeof att.url !== 'string' || !/^https?:\/\//.test(att.url)) throw cannot();
        const filename = typeof att.filename === 'string' ? att.filename : filenameFromUrl(att.url);
        out.push({ id: this.newId('att'), url: att.url, filename, size: 0, type: guessMime(filename) });
      }
      return out.length ? out : undefined;
    }
    throw cannot();
  }

  private choose(field: FieldState, name: string, typecast: boolean, tx: Transaction): string {
    const choices = choicesOf(field);
    const hit = choices.find((c) => c.name === name) ?? choices.find((c) => c.id === name);
    if (hit) return hit.name;
    if (!typecast) {
      throw apiError(
        422,
        'INVALID_MULTIPLE_CHOICE_OPTIONS',
        `Insufficient permissions to create new select option ""${name}""`,
      );
    }
    tx.onRollback(() => {
      field.options = { ...field.options, choices: choicesOf(field).filter((c) => c.name !== name) };
    });
    field.options = {
      ...field.options,
      choices: [...choices, { id: this.newId('sel'), name, color: choiceColor(choices.length) }],
    };
    return name;
  }

  private resolveLink(
    base: BaseState,
    linked: TableState,
    item: unknown,
    typecast: boolean,
    tx: Transaction,
  ): string {
    if (typeof item === 'string' && linked.records.has(item)) return item;
    if (typeof item === 'string' && /^rec[A-Za-z0-9]{14}$/.test(item) && !typecast) {
      throw apiError(422, 'ROW_DOES_NOT_EXIST', `Record ID ${item} does not exist in this table`);
    }
    if (!typecast || typeof item !== 'string') {
      throw apiError(422, 'INVALID_VALUE_FOR_COLUMN', 'Value is not an array of record IDs.');
    }
    // typecast: match the linked table's primary field, creating a record when none matches.
    const primary = linked.fields.find((f) => f.id === linked.primaryFieldId)!;
    for (const r of linked.records.values()) {
      if (String(this.readCell(base, linked, r, primary) ?? '') === item) return r.id;
    }
    const created = this.insertRecord(base, linked, { [primary.id]: item }, true, tx);
    return created.id;
  }

  private newRecord(table: TableState, at: number): RecordState {
    return {
      id: this.newId('rec'),
      createdTime: at,
      lastModifiedTime: at,
      fieldModified: new Map(),
      cells: new Map(),
      autoNumber: table.nextAutoNumber++,
    };
  }

  /** Validate and convert a `fields` object to stored cells keyed by field id. */
  private convertFields(
    base: BaseState,
    table: TableState,
    fields: unknown,
    typecast: boolean,
    tx: Transaction,
    rec: RecordState | undefined,
  ): Map<string, unknown> {
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw invalidRequest();
    const out = new Map<string, unknown>();
    for (const [key, value] of Object.entries(fields)) {
      const field = this.fieldByKey(table, key);
      if (!field) throw apiError(422, 'UNKNOWN_FIELD_NAME', `Unknown field name: "${key}"`);
      out.set(field.id, this.coerce(base, field, value, typecast, tx, rec));
    }
    return out;
  }

  private insertRecord(
    base: BaseState,
    table: TableState,
    fields: unknown,
    typecast: boolean,
    tx: Transaction,
    at?: number,
  ): RecordState {
    const rec = this.newRecord(table, at ?? this.nowSeconds());
    tx.touch(table, rec.id, undefined);
    table.records.set(rec.id, rec);
    tx.onRollback(() => table.records.delete(rec.id));
    const cells = this.convertFields(base, table, fields, typecast, tx, undefined);
    for (const [fieldId, v] of cells) this.setCell(base, table, rec, fieldId, v, tx);
    return rec;
  }

  private setCell(
    base: BaseState,
    table: TableState,
    rec: RecordState,
    fieldId: string,
    v: unknown,
    tx: Transaction,
  ): void {
    const field = table.fields.find((f) => f.id === fieldId)!;
    tx.touch(table, rec.id, rec);
    if (field.type === 'multipleRecordLinks') {
      const before = (rec.cells.get(fieldId) as string[] | undefined) ?? [];
      const after = (v as string[] | undefined) ?? [];
      const inverseId = field.options?.inverseLinkFieldId as string | undefined;
      if (inverseId) {
        const linked = this.tableById(base, String(field.options?.linkedTableId));
        for (const id of before.filter((x) => !after.includes(x))) {
          const other = linked.records.get(id);
          if (!other) continue;
          tx.touch(linked, other.id, other);
          const list = ((other.cells.get(inverseId) as string[] | undefined) ?? []).filter(
            (x) => x !== rec.id,
          );
          this.storeCell(other, inverseId, list.length ? list : undefined);
        }
        for (const id of after.filter((x) => !before.includes(x))) {
          const other = linked.records.get(id);
          if (!other) continue;
          tx.touch(linked, other.id, other);
          const list = (other.cells.get(inverseId) as string[] | undefined) ?? [];
          if (!list.includes(rec.id)) this.storeCell(other, inverseId, [...list, rec.id]);
        }
      }
    }
    this.storeCell(rec, fieldId, v);
  }

  private storeCell(rec: RecordState, fieldId: string, v: unknown): void {
    if (isEmptyCell(v)) rec.cells.delete(fieldId);
    else rec.cells.set(fieldId, v);
  }

  private updateRecordCells(
    base: BaseState,
    table: TableState,
    rec: RecordState,
    fields: unknown,
    typecast: boolean,
    destructive: boolean,
    tx: Transaction,
  ): void {
    tx.touch(table, rec.id, rec);
    const cells = this.convertFields(base, table, fields, typecast, tx, rec);
    if (destructive) {
      for (const f of table.fields) {
        if (READ_ONLY_TYPES.has(f.type) || cells.has(f.id)) continue;
        this.setCell(base, table, rec, f.id, undefined, tx);
      }
    }
    for (const [fieldId, v] of cells) this.setCell(base, table, rec, fieldId, v, tx);
  }

  private destroyRecord(base: BaseState, table: TableState, rec: RecordState, tx: Transaction): void {
    for (const f of table.fields) {
      if (f.type === 'multipleRecordLinks' && rec.cells.has(f.id))
        this.setCell(base, table, rec, f.id, undefined, tx);
    }
    tx.touch(table, rec.id, rec);
    table.records.delete(rec.id);
    tx.onRollback(() => table.records.set(rec.id, rec));
  }

  /** Run a write as one base transaction: all or nothing, then webhook payloads. */
  transact<T>(base: BaseState, source: ChangeSource, fn: (tx: Transaction) => T): T {
    const tx = new Transaction();
    let result: T;
    try {
      result = fn(tx);
    } catch (err) {
      tx.rollback();
      throw err;
    }
    this.commit(base, tx, source);
    return result;
  }

  private commit(base: BaseState, tx: Transaction, source: ChangeSource): void {
    const now = this.nowSeconds();
    const changes: Change[] = [];
    for (const touched of tx.touched.values()) {
      const table = touched.table;
      const rec = table.records.get(touched.recordId);
      if (!touched.before && rec) {
        for (const id of rec.cells.keys()) rec.fieldModified.set(id, rec.createdTime);
        changes.push({ kind: 'create', table, rec });
        continue;
      }
      if (touched.before && !rec) {
        changes.push({ kind: 'destroy', table, recordId: touched.recordId });
        continue;
      }
      if (!touched.before || !rec) continue;
      const changed: string[] = [];
      const fieldIds = new Set([...touched.before.keys(), ...rec.cells.keys()]);
      for (const id of fieldIds) {
        if (JSON.stringify(touched.before.get(id)) !== JSON.stringify(rec.cells.get(id))) changed.push(id);
      }
      if (changed.length === 0) continue;
      rec.lastModifiedTime = now;
      for (const id of changed) rec.fieldModified.set(id, now);
      changes.push({ kind: 'update', table, rec, changedFieldIds: changed, before: touched.before });
    }
    if (changes.length === 0) return;
    base.transactionNumber += 1;
    this.emitPayloads(base, changes, source);
  }

  // Out-of-band edits, as if a person changed the base in Airtable's UI (webhook source 'client').

  createRecord(
    baseIdOrName: string,
    tableIdOrName: string,
    fields: Record<string, unknown>,
    opts: { typecast?: boolean; at?: number } = {},
  ) {
    const base = this.findBase(baseIdOrName);
    const table = this.table(base.id, tableIdOrName);
    const rec = this.transact(base, 'client', (tx) =>
      this.insertRecord(
        base,
        table,
        fields,
        opts.typecast ?? true,
        tx,
        opts.at === undefined ? undefined : Math.floor(opts.at / 1000) * 1000,
      ),
    );
    return this.renderRecord(base, table, rec);
  }

  updateRecord(
    baseIdOrName: string,
    tableIdOrName: string,
    recordId: string,
    fields: Record<string, unknown>,
    opts: { typecast?: boolean } = {},
  ) {
    const base = this.findBase(baseIdOrName);
    const table = this.table(base.id, tableIdOrName);
    const rec = table.records.get(recordId);
    if (!rec) throw new Error(`No record ${recordId}`);
    this.transact(base, 'client', (tx) =>
      this.updateRecordCells(base, table, rec, fields, opts.typecast ?? true, false, tx),
    );
    return this.renderRecord(base, table, rec);
  }

  /** A person deletes a field in Airtable's UI: it leaves the schema and every record. */
  deleteField(baseIdOrName: string, tableIdOrName: string, fieldIdOrName: string): void {
    const base = this.findBase(baseIdOrName);
    const table = this.table(base.id, tableIdOrName);
    const at = table.fields.findIndex((f) => f.id === fieldIdOrName || f.name === fieldIdOrName);
    const field = table.fields[at];
    if (!field) throw new Error(`No field ${fieldIdOrName}`);
    if (field.id === table.primaryFieldId) throw new Error('The primary field cannot be deleted');
    table.fields.splice(at, 1);
    for (const rec of table.records.values()) rec.cells.delete(field.id);
  }

  deleteRecord(baseIdOrName: string, tableIdOrName: string, recordId: string): void {
    const base = this.findBase(baseIdOrName);
    const table = this.table(base.id, tableIdOrName);
    const rec = table.records.get(recordId);
    if (!rec) throw new Error(`No record ${recordId}`);
    this.transact(base, 'client', (tx) => this.destroyRecord(base, table, rec, tx));
  }

  getRecord(baseIdOrName: string, tableIdOrName: string, recordId: string, opts: { byId?: boolean } = {}) {
    const base = this.findBase(baseIdOrName);
    const table = this.table(base.id, tableIdOrName);
    const rec = table.records.get(recordId);
    return rec ? this.renderRecord(base, table, rec, opts) : undefined;
  }

  listRecords(baseIdOrName: string, tableIdOrName: string, opts: { byId?: boolean } = {}) {
    const base = this.findBase(baseIdOrName);
    const table = this.table(base.id, tableIdOrName);
    return [...table.records.values()].map((r) => this.renderRecord(base, table, r, opts));
  }

  // -------------------------------------------------------------------------------------------
  // Webhooks

  private emitPayloads(base: BaseState, changes: Change[], source: ChangeSource): void {
    const now = this.clock.now();
    for (const hook of base.webhooks.values()) {
      if (now >= hook.expirationTime) continue;
      const { filters, includes } = hook.specification.options;
      if (!filters.dataTypes.includes('tableData')) continue;
      if (filters.fromSources && !filters.fromSources.includes(source)) continue;
      const byTable: Record<string, TablePayload> = {};
      for (const c of changes) {
        if (filters.recordChangeScope && filters.recordChangeScope !== c.table.id) continue;
        byTable[c.table.id] ??= {};
        const tp = byTable[c.table.id]!;
        if (c.kind === 'create') {
          if (filters.watchDataInFieldIds && !filters.watchDataInFieldIds.some((id) => c.rec.cells.has(id)))
            continue;
          tp.createdRecordsById ??= {};
          tp.createdRecordsById[c.rec.id] = {
            createdTime: new Date(c.rec.createdTime).toISOString(),
            cellValuesByFieldId: this.cellsById(base, c.table, c.rec),
          };
        } else if (c.kind === 'destroy') {
          tp.destroyedRecordIds ??= [];
          tp.destroyedRecordIds.push(c.recordId);
        } else {
          const watched = filters.watchDataInFieldIds;
          if (watched && !c.changedFieldIds.some((id) => watched.includes(id))) continue;
          const current: Record<string, unknown> = {};
          const previous: Record<string, unknown> = {};
          for (const id of c.changedFieldIds) {
            const field = c.table.fields.find((f) => f.id === id);
            if (!field) continue;
            current[id] = nullIfEmpty(this.readCell(base, c.table, c.rec, field));
            const was = c.before.get(id);
            previous[id] = nullIfEmpty(
              field.type === 'multipleAttachments' && this.attachmentUrls === 'rehosted' && Array.isArray(was)
                ? (was as AttachmentValue[]).map((a) => this.rehosted(a))
                : was,
            );
          }
          const entry: NonNullable<TablePayload['changedRecordsById']>[string] = {
            current: { cellValuesByFieldId: current },
          };
          if (includes?.includePreviousCellValues) entry.previous = { cellValuesByFieldId: previous };
          const extra = includes?.includeCellValuesInFieldIds;
          if (extra) {
            const unchanged: Record<string, unknown> = {};
            for (const f of c.table.fields) {
              if (c.changedFieldIds.includes(f.id)) continue;
              if (extra !== 'all' && !extra.includes(f.id)) continue;
              unchanged[f.id] = nullIfEmpty(this.readCell(base, c.table, c.rec, f));
            }
            entry.unchanged = { cellValuesByFieldId: unchanged };
          }
          tp.changedRecordsById ??= {};
          tp.changedRecordsById[c.rec.id] = entry;
        }
      }
      for (const [id, tp] of Object.entries(byTable)) {
        if (!tp.createdRecordsById && !tp.changedRecordsById && !tp.destroyedRecordIds) delete byTable[id];
      }
      if (Object.keys(byTable).length === 0) continue;
      const payload: WebhookPayload = {
        timestamp: new Date(now).toISOString(),
        baseTransactionNumber: base.transactionNumber,
        payloadFormat: 'v0',
        actionMetadata: {
          source,
          sourceMetadata:
            source === 'publicApi'
              ? {
                  user: {
                    id: this.userId,
                    email: 'api@example.com',
                    permissionLevel: 'create',
                    name: 'API user',
                  },
                }
              : {
                  user: {
                    id: this.userId,
                    email: 'person@example.com',
                    permissionLevel: 'create',
                    name: 'Simulated person',
                  },
                },
        },
        changedTablesById: byTable,
      };
      hook.payloads.push({ number: hook.nextPayloadNumber++, at: now, payload });
      this.prunePayloads(hook);
      if (hook.notificationUrl && hook.areNotificationsEnabled) this.notify(base, hook);
    }
  }

  private cellsById(base: BaseState, table: TableState, rec: RecordState): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const f of table.fields) {
      const v = this.readCell(base, table, rec, f);
      if (!isEmptyCell(v)) out[f.id] = v;
    }
    return out;
  }

  private prunePayloads(hook: WebhookState): void {
    const cutoff = this.clock.now() - WEBHOOK_PAYLOAD_RETENTION_MS;
    while (hook.payloads.length && hook.payloads[0]!.at < cutoff) hook.payloads.shift();
  }

  /** The body and MAC header Airtable sends to a webhook's notificationUrl. */
  notificationFor(base: BaseState, hook: WebhookState): { body: string; mac: string } {
    const body = JSON.stringify({
      base: { id: base.id },
      webhook: { id: hook.id },
      timestamp: new Date(this.clock.now()).toISOString(),
    });
    const mac = `hmac-sha256=${createHmac('sha256', Buffer.from(hook.macSecretBase64, 'base64')).update(body, 'utf8').digest('hex')}`;
    return { body, mac };
  }

  private notify(base: BaseState, hook: WebhookState): void {
    const url = hook.notificationUrl;
    if (!url) return;
    const { body, mac } = this.notificationFor(base, hook);
    const started = Date.now();
    const delivery = (async () => {
      let result: NotificationResult;
      try {
        const res = await this.fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-airtable-content-mac': mac },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer().catch(() => undefined);
        result = {
          success: res.ok,
          completionTimestamp: new Date(this.clock.now()).toISOString(),
          durationMs: Date.now() - started,
          retryNumber: 0,
          ...(res.ok ? {} : { error: { message: `The notification URL returned HTTP ${res.status}` } }),
        };
      } catch (err) {
        result = {
          success: false,
          completionTimestamp: new Date(this.clock.now()).toISOString(),
          durationMs: Date.now() - started,
          retryNumber: 0,
          error: { message: err instanceof Error ? err.message : String(err) },
        };
      }
      hook.lastNotificationResult = result;
      if (result.success) hook.lastSuccessfulNotificationTime = result.completionTimestamp;
    })();
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  /** Wait until every notification ping sent so far has been delivered (or failed). */
  async flushNotifications(): Promise<void> {
    while (this.deliveries.size) await Promise.all([...this.deliveries]);
  }

  private webhookJson(hook: WebhookState) {
    const now = this.clock.now();
    return {
      id: hook.id,
      type: 'client',
      isHookEnabled: now < hook.expirationTime,
      notificationUrl: hook.notificationUrl,
      cursorForNextPayload: hook.nextPayloadNumber,
      areNotificationsEnabled: hook.areNotificationsEnabled,
      lastSuccessfulNotificationTime: hook.lastSuccessfulNotificationTime,
      lastNotificationResult: hook.lastNotificationResult,
      expirationTime: new Date(hook.expirationTime).toISOString(),
      specification: hook.specification,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Rate limiting: a rolling one-second window per base and per token; after a 429 the key stays
  // limited for `penaltyMs` (Airtable: "wait 30 seconds before subsequent requests will succeed").

  private allow(key: string, limit: number): boolean {
    if (!this.rateLimit) return true;
    const now = this.clock.now();
    const until = this.limitedUntil.get(key);
    if (until !== undefined && now < until) return false;
    const hits = (this.hits.get(key) ?? []).filter((t) => t > now - 1000);
    if (hits.length >= limit) {
      this.limitedUntil.set(key, now + this.rateLimit.penaltyMs);
      this.hits.set(key, hits);
      return false;
    }
    hits.push(now);
    this.hits.set(key, hits);
    return true;
  }

  isRateLimited(baseId: string): boolean {
    const until = this.limitedUntil.get(`base:${baseId}`);
    return until !== undefined && this.clock.now() < until;
  }

  resetRateLimits(): void {
    this.hits.clear();
    this.limitedUntil.clear();
  }

  // -------------------------------------------------------------------------------------------
  // HTTP

  async handle(req: SimRequest): Promise<SimResponse> {
    try {
      return await this.route(req);
    } catch (err) {
      if (err instanceof ApiError) return json(err.status, err.body);
      throw err;
    }
  }

  private async route(req: SimRequest): Promise<SimResponse> {
    let parts: string[];
    try {
      parts = req.path.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw notFound();
    }
    if (parts[0] === 'oauth2' && parts[1] === 'v1') {
      if (parts[2] === 'authorize' && req.method === 'GET') return this.oauthAuthorize(req);
      if (parts[2] === 'token' && req.method === 'POST') return this.oauthToken(req);
      throw notFound();
    }
    if (parts[0] !== 'v0' || parts.length < 2) throw notFound();

    const auth = this.tokens.check(bearerToken(req.headers));
    if (!auth.ok) throw apiError(401, 'AUTHENTICATION_REQUIRED', 'Authentication required');
    const token = auth.info;
    if (req.bodyInvalid) throw apiError(400, 'INVALID_REQUEST_BODY', 'Could not parse request body');

    // Metadata API
    if (parts[1] === 'meta') {
      if (parts[2] === 'whoami' && parts.length === 3 && req.method === 'GET') {
        this.limitToken(token);
        return json(200, { id: token.userId, scopes: token.scopes });
      }
      if (parts[2] !== 'bases') throw notFound();
      if (parts.length === 3 && req.method === 'GET') {
        this.requireScope(token, 'schema.bases:read');
        this.limitToken(token);
        const bases = this.bases
          .filter((b) => !token.bases || token.bases.includes(b.id))
          .map((b) => ({ id: b.id, name: b.name, permissionLevel: b.permissionLevel }));
        return json(200, { bases });
      }
      if (parts.length === 5 && parts[4] === 'tables' && req.method === 'GET') {
        const base = this.accessBase(token, parts[3]!);
        this.requireScope(token, 'schema.bases:read');
        this.limit(token, base);
        return json(200, { tables: base.tables.map((t) => this.tableJson(t)) });
      }
      // Create table / create field (schema.bases:write): the first field is the primary field.
      if (parts.length === 5 && parts[4] === 'tables' && req.method === 'POST') {
        const base = this.accessBase(token, parts[3]!);
        this.requireScope(token, 'schema.bases:write');
        this.limit(token, base);
        return json(200, this.tableJson(this.createTableFromApi(base, req.body)));
      }
      if (parts.length === 7 && parts[4] === 'tables' && parts[6] === 'fields' && req.method === 'POST') {
        const base = this.accessBase(token, parts[3]!);
        this.requireScope(token, 'schema.bases:write');
        this.limit(token, base);
        const table = base.tables.find((t) => t.id === parts[5]);
        if (!table) throw invalidPermissions();
        const field = this.createFieldFromApi(table, req.body);
        table.fields.push(field);
        return json(200, this.fieldJson(field));
      }
      throw notFound();
    }

    // Webhooks API
    if (parts[1] === 'bases' && parts[3] === 'webhooks') {
      const base = this.accessBase(token, parts[2]!);
      this.requireScope(token, 'webhook:manage');
      this.limit(token, base);
      return this.webhooksRoute(req, token, base, parts.slice(4));
    }

    // Records API: /v0/{baseId}/{tableIdOrName}[/{recordId}|/listRecords]
    const base = this.accessBase(token, parts[1]!);
    if (parts.length < 3 || parts.length > 4) throw notFound();
    const table = this.findTable(base, parts[2]!);
    if (!table) throw invalidPermissions();
    const isRead = req.method === 'GET' || (req.method === 'POST' && parts[3] === 'listRecords');
    this.requireScope(token, isRead ? 'data.records:read' : 'data.records:write');
    this.limit(token, base);

    if (parts.length === 4) {
      if (parts[3] === 'listRecords') {
        if (req.method !== 'POST') throw notFound();
        return this.listRecordsRoute(base, table, bodyParams(req.body));
      }
      return this.recordRoute(req, base, table, parts[3]!);
    }
    switch (req.method) {
      case 'GET':
        return this.listRecordsRoute(base, table, queryParams(req.query));
      case 'POST':
        return this.createRoute(req, base, table);
      case 'PATCH':
      case 'PUT':
        return this.updateRoute(req, base, table, req.method === 'PUT');
      case 'DELETE':
        return this.deleteRoute(req, base, table);
      default:
        throw notFound();
    }
  }

  private requireScope(token: TokenInfo, scope: string): void {
    if (!token.scopes.includes(scope)) throw invalidPermissions();
  }

  private accessBase(token: TokenInfo, baseId: string): BaseState {
    const base = this.getBase(baseId);
    if (!base || (token.bases && !token.bases.includes(base.id))) throw invalidPermissions();
    return base;
  }

  private rateLimited(): ApiError {
    return new ApiError(429, {
      errors: [{ error: 'RATE_LIMIT_REACHED', message: 'Rate limit exceeded. Please try again later' }],
    });
  }

  /** The body of a 429, for the fault injector. */
  rateLimitResponse(): SimResponse {
    return json(429, this.rateLimited().body);
  }

  private limitToken(token: TokenInfo): void {
    if (this.rateLimit && !this.allow(`token:${token.token}`, this.rateLimit.perTokenPerSecond))
      throw this.rateLimited();
  }

  private limit(token: TokenInfo, base: BaseState): void {
    if (!this.rateLimit) return;
    if (!this.allow(`base:${base.id}`, this.rateLimit.perBasePerSecond)) throw this.rateLimited();
    this.limitToken(token);
  }

  fieldJson(f: FieldState) {
    return {
      id: f.id,
      name: f.name,
      type: f.type,
      ...(f.description ? { description: f.description } : {}),
      ...(f.options ? { options: structuredClone(f.options) } : {}),
    };
  }

  /**
   * POST /v0/meta/bases/{baseId}/tables: `name` (unique in the base, case-insensitively), an optional
   * `description`, and `fields` (at least one; the first is the primary field, of a type a primary
   * field may have). Each field as for create field. Links, formulas and other computed fields are
   * not modelled here and are refused.
   */
  createTableFromApi(base: BaseState, body: unknown): TableState {
    const b = (body ?? {}) as { name?: unknown; description?: unknown; fields?: unknown };
    if (typeof b.name !== 'string' || b.name.trim() === '')
      throw apiError(422, 'INVALID_REQUEST_UNKNOWN', 'Invalid request: table name is required.');
    const name = b.name;
    if (base.tables.some((t) => t.name.toLowerCase() === name.toLowerCase()))
      throw apiError(422, 'DUPLICATE_TABLE_NAME', `Table name "${name}" is already in use.`);
    if (!Array.isArray(b.fields) || b.fields.length === 0)
      throw apiError(422, 'INVALID_REQUEST_UNKNOWN', 'Invalid request: a table needs at least one field.');
    const table: TableState = {
      id: this.newId('tbl'),
      name,
      ...(typeof b.description === 'string' && b.description ? { description: b.description } : {}),
      primaryFieldId: '',
      fields: [],
      views: [{ id: this.newId('viw'), name: 'Grid view', type: 'grid' }],
      records: new Map(),
      nextAutoNumber: 1,
    };
    for (const f of b.fields) table.fields.push(this.createFieldFromApi(table, f));
    const primary = table.fields[0] as FieldState;
    if (!PRIMARY_FIELD_TYPES.has(primary.type))
      throw apiError(
        422,
        'INVALID_PRIMARY_FIELD_TYPE',
        `Field type ${primary.type} cannot be used for the primary field.`,
      );
    table.primaryFieldId = primary.id;
    base.tables.push(table);
    return table;
  }

  /**
   * POST .../tables/{tableId}/fields: `name` (unique in the table, case-insensitively), `type`,
   * optional `description`, and `options` where the type requires them (Airtable's field model:
   * number and percent a `precision` 0-8, currency a `precision` 0-7 and a `symbol`, checkbox an
   * `icon` and a `color`, singleSelect and multipleSelects `choices`, date a `dateFormat`, dateTime a
   * `dateFormat`, a `timeFormat` and a `timeZone`).
   */
  createFieldFromApi(table: TableState, body: unknown): FieldState {
    const f = (body ?? {}) as { name?: unknown; type?: unknown; description?: unknown; options?: unknown };
    const name = typeof f.name === 'string' ? f.name.trim() : '';
    if (name === '' || table.fields.some((x) => x.name.toLowerCase() === name.toLowerCase()))
      throw apiError(
        422,
        'DUPLICATE_OR_EMPTY_FIELD_NAME',
        `Field name "${name}" is empty or already used in table ${table.name}.`,
      );
    const type = f.type as FieldType;
    if (typeof f.type !== 'string' || !CREATABLE_TYPES.has(type))
      throw apiError(
        422,
        'UNSUPPORTED_FIELD_TYPE_FOR_CREATE',
        `Creating fields of type ${String(f.type)} is not supported.`,
      );
    const options = (f.options ?? undefined) as FieldOptions | undefined;
    const bad = (why: string) =>
      apiError(
        422,
        'INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE',
        `Invalid options for ${type} field "${name}": ${why}`,
      );
    const precision = (max: number) => {
      const p = options?.precision;
      if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > max)
        throw bad(`precision must be an integer from 0 to ${max}`);
    };
    const dateFormat = () => {
      const d = options?.dateFormat as { name?: unknown } | undefined;
      if (!d || !['local', 'friendly', 'us', 'european', 'iso'].includes(String(d.name)))
        throw bad('dateFormat.name must be local, friendly, us, european or iso');
    };
    switch (type) {
      case 'number':
      case 'percent':
        precision(8);
        break;
      case 'currency':
        precision(7);
        if (typeof options?.symbol !== 'string' || options.symbol === '') throw bad('symbol is required');
        break;
      case 'checkbox':
        if (typeof options?.icon !== 'string' || typeof options?.color !== 'string')
          throw bad('icon and color are required');
        break;
      case 'singleSelect':
      case 'multipleSelects': {
        const choices = options?.choices;
        if (!Array.isArray(choices)) throw bad('choices are required');
        const names = new Set<string>();
        for (const c of choices) {
          const n = (c as { name?: unknown })?.name;
          if (typeof n !== 'string' || n === '' || names.has(n)) throw bad('each choice needs a unique name');
          names.add(n);
        }
        break;
      }
      case 'date':
        dateFormat();
        break;
      case 'dateTime': {
        dateFormat();
        const t = options?.timeFormat as { name?: unknown } | undefined;
        if (!t || !['12hour', '24hour'].includes(String(t.name)))
          throw bad('timeFormat.name must be 12hour or 24hour');
        if (typeof options?.timeZone !== 'string' || options.timeZone === '')
          throw bad('timeZone is required');
        break;
      }
      default:
        if (options !== undefined && type !== 'multipleAttachments' && Object.keys(options).length > 0)
          throw bad('this type takes no options');
    }
    const field: FieldState = { id: this.newId('fld'), name, type };
    if (typeof f.description === 'string' && f.description) field.description = f.description;
    if (type === 'singleSelect' || type === 'multipleSelects') {
      const raw = (options?.choices ?? []) as { name: string; color?: string }[];
      field.options = {
        choices: raw.map((c, i) => ({
          id: this.newId('sel'),
          name: c.name,
          color: c.color ?? choiceColor(i),
        })),
      };
    } else if (type === 'date') {
      field.options = { dateFormat: completeDateFormat(options?.dateFormat) };
    } else if (type === 'dateTime') {
      field.options = {
        dateFormat: completeDateFormat(options?.dateFormat),
        timeFormat: completeTimeFormat(options?.timeFormat),
        timeZone: options?.timeZone,
      };
    } else if (type === 'multipleAttachments') {
      field.options = { isReversed: false };
    } else if (options) {
      field.options = structuredClone(options);
    }
    return field;
  }

  tableJson(t: TableState) {
    return {
      id: t.id,
      name: t.name,
      primaryFieldId: t.primaryFieldId,
      ...(t.description ? { description: t.description } : {}),
      fields: t.fields.map((f) => ({
        id: f.id,
        name: f.name,
        type: f.type,
        ...(f.description ? { description: f.description } : {}),
        ...(f.options ? { options: structuredClone(f.options) } : {}),
      })),
      views: t.views.map((v) => ({ ...v })),
    };
  }

  // --- list records

  private listRecordsRoute(base: BaseState, table: TableState, p: ListParams): SimResponse {
    const byId = p.returnFieldsByFieldId;
    const only = p.fields ? this.fieldSet(table, p.fields) : undefined;
    if (p.cellFormat !== undefined && p.cellFormat !== 'json')
      throw invalidRequest('cellFormat "string" is not supported by the simulator');
    if (
      p.pageSize !== undefined &&
      (!Number.isInteger(p.pageSize) || p.pageSize < 1 || p.pageSize > MAX_PAGE_SIZE)
    ) {
      throw invalidRequest();
    }
    if (p.maxRecords !== undefined && (!Number.isInteger(p.maxRecords) || p.maxRecords < 1))
      throw invalidRequest();
    if (p.view !== undefined && !table.views.some((v) => v.id === p.view || v.name === p.view)) {
      throw apiError(422, 'VIEW_NAME_NOT_FOUND', `View ${p.view} not found`);
    }
    const pageSize = Math.min(p.pageSize ?? MAX_PAGE_SIZE, p.maxRecords ?? MAX_PAGE_SIZE);

    let iterId: string;
    let iter: Iterator;
    let start = 0;
    if (p.offset) {
      const [id, recId] = p.offset.split('/');
      const found = id ? this.iterators.get(id) : undefined;
      if (!found || found.tableId !== table.id || !recId) {
        throw apiError(422, 'INVALID_OFFSET_VALUE', `The value of offset ${p.offset} is invalid`);
      }
      if (this.iteratorTtlMs !== false && this.clock.now() - found.lastUsedAt > this.iteratorTtlMs) {
        this.iterators.delete(id!);
        throw apiError(422, 'LIST_RECORDS_ITERATOR_NOT_AVAILABLE', 'Iterator not available');
      }
      iterId = id!;
      iter = found;
      iter.lastUsedAt = this.clock.now();
      start = iter.ids.indexOf(recId);
      if (start < 0)
        throw apiError(422, 'INVALID_OFFSET_VALUE', `The value of offset ${p.offset} is invalid`);
    } else {
      let records = [...table.records.values()];
      if (p.filterByFormula !== undefined && p.filterByFormula.trim() !== '') {
        let node: FormulaNode;
        try {
          node = parseFormula(p.filterByFormula);
          records = records.filter((r) => isTruthy(evaluate(node, this.formulaContext(base, table, r))));
        } catch (err) {
          if (err instanceof FormulaError) {
            throw apiError(
              422,
              'INVALID_FILTER_BY_FORMULA',
              `The formula for filtering records is invalid: ${err.message}`,
            );
          }
          throw err;
        }
      }
      records.sort((a, b) => a.createdTime - b.createdTime || a.autoNumber - b.autoNumber);
      if (p.sort?.length) {
        const sorts = p.sort.map((s) => {
          const field = this.fieldByKey(table, s.field);
          if (!field) throw apiError(422, 'UNKNOWN_FIELD_NAME', `Unknown field name: "${s.field}"`);
          if (s.direction !== undefined && s.direction !== 'asc' && s.direction !== 'desc')
            throw invalidRequest();
          return { field, dir: s.direction === 'desc' ? -1 : 1 };
        });
        records.sort((a, b) => {
          for (const s of sorts) {
            const c = compareCells(
              this.readCell(base, table, a, s.field),
              this.readCell(base, table, b, s.field),
            );
            if (c !== 0) return c * s.dir;
          }
          return 0;
        });
      }
      if (p.maxRecords !== undefined) records = records.slice(0, p.maxRecords);
      iterId = this.newId('itr');
      const now = this.clock.now();
      iter = { tableId: table.id, ids: records.map((r) => r.id), createdAt: now, lastUsedAt: now };
      this.iterators.set(iterId, iter);
    }

    const out: ReturnType<AirtableState['renderRecord']>[] = [];
    let i = start;
    while (i < iter.ids.length && out.length < pageSize) {
      const rec = table.records.get(iter.ids[i]!);
      i++;
      if (!rec) continue; // deleted since the listing began
      const rendered: Record<string, unknown> = this.renderRecord(base, table, rec, {
        byId,
        ...(only ? { only } : {}),
      });
      if (p.commentCount) rendered.commentCount = 0;
      out.push(rendered as ReturnType<AirtableState['renderRecord']>);
    }
    const next = iter.ids[i];
    if (next === undefined) this.iterators.delete(iterId);
    return json(200, { records: out, ...(next !== undefined ? { offset: `${iterId}/${next}` } : {}) });
  }

  private fieldSet(table: TableState, keys: string[]): Set<string> {
    const set = new Set<string>();
    for (const k of keys) {
      const f = this.fieldByKey(table, k);
      if (!f) throw apiError(422, 'UNKNOWN_FIELD_NAME', `Unknown field name: "${k}"`);
      set.add(f.id);
    }
    return set;
  }

  // --- single record

  private recordRoute(req: SimRequest, base: BaseState, table: TableState, recordId: string): SimResponse {
    const rec = table.records.get(recordId);
    if (!rec) throw notFound();
    const body = (req.body ?? {}) as Record<string, unknown>;
    switch (req.method) {
      case 'GET':
        return json(
          200,
          this.renderRecord(base, table, rec, { byId: truthyParam(req.query.get('returnFieldsByFieldId')) }),
        );
      case 'PATCH':
      case 'PUT': {
        if (body.fields === undefined) {
          throw apiError(
            422,
            'INVALID_REQUEST_MISSING_FIELDS',
            'Could not find field "fields" in the request body',
          );
        }
        this.transact(base, 'publicApi', (tx) =>
          this.updateRecordCells(
            base,
            table,
            rec,
            body.fields,
            body.typecast === true,
            req.method === 'PUT',
            tx,
          ),
        );
        return json(200, this.renderRecord(base, table, rec, { byId: body.returnFieldsByFieldId === true }));
      }
      case 'DELETE':
        this.transact(base, 'publicApi', (tx) => this.destroyRecord(base, table, rec, tx));
        return json(200, { id: rec.id, deleted: true });
      default:
        throw notFound();
    }
  }

  // --- create

  private createRoute(req: SimRequest, base: BaseState, table: TableState): SimResponse {
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw apiError(
        422,
        'INVALID_REQUEST_MISSING_FIELDS',
        'Could not find field "fields" in the request body',
      );
    }
    const b = body as Record<string, unknown>;
    const typecast = b.typecast === true;
    const byId = b.returnFieldsByFieldId === true;
    if (Array.isArray(b.records)) {
      const records = b.records as unknown[];
      if (records.length > MAX_RECORDS_PER_WRITE) {
        throw apiError(
          422,
          'INVALID_RECORDS',
          `A maximum of 10 records can be created per request but you have provided ${records.length}.`,
        );
      }
      if (records.length === 0)
        throw apiError(422, 'INVALID_RECORDS', 'You must provide at least one record');
      const created = this.transact(base, 'publicApi', (tx) =>
        records.map((r) => {
          if (typeof r !== 'object' || r === null || (r as { fields?: unknown }).fields === undefined) {
            throw apiError(
              422,
              'INVALID_REQUEST_MISSING_FIELDS',
              'Could not find field "fields" in the request body',
            );
          }
          return this.insertRecord(base, table, (r as { fields: unknown }).fields, typecast, tx);
        }),
      );
      return json(200, { records: created.map((r) => this.renderRecord(base, table, r, { byId })) });
    }
    if (b.fields === undefined) {
      throw apiError(
        422,
        'INVALID_REQUEST_MISSING_FIELDS',
        'Could not find field "fields" in the request body',
      );
    }
    const rec = this.transact(base, 'publicApi', (tx) =>
      this.insertRecord(base, table, b.fields, typecast, tx),
    );
    return json(200, this.renderRecord(base, table, rec, { byId }));
  }

  // --- update / upsert

  private updateRoute(
    req: SimRequest,
    base: BaseState,
    table: TableState,
    destructive: boolean,
  ): SimResponse {
    const b = (req.body ?? {}) as Record<string, unknown>;
    if (!Array.isArray(b.records)) {
      throw apiError(
        422,
        'INVALID_REQUEST_MISSING_FIELDS',
        'Could not find field "records" in the request body',
      );
    }
    const records = b.records as unknown[];
    if (records.length > MAX_RECORDS_PER_WRITE) {
      throw apiError(
        422,
        'INVALID_RECORDS',
        `A maximum of 10 records can be updated per request but you have provided ${records.length}.`,
      );
    }
    const typecast = b.typecast === true;
    const byId = b.returnFieldsByFieldId === true;
    const upsert = b.performUpsert as { fieldsToMergeOn?: unknown } | undefined;
    let mergeFields: FieldState[] | undefined;
    if (upsert !== undefined) {
      const keys = upsert?.fieldsToMergeOn;
      if (
        !Array.isArray(keys) ||
        keys.length < 1 ||
        keys.length > 3 ||
        !keys.every((k) => typeof k === 'string')
      ) {
        throw invalidRequest('performUpsert.fieldsToMergeOn must be an array of 1 to 3 field names or ids');
      }
      mergeFields = keys.map((k: string) => {
        const f = this.fieldByKey(table, k);
        if (!f) throw apiError(422, 'UNKNOWN_FIELD_NAME', `Unknown field name: "${k}"`);
        if (
          READ_ONLY_TYPES.has(f.type) ||
          f.type === 'multipleRecordLinks' ||
          f.type === 'multipleAttachments'
        ) {
          throw invalidRequest(`Field "${f.name}" cannot be used in fieldsToMergeOn`);
        }
        return f;
      });
    }

    const createdIds: string[] = [];
    const updatedIds: string[] = [];
    const touched = this.transact(base, 'publicApi', (tx) =>
      records.map((raw) => {
        if (typeof raw !== 'object' || raw === null) throw invalidRequest();
        const r = raw as { id?: unknown; fields?: unknown };
        if (r.fields === undefined) {
          throw apiError(
            422,
            'INVALID_REQUEST_MISSING_FIELDS',
            'Could not find field "fields" in the request body',
          );
        }
        if (typeof r.id === 'string') {
          const rec = table.records.get(r.id);
          if (!rec)
            throw apiError(422, 'ROW_DOES_NOT_EXIST', `Record ID ${r.id} does not exist in this table`);
          this.updateRecordCells(base, table, rec, r.fields, typecast, destructive, tx);
          updatedIds.push(rec.id);
          return rec;
        }
        if (!mergeFields) throw apiError(422, 'INVALID_RECORDS', 'Record is missing an "id"');
        // Upsert: match every merge field's value (after conversion) against existing records.
        const wanted = this.convertFields(base, table, r.fields, typecast, tx, undefined);
        const keyValues = mergeFields.map((f) => {
          if (!wanted.has(f.id) || wanted.get(f.id) === undefined) {
            throw invalidRequest(`Field "${f.name}" in fieldsToMergeOn must have a value in every record`);
          }
          return JSON.stringify(wanted.get(f.id));
        });
        const matches = [...table.records.values()].filter((rec) =>
          mergeFields!.every((f, i) => JSON.stringify(rec.cells.get(f.id)) === keyValues[i]),
        );
        if (matches.length > 1) {
          throw invalidRequest(
            `Cannot update more than one record with the same values in fieldsToMergeOn (${mergeFields.map((f) => f.name).join(', ')})`,
          );
        }
        const match = matches[0];
        if (match) {
          this.updateRecordCells(base, table, match, r.fields, typecast, destructive, tx);
          updatedIds.push(match.id);
          return match;
        }
        const rec = this.insertRecord(base, table, r.fields, typecast, tx);
        createdIds.push(rec.id);
        return rec;
      }),
    );
    const rendered = touched.map((r) => this.renderRecord(base, table, r, { byId }));
    if (mergeFields)
      return json(200, { createdRecords: createdIds, updatedRecords: updatedIds, records: rendered });
    return json(200, { records: rendered });
  }

  // --- delete

  private deleteRoute(req: SimRequest, base: BaseState, table: TableState): SimResponse {
    const ids = [...req.query.entries()].filter(([k]) => /^records(\[\d*\])?$/.test(k)).map(([, v]) => v);
    if (ids.length === 0) throw invalidRequest();
    if (ids.length > MAX_RECORDS_PER_WRITE) {
      throw apiError(
        422,
        'INVALID_RECORDS',
        `A maximum of 10 records can be deleted per request but you have provided ${ids.length}.`,
      );
    }
    this.transact(base, 'publicApi', (tx) => {
      for (const id of ids) {
        const rec = table.records.get(id);
        if (!rec) throw apiError(422, 'ROW_DOES_NOT_EXIST', `Record ID ${id} does not exist in this table`);
        this.destroyRecord(base, table, rec, tx);
      }
    });
    return json(200, { records: ids.map((id) => ({ id, deleted: true })) });
  }

  // --- webhooks

  private liveHook(base: BaseState, token: TokenInfo, id: string | undefined): WebhookState {
    const hook = id ? base.webhooks.get(id) : undefined;
    if (!hook || this.clock.now() >= hook.expirationTime) throw notFound();
    if (token.kind === 'oauth' && hook.createdBy !== token.token) throw notFound();
    return hook;
  }

  private webhooksRoute(req: SimRequest, token: TokenInfo, base: BaseState, rest: string[]): SimResponse {
    const now = this.clock.now();
    if (rest.length === 0 && req.method === 'GET') {
      const hooks = [...base.webhooks.values()].filter(
        (h) => now < h.expirationTime && (token.kind !== 'oauth' || h.createdBy === token.token),
      );
      return json(200, { webhooks: hooks.map((h) => this.webhookJson(h)) });
    }
    if (rest.length === 0 && req.method === 'POST') {
      const b = (req.body ?? {}) as Record<string, unknown>;
      const spec = b.specification as WebhookSpecification | undefined;
      const dataTypes = spec?.options?.filters?.dataTypes;
      if (!Array.isArray(dataTypes) || dataTypes.length === 0) {
        throw invalidRequest('specification.options.filters.dataTypes is required');
      }
      for (const d of dataTypes) {
        if (!['tableData', 'tableFields', 'tableMetadata'].includes(String(d)))
          throw invalidRequest(`Unknown dataType ${String(d)}`);
      }
      if (dataTypes.includes('tableData')) this.requireScope(token, 'data.records:read');
      const scope = spec?.options.filters.recordChangeScope;
      if (scope !== undefined && !base.tables.some((t) => t.id === scope))
        throw invalidRequest(`Invalid recordChangeScope ${scope}`);
      const url = b.notificationUrl;
      if (url !== undefined && url !== null && (typeof url !== 'string' || !/^https?:\/\//.test(url))) {
        throw invalidRequest('notificationUrl must be an http(s) URL');
      }
      const hook: WebhookState = {
        id: this.newId('ach'),
        baseId: base.id,
        notificationUrl: typeof url === 'string' ? url : null,
        specification: structuredClone(spec!),
        macSecretBase64: randomBytes(32).toString('base64'),
        createdTime: now,
        expirationTime: now + WEBHOOK_LIFETIME_MS,
        areNotificationsEnabled: true,
        payloads: [],
        nextPayloadNumber: 1,
        lastNotificationResult: null,
        lastSuccessfulNotificationTime: null,
        createdBy: token.token,
      };
      base.webhooks.set(hook.id, hook);
      return json(200, {
        id: hook.id,
        macSecretBase64: hook.macSecretBase64,
        expirationTime: new Date(hook.expirationTime).toISOString(),
      });
    }
    const hook = this.liveHook(base, token, rest[0]);
    if (rest.length === 1 && req.method === 'DELETE') {
      base.webhooks.delete(hook.id);
      return { status: 204 };
    }
    if (rest.length === 2 && rest[1] === 'refresh' && req.method === 'POST') {
      hook.expirationTime = now + WEBHOOK_LIFETIME_MS;
      return json(200, { expirationTime: new Date(hook.expirationTime).toISOString() });
    }
    if (rest.length === 2 && rest[1] === 'enableNotifications' && req.method === 'POST') {
      const enable = (req.body as { enable?: unknown } | undefined)?.enable;
      if (typeof enable !== 'boolean') throw invalidRequest();
      hook.areNotificationsEnabled = enable;
      return json(200, {});
    }
    if (rest.length === 2 && rest[1] === 'payloads' && req.method === 'GET') {
      const cursorParam = req.query.get('cursor');
      const limitParam = req.query.get('limit');
      const cursor = cursorParam === null ? 1 : Number(cursorParam);
      const limit = limitParam === null ? WEBHOOK_PAYLOADS_PAGE_MAX : Number(limitParam);
      if (!Number.isInteger(cursor) || cursor < 1) throw invalidRequest();
      if (!Number.isInteger(limit) || limit < 1 || limit > WEBHOOK_PAYLOADS_PAGE_MAX) throw invalidRequest();
      this.prunePayloads(hook);
      const available = hook.payloads.filter((p) => p.number >= cursor);
      const page = available.slice(0, limit);
      const last = page[page.length - 1];
      // Listing payloads also extends the webhook's life, as Airtable documents.
      hook.expirationTime = now + WEBHOOK_LIFETIME_MS;
      return json(200, {
        cursor: last ? last.number + 1 : Math.max(cursor, hook.payloads[0]?.number ?? hook.nextPayloadNumber),
        mightHaveMore: available.length > page.length,
        payloads: page.map((p) => p.payload),
      });
    }
    throw notFound();
  }

  // --- OAuth (authorization code with PKCE S256; refresh tokens are single-use)

  registerOAuthClient(client: OAuthClient): void {
    this.oauthClients.set(client.clientId, client);
  }

  private oauthAuthorize(req: SimRequest): SimResponse {
    const q = req.query;
    const client = this.oauthClients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client) return json(400, { error: 'invalid_client', error_description: 'Unknown client_id' });
    if (!redirectUri || (client.redirectUris.length > 0 && !client.redirectUris.includes(redirectUri))) {
      return json(400, { error: 'invalid_request', error_description: 'Invalid redirect_uri' });
    }
    const redirect = new URL(redirectUri);
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    const fail = (error: string, description: string): SimResponse => {
      redirect.searchParams.set('error', error);
      redirect.searchParams.set('error_description', description);
      return { status: 302, headers: { location: redirect.toString() } };
    };
    if (q.get('response_type') !== 'code')
      return fail('unsupported_response_type', 'response_type must be code');
    if (!state) return fail('invalid_request', 'state is required');
    const challenge = q.get('code_challenge');
    if (!challenge || q.get('code_challenge_method') !== 'S256') {
      return fail('invalid_request', 'code_challenge with code_challenge_method S256 is required');
    }
    const scope = q.get('scope') ?? '';
    const unknown = scope.split(/\s+/).filter((s) => s && !ALL_SCOPES.includes(s));
    if (unknown.length) return fail('invalid_scope', `Unknown scopes: ${unknown.join(' ')}`);
    const code = randomAlphanumeric(40);
    this.authCodes.set(code, {
      code,
      clientId: client.clientId,
      redirectUri,
      scope,
      challenge,
      expiresAt: this.clock.now() + 10 * 60_000,
      used: false,
    });
    redirect.searchParams.set('code', code);
    return { status: 302, headers: { location: redirect.toString() } };
  }

  private oauthToken(req: SimRequest): SimResponse {
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    let clientId = body.client_id;
    let clientSecret: string | undefined;
    if (basic?.[1]) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = id;
      clientSecret = secret;
    }
    const client = this.oauthClients.get(clientId ?? '');
    const bad = (error: string, description: string) => json(400, { error, error_description: description });
    if (!client) return json(401, { error: 'invalid_client', error_description: 'Unknown client' });
    if (client.clientSecret !== undefined && client.clientSecret !== clientSecret) {
      return json(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    }
    const now = this.clock.now();
    if (body.grant_type === 'authorization_code') {
      const code = this.authCodes.get(body.code ?? '');
      if (!code || code.used || now >= code.expiresAt || code.clientId !== client.clientId) {
        return bad('invalid_grant', 'The authorization code is invalid or expired');
      }
      if (body.redirect_uri !== code.redirectUri) return bad('invalid_grant', 'redirect_uri does not match');
      const verifier = body.code_verifier ?? '';
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (computed !== code.challenge)
        return bad('invalid_grant', 'code_verifier does not match the code_challenge');
      code.used = true;
      return json(200, this.issueTokens(client.clientId, code.scope));
    }
    if (body.grant_type === 'refresh_token') {
      const rt = this.refreshTokens.get(body.refresh_token ?? '');
      if (!rt || rt.used || now >= rt.expiresAt || rt.clientId !== client.clientId) {
        return bad('invalid_grant', 'The refresh token is invalid or expired');
      }
      rt.used = true;
      return json(200, this.issueTokens(client.clientId, rt.scope));
    }
    return bad('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }

  private issueTokens(clientId: string, scope: string) {
    const now = this.clock.now();
    const access = `oaa${randomAlphanumeric(14)}.v1.${randomAlphanumeric(40)}`;
    const refresh = `oar${randomAlphanumeric(14)}.v1.${randomAlphanumeric(40)}`;
    this.tokens.add({
      token: access,
      scopes: scope.split(/\s+/).filter(Boolean),
      expiresAt: now + OAUTH_ACCESS_TOKEN_TTL_S * 1000,
      kind: 'oauth',
      userId: this.userId,
    });
    this.refreshTokens.set(refresh, {
      token: refresh,
      clientId,
      scope,
      expiresAt: now + OAUTH_REFRESH_TOKEN_TTL_S * 1000,
      used: false,
    });
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      scope,
      expires_in: OAUTH_ACCESS_TOKEN_TTL_S,
      refresh_expires_in: OAUTH_REFRESH_TOKEN_TTL_S,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Transactions

type Touched = { table: TableState; recordId: string; before: Map<string, unknown> | undefined };

type Change =
  | { kind: 'create'; table: TableState; rec: RecordState }
  | { kind: 'destroy'; table: TableState; recordId: string }
  | {
      kind: 'update';
      table: TableState;
      rec: RecordState;
      changedFieldIds: string[];
      before: Map<string, unknown>;
    };

export class Transaction {
  readonly touched = new Map<string, Touched>();
  private readonly undo: (() => void)[] = [];

  /** Remember a record's cells before the first change in this transaction (undefined: new record). */
  touch(table: TableState, recordId: string, rec: RecordState | undefined): void {
    const key = `${table.id}/${recordId}`;
    if (this.touched.has(key)) return;
    const before = rec ? new Map(rec.cells) : undefined;
    this.touched.set(key, { table, recordId, before });
    if (rec && before)
      this.undo.push(() => {
        rec.cells = new Map(before);
      });
  }

  onRollback(fn: () => void): void {
    this.undo.push(fn);
  }

  rollback(): void {
    for (const fn of this.undo.reverse()) fn();
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

type ListParams = {
  pageSize?: number;
  maxRecords?: number;
  offset?: string;
  fields?: string[];
  filterByFormula?: string;
  sort?: { field: string; direction?: string }[];
  view?: string;
  cellFormat?: string;
  returnFieldsByFieldId: boolean;
  commentCount: boolean;
};

function truthyParam(v: string | null | undefined): boolean {
  return v === 'true' || v === '1';
}

function num(v: string | null): number | undefined {
  return v === null ? undefined : Number(v);
}

function queryParams(q: URLSearchParams): ListParams {
  const fields: string[] = [];
  const sorts = new Map<number, { field?: string; direction?: string }>();
  let commentCount = false;
  for (const [k, v] of q.entries()) {
    if (/^fields(\[\d*\])?$/.test(k)) fields.push(v);
    const m = /^sort\[(\d+)\]\[(field|direction)\]$/.exec(k);
    if (m) {
      const s = sorts.get(Number(m[1])) ?? {};
      if (m[2] === 'field') s.field = v;
      else s.direction = v;
      sorts.set(Number(m[1]), s);
    }
    if (/^recordMetadata(\[\d*\])?$/.test(k) && v === 'commentCount') commentCount = true;
  }
  const sort = [...sorts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, s]) => {
      if (!s.field) throw invalidRequest();
      return { field: s.field, ...(s.direction ? { direction: s.direction } : {}) };
    });
  const p: ListParams = {
    returnFieldsByFieldId: truthyParam(q.get('returnFieldsByFieldId')),
    commentCount,
  };
  const pageSize = num(q.get('pageSize'));
  if (pageSize !== undefined) p.pageSize = pageSize;
  const maxRecords = num(q.get('maxRecords'));
  if (maxRecords !== undefined) p.maxRecords = maxRecords;
  const offset = q.get('offset');
  if (offset) p.offset = offset;
  if (fields.length) p.fields = fields;
  const formula = q.get('filterByFormula');
  if (formula !== null) p.filterByFormula = formula;
  if (sort.length) p.sort = sort;
  const view = q.get('view');
  if (view) p.view = view;
  const cellFormat = q.get('cellFormat');
  if (cellFormat) p.cellFormat = cellFormat;
  return p;
}

function bodyParams(body: unknown): ListParams {
  const b = (body ?? {}) as Record<string, unknown>;
  const p: ListParams = {
    returnFieldsByFieldId: b.returnFieldsByFieldId === true,
    commentCount: Array.isArray(b.recordMetadata) && b.recordMetadata.includes('commentCount'),
  };
  const numeric = (v: unknown) => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number') throw invalidRequest();
    return v;
  };
  const pageSize = numeric(b.pageSize);
  if (pageSize !== undefined) p.pageSize = pageSize;
  const maxRecords = numeric(b.maxRecords);
  if (maxRecords !== undefined) p.maxRecords = maxRecords;
  if (typeof b.offset === 'string') p.offset = b.offset;
  if (Array.isArray(b.fields)) p.fields = b.fields.map(String);
  if (typeof b.filterByFormula === 'string') p.filterByFormula = b.filterByFormula;
  if (Array.isArray(b.sort)) {
    p.sort = b.sort.map((s: { field?: unknown; direction?: unknown }) => {
      if (typeof s?.field !== 'string') throw invalidRequest();
      return { field: s.field, ...(typeof s.direction === 'string' ? { direction: s.direction } : {}) };
    });
  }
  if (typeof b.view === 'string') p.view = b.view;
  if (typeof b.cellFormat === 'string') p.cellFormat = b.cellFormat;
  return p;
}

function compareCells(a: unknown, b: unknown): number {
  const ea = isEmptyCell(a);
  const eb = isEmptyCell(b);
  if (ea || eb) return ea === eb ? 0 : ea ? -1 : 1; // empty values sort first ascending
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = Array.isArray(a) ? a.join(', ') : typeof a === 'object' ? JSON.stringify(a) : String(a);
  const sb = Array.isArray(b) ? b.join(', ') : typeof b === 'object' ? JSON.stringify(b) : String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function nullIfEmpty(v: unknown): unknown {
  return isEmptyCell(v) ? null : v;
}

// ---------------------------------------------------------------------------------------------
// Server

export type AirtableSimulatorServer = RunningServer & {
  state: AirtableState;
  faults: FaultInjector;
  requestLog: RequestLog;
};

export async function startAirtableServer(state: AirtableState): Promise<AirtableSimulatorServer> {
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
