/**
 * An in-memory simulator of Notion's public API (version 2025-09-03: databases hold data sources),
 * built from developers.notion.com. See README.md beside this file for what is supported.
 */
import { createHmac, randomBytes } from 'node:crypto';
import {
  bearerToken,
  type Clock,
  FaultInjector,
  json,
  RequestLog,
  type RunningServer,
  type SimRequest,
  type SimResponse,
  seededRandom,
  startHttpServer,
  systemClock,
  type TokenInfo,
  TokenRegistry,
} from '../http.ts';
import {
  bodyFailed,
  COLORS,
  type DateValue,
  EMAIL_MAX,
  type FileValue,
  type FormulaResult,
  isUrl,
  MULTI_SELECT_MAX,
  NotionApiError,
  PAGE_REFERENCE_LIMIT,
  PEOPLE_MAX,
  PHONE_MAX,
  type PropertySchema,
  type PropertyType,
  parseDateValue,
  parseRichText,
  plainRichText,
  READ_ONLY_TYPES,
  RELATION_MAX,
  type RichText,
  richTextPlain,
  type SelectOption,
  type StatusGroup,
  type StoredValue,
  show,
  URL_MAX,
  validationError,
} from './properties.ts';

// ---------------------------------------------------------------------------------------------
// Constants (from Notion's docs)

export const NOTION_VERSION = '2025-09-03';
/** Versions the simulator accepts in `Notion-Version`; data source endpoints need 2025-09-03 or later. */
export const KNOWN_VERSIONS = [
  '2021-05-13',
  '2021-08-16',
  '2022-02-22',
  '2022-06-28',
  '2025-09-03',
  '2026-03-11',
];
export const MAX_PAGE_SIZE = 100;
/** "An average of three requests per second. Some bursts beyond the average rate are allowed." */
export const RATE_LIMIT_PER_SECOND = 3;
export const RATE_LIMIT_BURST = 10;
export const WEBHOOK_MAX_ATTEMPTS = 8;
/**
 * "A single data source query returns at most 10,000 results": past it pagination stops with
 * `has_more: false` and `request_status: {type: "incomplete", incomplete_reason:
 * "query_result_limit_reached"}` (developers.notion.com, guides/data-apis/query-large-data-sources).
 */
export const QUERY_RESULT_LIMIT = 10_000;
export const DEFAULT_TOKEN = 'ntn_3125416846089lockstepSimulatorIntegrationToken0';

const UNAUTHORIZED_MESSAGE = 'API token is invalid.';
const RESTRICTED_MESSAGE = 'API token does not have access to this resource.';
const RATE_LIMITED_MESSAGE = 'You have been rate limited. Please try again in a few minutes.';
const SERVICE_OVERLOAD_MESSAGE = 'Notion is temporarily overloaded. Please try again later.';

// ---------------------------------------------------------------------------------------------
// State types

export type UserState = { id: string; name: string; type: 'person' | 'bot'; email?: string };

export type DatabaseState = {
  id: string;
  title: string;
  dataSourceIds: string[];
  createdTime: number;
  lastEditedTime: number;
};

export type DataSourceState = {
  id: string;
  databaseId: string;
  name: string;
  properties: PropertySchema[];
  createdTime: number;
  lastEditedTime: number;
  nextUniqueNumber: number;
};

export type PageState = {
  id: string;
  dataSourceId: string;
  createdTime: number;
  lastEditedTime: number;
  createdBy: string;
  lastEditedBy: string;
  values: Map<string, StoredValue>;
  inTrash: boolean;
  uniqueNumber: number;
};

export type WebhookEvent = {
  id: string;
  timestamp: string;
  workspace_id: string;
  workspace_name: string;
  subscription_id: string;
  integration_id: string;
  type: string;
  authors: { id: string; type: 'person' | 'bot' }[];
  attempt_number: number;
  api_version: string;
  entity: { id: string; type: 'page' | 'data_source' | 'database' };
  data: Record<string, unknown>;
};

export type WebhookSubscription = {
  id: string;
  url: string;
  /** Event types delivered; undefined means every type. */
  eventTypes?: string[];
  verificationToken: string;
  verified: boolean;
  pending: WebhookEvent[];
  deliveries: { eventId: string; type: string; attempt: number; status: number | 'error'; at: number }[];
};

export type Capability = 'read_content' | 'update_content' | 'insert_content';
export const ALL_CAPABILITIES: Capability[] = ['read_content', 'update_content', 'insert_content'];

type OAuthClient = { clientId: string; clientSecret: string; redirectUris: string[] };
type AuthCode = { clientId: string; redirectUri: string; expiresAt: number; used: boolean };
type Cursor = { scope: string; fingerprint: string; after: unknown[] };

export type NotionSimulatorOptions = {
  clock?: Clock;
  /** Seed for reproducible ids. */
  idSeed?: number;
  /** `false` turns the rate limit off; otherwise a token bucket per integration. */
  rateLimit?: false | { perSecond?: number; burst?: number };
  /** Extra internal integration tokens, with capabilities and the data sources shared with them. */
  tokens?: { token: string; capabilities?: Capability[]; dataSources?: string[] }[];
  oauthClients?: OAuthClient[];
  /** OAuth access tokens expire after this long (default: never, as Notion's long-lived tokens). */
  oauthAccessTokenTtlMs?: number;
  /** Results one data source query can reach (default 10,000, as Notion); false: no cap. */
  queryResultLimit?: number | false;
  /**
   * The per-workspace limit Notion shares across all of a workspace's connections (scaled to the
   * plan; Notion does not publish the numbers): a token bucket over every token. Off by default.
   */
  workspaceRateLimit?: false | { perSecond: number; burst: number };
  /** Webhook events are delivered on their own (after a macrotask) unless false; see flushWebhooks. */
  autoDeliverWebhooks?: boolean;
  fetch?: typeof fetch;
};

export type ActorKind = 'api' | 'user';

// ---------------------------------------------------------------------------------------------

const round = (ms: number) => Math.floor(ms / 60_000) * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Notion ids are UUIDs; the API accepts them with or without dashes. */
export function normalizeId(raw: string): string | undefined {
  const hex = raw.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const PROPERTY_ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789%;:<>?[]{}|`~@^';

export class NotionState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly users = new Map<string, UserState>();
  readonly databases = new Map<string, DatabaseState>();
  readonly dataSources = new Map<string, DataSourceState>();
  readonly pages = new Map<string, PageState>();
  readonly subscriptions = new Map<string, WebhookSubscription>();
  readonly workspaceId: string;
  readonly workspaceName = 'Lockstep Simulator';
  /** The internal integration's bot user (owner of DEFAULT_TOKEN and of the webhook subscriptions). */
  readonly botId: string;
  /** The person who edits "in Notion" (out-of-band changes). */
  readonly personId: string;
  private readonly random: () => number;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly cursors = new Map<string, Cursor>();
  private readonly oauthClients = new Map<string, OAuthClient>();
  private readonly authCodes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<
    string,
    { clientId: string; used: boolean; botId: string; dataSources?: string[] }
  >();
  private readonly capabilities = new Map<string, Set<Capability>>();
  private readonly inFlight = new Set<Promise<void>>();
  private deliveryScheduled = false;
  private readonly fetchImpl: typeof fetch;
  readonly rateLimit: { perSecond: number; burst: number } | false;
  readonly workspaceRateLimit: { perSecond: number; burst: number } | false;
  readonly queryResultLimit: number | false;
  private readonly oauthTtlMs: number | undefined;
  private readonly autoDeliver: boolean;

  constructor(options: NotionSimulatorOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.tokens = new TokenRegistry(this.clock);
    this.fetchImpl = options.fetch ?? fetch;
    this.rateLimit =
      options.rateLimit === false
        ? false
        : {
            perSecond: options.rateLimit?.perSecond ?? RATE_LIMIT_PER_SECOND,
            burst: options.rateLimit?.burst ?? RATE_LIMIT_BURST,
          };
    this.workspaceRateLimit = options.workspaceRateLimit ?? false;
    this.queryResultLimit = options.queryResultLimit ?? QUERY_RESULT_LIMIT;
    this.oauthTtlMs = options.oauthAccessTokenTtlMs;
    this.autoDeliver = options.autoDeliverWebhooks !== false;
    this.workspaceId = this.newId();
    this.botId = this.newId();
    this.personId = this.newId();
    this.users.set(this.botId, { id: this.botId, name: 'Lockstep', type: 'bot' });
    this.users.set(this.personId, {
      id: this.personId,
      name: 'Ada Lovelace',
      type: 'person',
      email: 'ada@example.com',
    });
    this.addToken({ token: DEFAULT_TOKEN, botId: this.botId });
    for (const t of options.tokens ?? []) {
      this.addToken({
        token: t.token,
        botId: this.botId,
        ...(t.capabilities ? { capabilities: t.capabilities } : {}),
        ...(t.dataSources ? { dataSources: t.dataSources } : {}),
      });
    }
    for (const c of options.oauthClients ?? [
      { clientId: 'lockstep-simulator-client', clientSecret: 'lockstep-simulator-secret', redirectUris: [] },
    ]) {
      this.oauthClients.set(c.clientId, c);
    }
  }

  newId(): string {
    let hex = '';
    for (let i = 0; i < 32; i++) hex += Math.floor(this.random() * 16).toString(16);
    // A version-4 UUID, as Notion's ids are.
    hex = `${hex.slice(0, 12)}4${hex.slice(13, 16)}${'89ab'[Math.floor(this.random() * 4)]}${hex.slice(17)}`;
    return normalizeId(hex) as string;
  }

  private newPropertyId(ds: { properties: PropertySchema[] }): string {
    for (;;) {
      let raw = '';
      for (let i = 0; i < 4; i++)
        raw += PROPERTY_ID_CHARS[Math.floor(this.random() * PROPERTY_ID_CHARS.length)];
      const id = encodeURIComponent(raw);
      if (!ds.properties.some((p) => p.id === id)) return id;
    }
  }

  addToken(t: { token: string; botId: string; capabilities?: Capability[]; dataSources?: string[] }): void {
    const info: TokenInfo = {
      token: t.token,
      scopes: t.capabilities ?? [...ALL_CAPABILITIES],
      kind: 'pat',
      userId: t.botId,
      ...(t.dataSources ? { bases: t.dataSources } : {}),
    };
    this.tokens.add(info);
  }

  revokeToken(token: string): void {
    this.tokens.revoke(token);
  }

  addUser(user: Omit<UserState, 'id'> & { id?: string }): UserState {
    const u = { ...user, id: user.id ?? this.newId() };
    this.users.set(u.id, u);
    return u;
  }

  // -------------------------------------------------------------------------------------------
  // Schema

  /**
   * Creates a database with one data source. Property definitions are given by name; relations name
   * their target data source by id (create the target first) and may ask for a synced property on it.
   */
  addDatabase(def: { title: string; properties: PropertyDef[] }): {
    database: DatabaseState;
    dataSource: DataSourceState;
  } {
    const now = this.clock.now();
    const database: DatabaseState = {
      id: this.newId(),
      title: def.title,
      dataSourceIds: [],
      createdTime: now,
      lastEditedTime: now,
    };
    const dataSource: DataSourceState = {
      id: this.newId(),
      databaseId: database.id,
      name: def.title,
      properties: [],
      createdTime: now,
      lastEditedTime: now,
      nextUniqueNumber: 1,
    };
    database.dataSourceIds.push(dataSource.id);
    this.databases.set(database.id, database);
    this.dataSources.set(dataSource.id, dataSource);
    if (!def.properties.some((p) => p.type === 'title'))
      throw new Error('A data source needs a title property');
    for (const p of def.properties) this.addProperty(dataSource, p);
    return { database, dataSource };
  }

  /** A person deletes a property in Notion: it leaves the schema and every page. */
  removeProperty(dataSourceIdOrName: string, name: string) {
    const ds = this.dataSource(dataSourceIdOrName);
    const at = ds.properties.findIndex((p) => p.name === name);
    if (at < 0) throw new Error(`No property ${name}`);
    ds.properties.splice(at, 1);
  }

  addProperty(ds: DataSourceState, def: PropertyDef): PropertySchema {
    if (ds.properties.some((p) => p.name === def.name)) throw new Error(`Duplicate property ${def.name}`);
    const schema: PropertySchema = {
      id: def.type === 'title' ? 'title' : this.newPropertyId(ds),
      name: def.name,
      type: def.type,
      ...(def.description ? { description: def.description } : {}),
    };
    if (def.type === 'select' || def.type === 'multi_select' || def.type === 'status') {
      schema.options = (def.options ?? []).map((o, i) => this.newOption(o, i));
    }
    if (def.type === 'status') {
      const groups = def.groups ?? [{ name: 'To-do', options: schema.options?.map((o) => o.name) ?? [] }];
      schema.groups = groups.map((g, i) => ({
        id: this.newId(),
        name: g.name,
        color: (['gray', 'blue', 'green'] as const)[i % 3] as string,
        option_ids: g.options.map((n) => {
          const opt = schema.options?.find((o) => o.name === n);
          if (!opt) throw new Error(`Status group ${g.name}: no option ${n}`);
          return opt.id;
        }),
      }));
    }
    if (def.type === 'number') schema.number = { format: def.format ?? 'number' };
    if (def.type === 'relation') {
      const target = this.dataSources.get(def.dataSourceId ?? '');
      if (!target) throw new Error(`Relation ${def.name}: no data source ${def.dataSourceId}`);
      schema.relation = { dataSourceId: target.id, databaseId: target.databaseId };
      if (def.syncedPropertyName && target !== ds) {
        const dual: PropertySchema = {
          id: this.newPropertyId(target),
          name: def.syncedPropertyName,
          type: 'relation',
          relation: { dataSourceId: ds.id, databaseId: ds.databaseId, dualPropertyId: schema.id },
        };
        target.properties.push(dual);
        schema.relation.dualPropertyId = dual.id;
      }
    }
    if (def.type === 'formula') {
      if (!def.compute) throw new Error(`Formula ${def.name} needs compute`);
      schema.formula = { expression: def.expression ?? '', compute: def.compute };
    }
    if (def.type === 'rollup') {
      const rel = ds.properties.find((p) => p.name === def.relationProperty && p.type === 'relation');
      if (!rel) throw new Error(`Rollup ${def.name}: no relation ${def.relationProperty}`);
      schema.rollup = { relationPropertyId: rel.id, function: 'count' };
    }
    if (def.type === 'unique_id') schema.uniqueId = { prefix: def.prefix ?? null };
    ds.properties.push(schema);
    return schema;
  }

  private newOption(o: string | { name: string; color?: string }, i: number): SelectOption {
    const name = typeof o === 'string' ? o : o.name;
    const color = typeof o === 'string' ? undefined : o.color;
    return {
      id: this.newId(),
      name,
      color: color ?? (COLORS[(i % (COLORS.length - 1)) + 1] as string),
      description: null,
    };
  }

  dataSource(idOrName: string): DataSourceState {
    const id = normalizeId(idOrName);
    const ds =
      (id && this.dataSources.get(id)) || [...this.dataSources.values()].find((d) => d.name === idOrName);
    if (!ds) throw new Error(`No data source ${idOrName}`);
    return ds;
  }

  page(id: string): PageState {
    const p = this.pages.get(normalizeId(id) ?? '');
    if (!p) throw new Error(`No page ${id}`);
    return p;
  }

  property(ds: DataSourceState, key: string): PropertySchema | undefined {
    let decoded = key;
    try {
      decoded = decodeURIComponent(key);
    } catch {
      // keep as is
    }
    return ds.properties.find(
      (p) =>
        p.name === key || p.id === key || p.id === encodeURIComponent(key) || decodeSafe(p.id) === decoded,
    );
  }

  pageTitle(page: PageState): string {
    const ds = this.dataSource(page.dataSourceId);
    const title = ds.properties.find((p) => p.type === 'title');
    return title ? richTextPlain((page.values.get(title.id) as RichText[] | undefined) ?? []) : '';
  }

  // -------------------------------------------------------------------------------------------
  // Out-of-band edits (as a person in the Notion app) and their API twins

  /**
   * Creates a page. Values are keyed by property name or id, as API property values
   * (`{ select: { name } }`) or simple values (strings, numbers, booleans, string arrays, date strings).
   */
  createPage(
    dataSourceIdOrName: string,
    values: Record<string, unknown>,
    actor: ActorKind = 'user',
  ): PageState {
    const ds = this.dataSource(dataSourceIdOrName);
    return this.create(ds, this.fromSimple(ds, values), actor === 'api' ? this.botId : this.personId);
  }

  /** Changes a page as a person in Notion would (webhook author: person). */
  editPage(pageId: string, values: Record<string, unknown>, actor: ActorKind = 'user'): PageState {
    const page = this.page(pageId);
    const ds = this.dataSource(page.dataSourceId);
    this.update(
      page,
      { properties: this.fromSimple(ds, values) },
      actor === 'api' ? this.botId : this.personId,
    );
    return page;
  }

  trashPage(pageId: string, actor: ActorKind = 'user'): PageState {
    const page = this.page(pageId);
    this.update(page, { in_trash: true }, actor === 'api' ? this.botId : this.personId);
    return page;
  }

  restorePage(pageId: string, actor: ActorKind = 'user'): PageState {
    const page = this.page(pageId);
    this.update(page, { in_trash: false }, actor === 'api' ? this.botId : this.personId);
    return page;
  }

  /** Pages of a data source (not in the trash unless asked), oldest first. */
  listPages(dataSourceIdOrName: string, opts: { includeTrashed?: boolean } = {}): PageState[] {
    const ds = this.dataSource(dataSourceIdOrName);
    return [...this.pages.values()].filter(
      (p) => p.dataSourceId === ds.id && (opts.includeTrashed || !p.inTrash),
    );
  }

  /** A page as the API returns it. */
  pageJson(page: PageState, only?: Set<string>): Record<string, unknown> {
    const ds = this.dataSource(page.dataSourceId);
    const properties: Record<string, unknown> = {};
    for (const p of ds.properties) {
      if (only && !only.has(p.id)) continue;
      properties[p.name] = { id: p.id, type: p.type, ...this.renderValue(page, p) };
    }
    const slug = this.pageTitle(page)
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    return {
      object: 'page',
      id: page.id,
      created_time: iso(round(page.createdTime)),
      last_edited_time: iso(round(page.lastEditedTime)),
      created_by: { object: 'user', id: page.createdBy },
      last_edited_by: { object: 'user', id: page.lastEditedBy },
      cover: null,
      icon: null,
      parent: { type: 'data_source_id', data_source_id: ds.id, database_id: ds.databaseId },
      archived: page.inTrash,
      in_trash: page.inTrash,
      is_locked: false,
      properties,
      url: `https://www.notion.so/${slug ? `${slug}-` : ''}${page.id.replaceAll('-', '')}`,
      public_url: null,
    };
  }

  private fromSimple(ds: DataSourceState, values: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(values)) {
      const p = this.property(ds, key);
      if (!p) throw new Error(`${key} is not a property of ${ds.name}`);
      const isApiShape =
        typeof v === 'object' &&
        v !== null &&
        !Array.isArray(v) &&
        Object.keys(v).length === 1 &&
        p.type in v;
      out[p.id] = isApiShape ? v : simpleToApi(p, v);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Values

  private renderValue(page: PageState, p: PropertySchema): Record<string, unknown> {
    const v = page.values.get(p.id);
    switch (p.type) {
      case 'title':
      case 'rich_text':
        return { [p.type]: (v as RichText[] | undefined) ?? [] };
      case 'number':
        return { number: (v as number | undefined) ?? null };
      case 'select':
      case 'status': {
        const opt = p.options?.find((o) => o.id === v);
        return { [p.type]: opt ? { id: opt.id, name: opt.name, color: opt.color } : null };
      }
      case 'multi_select':
        return {
          multi_select: ((v as string[] | undefined) ?? []).flatMap((id) => {
            const o = p.options?.find((x) => x.id === id);
            return o ? [{ id: o.id, name: o.name, color: o.color }] : [];
          }),
        };
      case 'date':
        return { date: (v as DateValue | undefined) ?? null };
      case 'checkbox':
        return { checkbox: (v as boolean | undefined) ?? false };
      case 'url':
      case 'email':
      case 'phone_number':
        return { [p.type]: (v as string | undefined) ?? null };
      case 'people': {
        const ids = (v as string[] | undefined) ?? [];
        return { people: ids.slice(0, PAGE_REFERENCE_LIMIT).map((id) => this.userJson(id)) };
      }
      case 'relation': {
        const ids = (v as string[] | undefined) ?? [];
        return {
          relation: ids.slice(0, PAGE_REFERENCE_LIMIT).map((id) => ({ id })),
          has_more: ids.length > PAGE_REFERENCE_LIMIT,
        };
      }
      case 'formula':
        return { formula: this.formulaValue(page, p) };
      case 'rollup': {
        const rel = (page.values.get(p.rollup?.relationPropertyId ?? '') as string[] | undefined) ?? [];
        return { rollup: { type: 'number', number: rel.length, function: 'count' } };
      }
      case 'created_time':
        return { created_time: iso(round(page.createdTime)) };
      case 'last_edited_time':
        return { last_edited_time: iso(round(page.lastEditedTime)) };
      case 'created_by':
        return { created_by: { object: 'user', id: page.createdBy } };
      case 'last_edited_by':
        return { last_edited_by: { object: 'user', id: page.lastEditedBy } };
      case 'unique_id':
        return { unique_id: { prefix: p.uniqueId?.prefix ?? null, number: page.uniqueNumber } };
      case 'files':
        return { files: (v as FileValue[] | undefined) ?? [] };
    }
  }

  private formulaValue(page: PageState, p: PropertySchema): FormulaResult {
    const ds = this.dataSource(page.dataSourceId);
    const read = (name: string): unknown => {
      const prop = this.property(ds, name);
      if (!prop) return null;
      const v = page.values.get(prop.id);
      if (prop.type === 'title' || prop.type === 'rich_text') return richTextPlain((v as RichText[]) ?? []);
      if (prop.type === 'select' || prop.type === 'status')
        return prop.options?.find((o) => o.id === v)?.name ?? null;
      if (prop.type === 'multi_select')
        return ((v as string[]) ?? []).map((id) => prop.options?.find((o) => o.id === id)?.name);
      if (prop.type === 'date') return (v as DateValue | null)?.start ?? null;
      return v ?? null;
    };
    try {
      return p.formula?.compute(read) ?? { type: 'string', string: null };
    } catch {
      return { type: 'string', string: null };
    }
  }

  userJson(id: string): Record<string, unknown> {
    const u = this.users.get(id);
    if (!u) return { object: 'user', id };
    if (u.type === 'bot')
      return {
        object: 'user',
        id,
        name: u.name,
        avatar_url: null,
        type: 'bot',
        bot: { owner: { type: 'workspace', workspace: true }, workspace_name: this.workspaceName },
      };
    return {
      object: 'user',
      id,
      name: u.name,
      avatar_url: null,
      type: 'person',
      person: { email: u.email ?? '' },
    };
  }

  /** Validates one written property value and returns what is stored. */
  private parseValue(ds: DataSourceState, p: PropertySchema, raw: unknown, path: string): StoredValue {
    if (READ_ONLY_TYPES.has(p.type))
      throw validationError(`${p.name} is a ${p.type} property, which cannot be updated through the API.`);
    // The title and rich text shorthands: a bare array of rich text objects.
    if (Array.isArray(raw) && (p.type === 'title' || p.type === 'rich_text')) raw = { [p.type]: raw };
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw validationError(`${p.name} is expected to be ${p.type}.`);
    const o = raw as Record<string, unknown>;
    const given = Object.keys(o).filter((k) => k !== 'type' && k !== 'id');
    if (!given.includes(p.type)) throw validationError(`${p.name} is expected to be ${p.type}.`);
    const v = o[p.type];
    const vpath = `${path}.${p.type}`;
    const lookups = {
      userName: (id: string) => this.users.get(normalizeId(id) ?? '')?.name,
      pageTitle: (id: string) => {
        const page = this.pages.get(normalizeId(id) ?? '');
        return page ? this.pageTitle(page) : undefined;
      },
    };
    switch (p.type) {
      case 'title':
      case 'rich_text':
        return parseRichText(v, vpath, lookups);
      case 'number':
        if (v !== null && (typeof v !== 'number' || !Number.isFinite(v)))
          throw bodyFailed(vpath, 'a number or `null`', v);
        return v as number | null;
      case 'checkbox':
        if (typeof v !== 'boolean') throw bodyFailed(vpath, 'a boolean', v);
        return v;
      case 'url':
      case 'email':
      case 'phone_number': {
        if (v === null || v === '') return null;
        if (typeof v !== 'string') throw bodyFailed(vpath, 'a string or `null`', v);
        const max = p.type === 'url' ? URL_MAX : p.type === 'email' ? EMAIL_MAX : PHONE_MAX;
        if (v.length > max)
          throw validationError(
            `body failed validation: ${vpath}.length should be ≤ \`${max}\`, instead was \`${v.length}\`.`,
          );
        return v;
      }
      case 'select':
      case 'status': {
        if (v === null) return null;
        return this.option(ds, p, v, vpath, p.type === 'select');
      }
      case 'multi_select': {
        if (!Array.isArray(v)) throw bodyFailed(vpath, 'an array', v);
        if (v.length > MULTI_SELECT_MAX)
          throw validationError(
            `body failed validation: ${vpath}.length should be ≤ \`${MULTI_SELECT_MAX}\`, instead was \`${v.length}\`.`,
          );
        return [...new Set(v.map((x, i) => this.option(ds, p, x, `${vpath}[${i}]`, true)))];
      }
      case 'date':
        return parseDateValue(v, vpath);
      case 'people': {
        if (!Array.isArray(v)) throw bodyFailed(vpath, 'an array', v);
        if (v.length > PEOPLE_MAX)
          throw validationError(
            `body failed validation: ${vpath}.length should be ≤ \`${PEOPLE_MAX}\`, instead was \`${v.length}\`.`,
          );
        return [
          ...new Set(
            v.map((x, i) => {
              const id = normalizeId(String((x as { id?: unknown })?.id ?? ''));
              if (!id) throw bodyFailed(`${vpath}[${i}].id`, 'a valid uuid', (x as { id?: unknown })?.id);
              if (!this.users.has(id)) throw validationError(`Could not find user with ID: ${id}.`);
              return id;
            }),
          ),
        ];
      }
      case 'relation': {
        if (!Array.isArray(v)) throw bodyFailed(vpath, 'an array', v);
        if (v.length > RELATION_MAX)
          throw validationError(
            `body failed validation: ${vpath}.length should be ≤ \`${RELATION_MAX}\`, instead was \`${v.length}\`.`,
          );
        return [
          ...new Set(
            v.map((x, i) => {
              const raw = (x as { id?: unknown })?.id;
              const id = normalizeId(String(raw ?? ''));
              if (!id) throw bodyFailed(`${vpath}[${i}].id`, 'a valid uuid', raw);
              const target = this.pages.get(id);
              if (!target || target.dataSourceId !== p.relation?.dataSourceId)
                throw validationError(
                  `Could not find page with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
                );
              return id;
            }),
          ),
        ];
      }
      case 'files': {
        if (!Array.isArray(v)) throw bodyFailed(vpath, 'an array', v);
        return v.map((f, i) => {
          const file = f as { name?: unknown; external?: { url?: unknown } };
          const url = file?.external?.url;
          if (typeof url !== 'string' || !isUrl(url))
            throw validationError(
              `body failed validation: ${vpath}[${i}].external.url should be a valid URL.`,
            );
          const name = typeof file.name === 'string' && file.name ? file.name : url;
          return { name, type: 'external' as const, external: { url } };
        });
      }
      default:
        throw validationError(`${p.name} is a ${p.type} property, which cannot be updated through the API.`);
    }
  }

  private option(
    ds: DataSourceState,
    p: PropertySchema,
    raw: unknown,
    path: string,
    create: boolean,
  ): string {
    if (typeof raw !== 'object' || raw === null) throw bodyFailed(path, 'an object', raw);
    const o = raw as { id?: unknown; name?: unknown; color?: unknown };
    const options = p.options ?? [];
    if (typeof o.id === 'string') {
      const found = options.find((x) => x.id === o.id);
      if (!found) throw validationError(`Invalid option id for ${p.name}: ${o.id}`);
      return found.id;
    }
    if (typeof o.name !== 'string') throw bodyFailed(`${path}.name`, 'a string', o.name);
    const name = o.name.trim();
    if (name.includes(',')) throw validationError(`Select option names cannot contain commas: ${show(name)}`);
    if (name.length > 100)
      throw validationError(
        `body failed validation: ${path}.name.length should be ≤ \`100\`, instead was \`${name.length}\`.`,
      );
    const found = options.find((x) => x.name === name);
    if (found) return found.id;
    if (!create)
      throw validationError(
        `Invalid status option. Status option "${name}" does not exist for property "${p.name}".`,
      );
    // Select and multi-select options are created on write, as in Notion.
    const added = this.newOption(
      typeof o.color === 'string' ? { name, color: o.color } : name,
      options.length,
    );
    p.options = [...options, added];
    ds.lastEditedTime = this.clock.now();
    return added.id;
  }

  /** Validates every property of a request before anything changes (all-or-nothing). */
  private parseProperties(ds: DataSourceState, raw: unknown): Map<string, StoredValue> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw bodyFailed('body.properties', 'an object', raw);
    const out = new Map<string, StoredValue>();
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      const p = this.property(ds, key);
      if (!p) throw validationError(`${key} is not a property that exists.`);
      out.set(p.id, this.parseValue(ds, p, value, `body.properties.${key}`));
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  private create(ds: DataSourceState, properties: unknown, author: string): PageState {
    const values = this.parseProperties(ds, properties ?? {});
    const now = this.clock.now();
    const page: PageState = {
      id: this.newId(),
      dataSourceId: ds.id,
      createdTime: now,
      lastEditedTime: now,
      createdBy: author,
      lastEditedBy: author,
      values: new Map(),
      inTrash: false,
      uniqueNumber: ds.nextUniqueNumber++,
    };
    this.pages.set(page.id, page);
    this.emit('page.created', page, {}, author);
    this.applyValues(ds, page, values, author, false);
    return page;
  }

  private update(page: PageState, body: Record<string, unknown>, author: string): void {
    const ds = this.dataSource(page.dataSourceId);
    const trash = body.in_trash ?? body.archived;
    if (trash !== undefined && typeof trash !== 'boolean')
      throw bodyFailed('body.in_trash', 'a boolean', trash);
    const values = body.properties === undefined ? undefined : this.parseProperties(ds, body.properties);
    if (page.inTrash && trash !== false && values && values.size > 0)
      throw validationError(
        "Can't edit block that is archived. You must unarchive the block before editing.",
      );
    const now = this.clock.now();
    if (trash === false && page.inTrash) {
      page.inTrash = false;
      page.lastEditedTime = now;
      page.lastEditedBy = author;
      this.emit('page.undeleted', page, {}, author);
    }
    if (values && values.size > 0) this.applyValues(ds, page, values, author, true);
    else if (values) {
      page.lastEditedTime = now;
      page.lastEditedBy = author;
    }
    if (trash === true && !page.inTrash) {
      page.inTrash = true;
      page.lastEditedTime = now;
      page.lastEditedBy = author;
      this.emit('page.deleted', page, {}, author);
    }
  }

  private applyValues(
    ds: DataSourceState,
    page: PageState,
    values: Map<string, StoredValue>,
    author: string,
    announce: boolean,
  ): void {
    const now = this.clock.now();
    const changed: string[] = [];
    for (const [propId, value] of values) {
      const before = page.values.get(propId);
      if (JSON.stringify(before ?? null) !== JSON.stringify(value)) changed.push(propId);
      page.values.set(propId, value);
      const p = ds.properties.find((x) => x.id === propId);
      if (p?.type === 'relation' && p.relation?.dualPropertyId)
        this.syncDual(
          page,
          p,
          (before as string[] | undefined) ?? [],
          (value as string[] | null) ?? [],
          author,
        );
    }
    // Notion moves last_edited_time on every edit, also one that writes the same values.
    page.lastEditedTime = now;
    page.lastEditedBy = author;
    if (announce && changed.length > 0)
      this.emit('page.properties_updated', page, { updated_properties: changed }, author);
  }

  /** The other side of a two-way relation follows (and counts as an edit of those pages). */
  private syncDual(
    page: PageState,
    p: PropertySchema,
    before: string[],
    after: string[],
    author: string,
  ): void {
    const dualId = p.relation?.dualPropertyId as string;
    const added = after.filter((id) => !before.includes(id));
    const removed = before.filter((id) => !after.includes(id));
    for (const id of [...added, ...removed]) {
      const other = this.pages.get(id);
      if (!other) continue;
      const list = ((other.values.get(dualId) as string[] | undefined) ?? []).filter((x) => x !== page.id);
      if (added.includes(id)) list.push(page.id);
      other.values.set(dualId, list);
      other.lastEditedTime = this.clock.now();
      other.lastEditedBy = author;
      this.emit('page.properties_updated', other, { updated_properties: [dualId] }, author);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Webhooks (subscriptions are set up in the integration settings; here through these methods)

  /**
   * Creates a subscription and POSTs `{"verification_token": ...}` to its URL once, as Notion does.
   * Events are delivered only after `verifySubscription` (pasting the token back in the settings).
   */
  async subscribe(options: { url: string; eventTypes?: string[] }): Promise<WebhookSubscription> {
    const sub: WebhookSubscription = {
      id: this.newId(),
      url: options.url,
      ...(options.eventTypes ? { eventTypes: options.eventTypes } : {}),
      verificationToken: `secret_${randomBytes(24).toString('base64url')}`,
      verified: false,
      pending: [],
      deliveries: [],
    };
    this.subscriptions.set(sub.id, sub);
    await this.post(sub.url, JSON.stringify({ verification_token: sub.verificationToken }), {});
    return sub;
  }

  verifySubscription(subscriptionId: string, token: string): void {
    const sub = this.subscriptions.get(subscriptionId);
    if (!sub) throw new Error(`No subscription ${subscriptionId}`);
    if (token !== sub.verificationToken) throw new Error('The verification token does not match');
    sub.verified = true;
  }

  private emit(type: string, page: PageState, extra: Record<string, unknown>, author: string): void {
    const ds = this.dataSource(page.dataSourceId);
    const authorType = this.users.get(author)?.type ?? 'person';
    for (const sub of this.subscriptions.values()) {
      if (!sub.verified) continue;
      if (sub.eventTypes && !sub.eventTypes.includes(type)) continue;
      // Notion aggregates frequent events: one properties_updated per page until it is sent.
      const waiting =
        type === 'page.properties_updated'
          ? sub.pending.find((e) => e.type === type && e.entity.id === page.id && e.attempt_number === 1)
          : undefined;
      if (waiting) {
        const props = new Set([
          ...((waiting.data.updated_properties as string[]) ?? []),
          ...((extra.updated_properties as string[]) ?? []),
        ]);
        waiting.data.updated_properties = [...props];
        waiting.timestamp = iso(this.clock.now());
        if (!waiting.authors.some((a) => a.id === author))
          waiting.authors.push({ id: author, type: authorType });
        continue;
      }
      sub.pending.push({
        id: this.newId(),
        timestamp: iso(this.clock.now()),
        workspace_id: this.workspaceId,
        workspace_name: this.workspaceName,
        subscription_id: sub.id,
        integration_id: this.botId,
        type,
        authors: [{ id: author, type: authorType }],
        attempt_number: 1,
        api_version: NOTION_VERSION,
        entity: { id: page.id, type: 'page' },
        data: {
          parent: { id: ds.databaseId, type: 'database', data_source_id: ds.id },
          ...extra,
        },
      });
    }
    if (this.autoDeliver && !this.deliveryScheduled) {
      this.deliveryScheduled = true;
      setTimeout(() => {
        this.deliveryScheduled = false;
        void this.flushWebhooks();
      }, 0);
    }
  }

  /** The signature Notion puts in `X-Notion-Signature`. */
  sign(sub: WebhookSubscription, body: string): string {
    return `sha256=${createHmac('sha256', sub.verificationToken).update(body).digest('hex')}`;
  }

  /**
   * Sends every pending event (one POST each) and waits for all deliveries. A failed delivery
   * (non-2xx or network error) stays pending with the next attempt number, up to 8 attempts.
   */
  async flushWebhooks(): Promise<void> {
    for (const sub of this.subscriptions.values()) {
      const batch = sub.pending.splice(0);
      for (const event of batch) {
        const body = JSON.stringify(event);
        const run = this.post(sub.url, body, { 'x-notion-signature': this.sign(sub, body) }).then(
          (status) => {
            sub.deliveries.push({
              eventId: event.id,
              type: event.type,
              attempt: event.attempt_number,
              status,
              at: this.clock.now(),
            });
            const ok = typeof status === 'number' && status >= 200 && status < 300;
            if (!ok && event.attempt_number < WEBHOOK_MAX_ATTEMPTS)
              sub.pending.push({ ...event, attempt_number: event.attempt_number + 1 });
          },
        );
        this.inFlight.add(run);
        void run.finally(() => this.inFlight.delete(run));
      }
    }
    await Promise.all([...this.inFlight]);
  }

  private async post(url: string, body: string, headers: Record<string, string>): Promise<number | 'error'> {
    try {
      const res = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'notion-api', ...headers },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 'error';
    }
  }

  // -------------------------------------------------------------------------------------------
  // HTTP

  /**
   * Notion's 429: `rate_limited`, `Retry-After` in whole seconds, and which limit was exceeded in
   * `additional_data.rate_limit_reason` (`public_api_request_rate_limit` per connection,
   * `public_api_space_request_rate_limit` per workspace).
   */
  rateLimitResponse(
    retryAfterSeconds = 1,
    reason:
      | 'public_api_request_rate_limit'
      | 'public_api_space_request_rate_limit' = 'public_api_request_rate_limit',
  ): SimResponse {
    return this.errorResponse(
      new NotionApiError(
        429,
        'rate_limited',
        RATE_LIMITED_MESSAGE,
        { 'retry-after': String(retryAfterSeconds) },
        { rate_limit_reason: reason },
      ),
    );
  }

  /**
   * Notion's 529 `service_overload` ("Notion is temporarily overloaded"), which connections are to
   * handle like a 429, respecting Retry-After. The message wording is approximated.
   */
  serviceOverloadResponse(retryAfterSeconds = 1): SimResponse {
    return this.errorResponse(
      new NotionApiError(529, 'service_overload', SERVICE_OVERLOAD_MESSAGE, {
        'retry-after': String(retryAfterSeconds),
      }),
    );
  }

  errorResponse(e: NotionApiError): SimResponse {
    return json(
      e.status,
      {
        object: 'error',
        status: e.status,
        code: e.code,
        message: e.message,
        ...(e.additionalData ? { additional_data: e.additionalData } : {}),
        request_id: this.newId(),
      },
      e.headers,
    );
  }

  async handle(req: SimRequest): Promise<SimResponse> {
    try {
      return await this.route(req);
    } catch (e) {
      if (e instanceof NotionApiError) return this.errorResponse(e);
      throw e;
    }
  }

  /** A token bucket per integration: `perSecond` on average, bursts up to `burst`. */
  private takeToken(
    key: string,
    limit: { perSecond: number; burst: number } | false = this.rateLimit,
  ): number {
    if (!limit) return 0;
    const now = this.clock.now();
    const { perSecond, burst } = limit;
    const b = this.buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
  }

  resetRateLimits(): void {
    this.buckets.clear();
  }

  private async route(req: SimRequest): Promise<SimResponse> {
    const parts = req.path.split('/').filter(Boolean);
    if (parts[0] !== 'v1') throw invalidUrl();
    if (parts[1] === 'oauth') return this.oauth(req, parts.slice(2));

    const check = this.tokens.check(bearerToken(req.headers));
    if (!check.ok) throw new NotionApiError(401, 'unauthorized', UNAUTHORIZED_MESSAGE);
    const token = check.info;
    const wait = this.takeToken(token.userId);
    if (wait > 0) return this.rateLimitResponse(wait);
    const workspaceWait = this.takeToken('workspace', this.workspaceRateLimit);
    if (workspaceWait > 0)
      return this.rateLimitResponse(workspaceWait, 'public_api_space_request_rate_limit');

    const version = req.headers['notion-version'];
    if (typeof version !== 'string' || version === '')
      throw new NotionApiError(
        400,
        'missing_version',
        'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.',
      );
    if (!KNOWN_VERSIONS.includes(version))
      throw validationError(
        `Notion-Version header failed validation: Notion-Version header should be a known API version, instead was \`${show(version)}\`.`,
      );
    const modern = version >= '2025-09-03';
    if (req.bodyInvalid) throw new NotionApiError(400, 'invalid_json', 'Error parsing JSON body.');

    const [, resource, id, sub, subId] = parts;
    const m = req.method;
    if (resource === 'users') {
      if (m !== 'GET') throw invalidUrl();
      if (id === 'me' && parts.length === 3)
        return json(200, { ...this.userJson(token.userId), request_id: this.newId() });
      if (id === undefined) return this.listUsers(req);
      const u = this.users.get(normalizeId(id) ?? '');
      if (!u || parts.length !== 3) throw notFound('user', id);
      return json(200, this.userJson(u.id));
    }
    if (resource === 'search' && parts.length === 2 && m === 'POST')
      return this.search(token, req.body, modern);
    if (resource === 'databases' && id && parts.length === 3 && m === 'GET') {
      const db = this.databases.get(normalizeId(id) ?? '');
      if (!db?.dataSourceIds.some((d) => this.canSee(token, d))) throw notFound('database', id);
      if (!modern)
        throw validationError(
          'This simulator serves databases in API version 2025-09-03 and later only (set Notion-Version: 2025-09-03).',
        );
      return json(200, { ...this.databaseJson(db), request_id: this.newId() });
    }
    if (resource === 'data_sources') {
      if (!modern) throw invalidUrl();
      if (!id && parts.length === 2 && m === 'POST') return this.createDataSourceRoute(token, req.body);
      if (!id) throw invalidUrl();
      const ds = this.dataSources.get(normalizeId(id) ?? '');
      if (!ds || !this.canSee(token, ds.id)) throw notFound('data source', id);
      this.requireCapability(token, 'read_content');
      if (parts.length === 3 && m === 'GET')
        return json(200, { ...this.dataSourceJson(ds), request_id: this.newId() });
      if (sub === 'query' && parts.length === 4 && m === 'POST') return this.query(ds, req.body, req.query);
      if (parts.length === 3 && m === 'PATCH') {
        this.requireCapability(token, 'update_content');
        this.updateDataSourceSchema(ds, req.body);
        return json(200, { ...this.dataSourceJson(ds), request_id: this.newId() });
      }
      throw invalidUrl();
    }
    if (resource === 'pages') {
      if (!id && m === 'POST' && parts.length === 2) return this.createRoute(token, req.body);
      if (!id) throw invalidUrl();
      const page = this.pages.get(normalizeId(id) ?? '');
      if (!page || !this.canSee(token, page.dataSourceId)) throw notFound('page', id);
      if (parts.length === 3 && m === 'GET') {
        this.requireCapability(token, 'read_content');
        const only = this.filterProperties(this.dataSource(page.dataSourceId), req.query);
        return json(200, { ...this.pageJson(page, only), request_id: this.newId() });
      }
      if (parts.length === 3 && m === 'PATCH') {
        this.requireCapability(token, 'update_content');
        const body = (req.body ?? {}) as Record<string, unknown>;
        if (typeof body !== 'object' || Array.isArray(body)) throw bodyFailed('body', 'an object', body);
        this.update(page, body, token.userId);
        return json(200, { ...this.pageJson(page), request_id: this.newId() });
      }
      if (sub === 'properties' && subId && parts.length === 5 && m === 'GET') {
        this.requireCapability(token, 'read_content');
        return this.propertyItem(page, decodeSafe(subId), req.query);
      }
      throw invalidUrl();
    }
    throw invalidUrl();
  }

  /**
   * POST /v1/data_sources (2025-09-03): a new data source in a database the integration can reach
   * (insert content), with `properties` in the property-object request shape (exactly one title
   * property) and an optional `title`. The integration can reach the new data source.
   */
  private createDataSourceRoute(token: TokenInfo, raw: unknown): SimResponse {
    this.requireCapability(token, 'insert_content');
    const body = (raw ?? {}) as Record<string, unknown>;
    const parent = body.parent as Record<string, unknown> | undefined;
    if (typeof parent !== 'object' || parent === null) throw bodyFailed('body.parent', 'defined', parent);
    if (typeof parent.database_id !== 'string')
      throw bodyFailed('body.parent.database_id', 'defined', parent.database_id);
    const db = this.databases.get(normalizeId(parent.database_id) ?? '');
    if (!db?.dataSourceIds.some((d) => this.canSee(token, d))) throw notFound('database', parent.database_id);
    const properties = body.properties;
    if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
      throw bodyFailed('body.properties', 'an object', properties);
    const defs = Object.entries(properties as Record<string, unknown>).map(([name, config]) =>
      this.propertyRequest(name, config),
    );
    if (defs.filter((d) => d.type === 'title').length !== 1)
      throw validationError('A data source must have exactly one title property.');
    const title = Array.isArray(body.title)
      ? (body.title as { text?: { content?: string }; plain_text?: string }[])
          .map((t) => t.text?.content ?? t.plain_text ?? '')
          .join('')
      : '';
    const now = this.clock.now();
    const ds: DataSourceState = {
      id: this.newId(),
      databaseId: db.id,
      name: title,
      properties: [],
      createdTime: now,
      lastEditedTime: now,
      nextUniqueNumber: 1,
    };
    for (const d of defs) this.addProperty(ds, d);
    db.dataSourceIds.push(ds.id);
    this.dataSources.set(ds.id, ds);
    if (token.bases) token.bases.push(ds.id);
    return json(200, { ...this.dataSourceJson(ds), request_id: this.newId() });
  }

  /**
   * PATCH /v1/data_sources/{id} with `properties`: a name the data source lacks adds that property
   * (a second title is refused); `null` for an existing one removes it. Renames and type changes are
   * not modelled.
   */
  private updateDataSourceSchema(ds: DataSourceState, raw: unknown): void {
    const body = (raw ?? {}) as Record<string, unknown>;
    if (body.properties === undefined) return;
    if (typeof body.properties !== 'object' || body.properties === null || Array.isArray(body.properties))
      throw bodyFailed('body.properties', 'an object', body.properties);
    const entries = Object.entries(body.properties as Record<string, unknown>);
    const adds: PropertyDef[] = [];
    for (const [name, config] of entries) {
      const existing = ds.properties.find((p) => p.name === name || p.id === name);
      if (config === null) {
        if (!existing) throw validationError(`${name} is not a property that exists.`);
        continue;
      }
      if (existing) continue;
      const def = this.propertyRequest(name, config);
      if (def.type === 'title') throw validationError('A data source can only have one title property.');
      adds.push(def);
    }
    for (const [name, config] of entries)
      if (config === null)
        this.removeProperty(ds.id, ds.properties.find((p) => p.name === name || p.id === name)?.name ?? name);
    for (const d of adds) this.addProperty(ds, d);
    ds.lastEditedTime = this.clock.now();
  }

  /** One property of a schema request (`{ "<type>": { ... } }`) as a definition, checked as Notion does. */
  private propertyRequest(name: string, config: unknown): PropertyDef {
    if (name.trim() === '') throw validationError('Property names cannot be empty.');
    if (typeof config !== 'object' || config === null)
      throw bodyFailed(`body.properties.${name}`, 'an object', config);
    const c = config as Record<string, unknown>;
    const types = [
      'title',
      'rich_text',
      'number',
      'select',
      'multi_select',
      'date',
      'checkbox',
      'url',
      'email',
      'phone_number',
      'files',
    ] as const;
    const type = (typeof c.type === 'string' ? c.type : types.find((t) => t in c)) as (typeof types)[number];
    if (!types.includes(type))
      throw validationError(`body.properties.${name} should be a property schema this simulator can create.`);
    if (type === 'select' || type === 'multi_select') {
      const inner = (c[type] ?? {}) as { options?: unknown };
      const options = (inner.options ?? []) as { name?: unknown; color?: unknown }[];
      if (!Array.isArray(options))
        throw bodyFailed(`body.properties.${name}.${type}.options`, 'an array', options);
      const seen = new Set<string>();
      for (const o of options) {
        const n = o?.name;
        if (typeof n !== 'string' || n === '')
          throw validationError(`Select option names cannot be empty (${name}).`);
        if (n.includes(',')) throw validationError(`Select option names cannot contain commas: "${n}".`);
        if (n.length > 100) throw validationError(`Select option names are at most 100 characters: "${n}".`);
        if (seen.has(n)) throw validationError(`Select option names must be unique: "${n}".`);
        seen.add(n);
      }
      return {
        name,
        type,
        options: options.map((o) => ({
          name: o.name as string,
          ...(typeof o.color === 'string' ? { color: o.color } : {}),
        })),
      };
    }
    if (type === 'number') {
      const format = ((c.number ?? {}) as { format?: unknown }).format;
      return { name, type, ...(typeof format === 'string' ? { format } : {}) };
    }
    return { name, type };
  }

  private canSee(token: TokenInfo, dataSourceId: string): boolean {
    return token.bases === undefined || token.bases.includes(dataSourceId);
  }

  private requireCapability(token: TokenInfo, capability: Capability): void {
    if (!token.scopes.includes(capability))
      throw new NotionApiError(403, 'restricted_resource', RESTRICTED_MESSAGE);
  }

  databaseJson(db: DatabaseState): Record<string, unknown> {
    return {
      object: 'database',
      id: db.id,
      title: plainRichText(db.title),
      description: [],
      parent: { type: 'workspace', workspace: true },
      is_inline: false,
      in_trash: false,
      is_locked: false,
      created_time: iso(round(db.createdTime)),
      last_edited_time: iso(round(db.lastEditedTime)),
      data_sources: db.dataSourceIds.map((id) => ({ id, name: this.dataSources.get(id)?.name ?? '' })),
      icon: null,
      cover: null,
      url: `https://www.notion.so/${db.id.replaceAll('-', '')}`,
      public_url: null,
    };
  }

  dataSourceJson(ds: DataSourceState): Record<string, unknown> {
    const properties: Record<string, unknown> = {};
    for (const p of ds.properties) properties[p.name] = this.schemaJson(p);
    return {
      object: 'data_source',
      id: ds.id,
      created_time: iso(round(ds.createdTime)),
      last_edited_time: iso(round(ds.lastEditedTime)),
      created_by: { object: 'user', id: this.personId },
      last_edited_by: { object: 'user', id: this.personId },
      title: plainRichText(ds.name),
      description: [],
      icon: null,
      cover: null,
      properties,
      parent: { type: 'database_id', database_id: ds.databaseId },
      database_parent: { type: 'workspace', workspace: true },
      is_inline: false,
      archived: false,
      in_trash: false,
      url: `https://www.notion.so/${ds.databaseId.replaceAll('-', '')}`,
      public_url: null,
    };
  }

  private schemaJson(p: PropertySchema): Record<string, unknown> {
    const base = { id: p.id, name: p.name, description: p.description ?? '', type: p.type };
    const options = (p.options ?? []).map((o) => ({ ...o }));
    switch (p.type) {
      case 'select':
      case 'multi_select':
        return { ...base, [p.type]: { options } };
      case 'status':
        return { ...base, status: { options, groups: (p.groups ?? []).map((g: StatusGroup) => ({ ...g })) } };
      case 'number':
        return { ...base, number: { format: p.number?.format ?? 'number' } };
      case 'relation': {
        const r = p.relation;
        const target = r ? this.dataSources.get(r.dataSourceId) : undefined;
        const dual = r?.dualPropertyId
          ? target?.properties.find((x) => x.id === r.dualPropertyId)
          : undefined;
        return {
          ...base,
          relation: {
            database_id: r?.databaseId,
            data_source_id: r?.dataSourceId,
            ...(dual
              ? {
                  type: 'dual_property',
                  dual_property: { synced_property_name: dual.name, synced_property_id: dual.id },
                }
              : { type: 'single_property', single_property: {} }),
          },
        };
      }
      case 'formula':
        return { ...base, formula: { expression: p.formula?.expression ?? '' } };
      case 'rollup': {
        return {
          ...base,
          rollup: {
            relation_property_id: p.rollup?.relationPropertyId,
            rollup_property_name: 'title',
            rollup_property_id: 'title',
            function: p.rollup?.function ?? 'count',
          },
        };
      }
      case 'unique_id':
        return { ...base, unique_id: { prefix: p.uniqueId?.prefix ?? null } };
      default:
        return { ...base, [p.type]: {} };
    }
  }

  private listUsers(req: SimRequest): SimResponse {
    const all = [...this.users.values()];
    const pageSize = pageSizeOf(req.query.get('page_size'), 'query.page_size');
    const start = offsetCursor(req.query.get('start_cursor'), all.length);
    const slice = all.slice(start, start + pageSize);
    const more = start + pageSize < all.length;
    return json(200, {
      object: 'list',
      results: slice.map((u) => this.userJson(u.id)),
      next_cursor: more ? String(start + pageSize) : null,
      has_more: more,
      type: 'user',
      user: {},
      request_id: this.newId(),
    });
  }

  private search(token: TokenInfo, raw: unknown, modern: boolean): SimResponse {
    const body = (raw ?? {}) as Record<string, unknown>;
    const filter = body.filter as { property?: unknown; value?: unknown } | undefined;
    const allowed = modern ? ['page', 'data_source'] : ['page', 'database'];
    if (filter !== undefined) {
      if (filter?.property !== 'object')
        throw bodyFailed('body.filter.property', '`"object"`', filter?.property);
      if (!allowed.includes(String(filter.value)))
        throw bodyFailed('body.filter.value', allowed.map((a) => `\`"${a}"\``).join(' or '), filter.value);
    }
    const sort = body.sort as { direction?: unknown; timestamp?: unknown } | undefined;
    if (sort !== undefined && sort.timestamp !== 'last_edited_time')
      throw bodyFailed('body.sort.timestamp', '`"last_edited_time"`', sort?.timestamp);
    const pageSize = pageSizeOf(body.page_size, 'body.page_size');
    const q = typeof body.query === 'string' ? body.query.toLowerCase() : '';
    type Hit = { edited: number; created: number; id: string; json: () => Record<string, unknown> };
    const hits: Hit[] = [];
    if (!filter || filter.value === 'data_source' || filter.value === 'database') {
      for (const ds of this.dataSources.values()) {
        if (!this.canSee(token, ds.id) || !ds.name.toLowerCase().includes(q)) continue;
        hits.push({
          edited: ds.lastEditedTime,
          created: ds.createdTime,
          id: ds.id,
          json: () => this.dataSourceJson(ds),
        });
      }
    }
    if (!filter || filter.value === 'page') {
      for (const page of this.pages.values()) {
        if (page.inTrash || !this.canSee(token, page.dataSourceId)) continue;
        if (!this.pageTitle(page).toLowerCase().includes(q)) continue;
        hits.push({
          edited: page.lastEditedTime,
          created: page.createdTime,
          id: page.id,
          json: () => this.pageJson(page),
        });
      }
    }
    const dir = sort?.direction === 'ascending' ? 1 : -1;
    hits.sort((a, b) => dir * (a.edited - b.edited) || a.created - b.created || (a.id < b.id ? -1 : 1));
    const start = offsetCursor(typeof body.start_cursor === 'string' ? body.start_cursor : null, hits.length);
    const slice = hits.slice(start, start + pageSize);
    const more = start + pageSize < hits.length;
    return json(200, {
      object: 'list',
      results: slice.map((h) => h.json()),
      next_cursor: more ? String(start + pageSize) : null,
      has_more: more,
      type: 'page_or_data_source',
      page_or_data_source: {},
      request_id: this.newId(),
    });
  }

  /**
   * `filter_properties` (repeated, `filter_properties[]` too): only these properties (by id, or
   * name) come back on each page; undefined when not given.
   */
  private filterProperties(ds: DataSourceState, q: URLSearchParams): Set<string> | undefined {
    const keys = [...q.getAll('filter_properties'), ...q.getAll('filter_properties[]')];
    if (keys.length === 0) return undefined;
    const only = new Set<string>();
    for (const key of keys) {
      const p = this.property(ds, key);
      if (p) only.add(p.id);
    }
    return only;
  }

  private query(ds: DataSourceState, raw: unknown, q: URLSearchParams = new URLSearchParams()): SimResponse {
    const only = this.filterProperties(ds, q);
    const body = (raw ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body)) throw bodyFailed('body', 'an object', body);
    const pageSize = pageSizeOf(body.page_size, 'body.page_size');
    const predicate =
      body.filter === undefined ? () => true : this.compileFilter(ds, body.filter, 'body.filter', 0);
    const sorts = this.compileSorts(ds, body.sorts);
    const inTrash = body.in_trash === true;
    const candidates = [...this.pages.values()].filter(
      (p) => p.dataSourceId === ds.id && p.inTrash === inTrash && predicate(p),
    );
    const keyed = candidates
      .map((p) => ({ p, key: sorts.key(p) }))
      .sort((a, b) => sorts.compare(a.key, b.key));
    const fingerprint = JSON.stringify([body.filter ?? null, body.sorts ?? null, inTrash]);
    let start = 0;
    if (body.start_cursor !== undefined && body.start_cursor !== null) {
      const c = typeof body.start_cursor === 'string' ? this.cursors.get(body.start_cursor) : undefined;
      if (!c || c.scope !== ds.id || c.fingerprint !== fingerprint)
        throw validationError(`start_cursor provided is invalid: ${String(body.start_cursor)}`);
      // Continue strictly after the last page returned, by its sort key when the cursor was made.
      start = keyed.findIndex((k) => sorts.compare(k.key, c.after) > 0);
      if (start < 0) start = keyed.length;
    }
    // One query reaches at most `queryResultLimit` results; past them pagination stops, and every
    // page of a capped query says so in request_status.
    const cap =
      this.queryResultLimit === false ? keyed.length : Math.min(keyed.length, this.queryResultLimit);
    const capped = cap < keyed.length;
    const slice = keyed.slice(start, Math.min(start + pageSize, cap));
    const more = start + pageSize < cap;
    let next: string | null = null;
    if (more) {
      next = this.newId();
      this.cursors.set(next, { scope: ds.id, fingerprint, after: slice[slice.length - 1]?.key ?? [] });
    }
    return json(200, {
      object: 'list',
      results: slice.map(({ p }) => this.pageJson(p, only)),
      next_cursor: next,
      has_more: more,
      type: 'page_or_data_source',
      page_or_data_source: {},
      ...(capped
        ? { request_status: { type: 'incomplete', incomplete_reason: 'query_result_limit_reached' } }
        : {}),
      request_id: this.newId(),
    });
  }

  /** Sort keys end with the exact creation time and the id, so every order is total and stable. */
  private compileSorts(ds: DataSourceState, raw: unknown) {
    if (raw !== undefined && !Array.isArray(raw)) throw bodyFailed('body.sorts', 'an array', raw);
    const specs = ((raw as unknown[] | undefined) ?? []).map((s, i) => {
      const o = s as { property?: unknown; timestamp?: unknown; direction?: unknown };
      const path = `body.sorts[${i}]`;
      if (o?.direction !== 'ascending' && o?.direction !== 'descending')
        throw bodyFailed(`${path}.direction`, '`"ascending"` or `"descending"`', o?.direction);
      const dir = o.direction === 'ascending' ? 1 : -1;
      if (o.timestamp !== undefined) {
        if (o.timestamp !== 'created_time' && o.timestamp !== 'last_edited_time')
          throw bodyFailed(`${path}.timestamp`, '`"created_time"` or `"last_edited_time"`', o.timestamp);
        const ts = o.timestamp;
        return {
          dir,
          get: (p: PageState): unknown => round(ts === 'created_time' ? p.createdTime : p.lastEditedTime),
        };
      }
      if (typeof o.property !== 'string') throw bodyFailed(`${path}.property`, 'a string', o.property);
      const prop = this.property(ds, o.property);
      if (!prop) throw validationError(`Could not find sort property with name or id: ${o.property}`);
      return { dir, get: (p: PageState) => this.sortValue(p, prop) };
    });
    const key = (p: PageState): unknown[] => [...specs.map((s) => s.get(p)), p.createdTime, p.id];
    const compare = (a: unknown[], b: unknown[]): number => {
      for (let i = 0; i < a.length; i++) {
        const dir = specs[i]?.dir ?? 1;
        const x = a[i];
        const y = b[i];
        if (x === y) continue;
        // Empty values sort last in either direction.
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : 1;
        if (c !== 0) return c * dir;
      }
      return 0;
    };
    return { key, compare };
  }

  private sortValue(page: PageState, p: PropertySchema): unknown {
    const v = page.values.get(p.id);
    switch (p.type) {
      case 'title':
      case 'rich_text': {
        const t = richTextPlain((v as RichText[]) ?? []).toLowerCase();
        return t === '' ? null : t;
      }
      case 'select':
      case 'status': {
        const i = p.options?.findIndex((o) => o.id === v) ?? -1;
        return i < 0 ? null : i;
      }
      case 'multi_select': {
        const first = ((v as string[]) ?? [])[0];
        return first ? (p.options?.find((o) => o.id === first)?.name ?? null) : null;
      }
      case 'date': {
        const d = v as DateValue | null | undefined;
        return d ? Date.parse(d.start) : null;
      }
      case 'checkbox':
        return v === true ? 1 : 0;
      case 'created_time':
        return round(page.createdTime);
      case 'last_edited_time':
        return round(page.lastEditedTime);
      case 'unique_id':
        return page.uniqueNumber;
      case 'formula': {
        const f = this.formulaValue(page, p);
        return (f as Record<string, unknown>)[f.type] ?? null;
      }
      case 'relation':
      case 'people':
        return ((v as string[]) ?? []).length;
      default:
        return v === undefined || v === '' ? null : (v as unknown);
    }
  }

  /** The documented filter grammar: property and timestamp conditions, `and`/`or` up to two levels deep. */
  private compileFilter(
    ds: DataSourceState,
    raw: unknown,
    path: string,
    depth: number,
  ): (p: PageState) => boolean {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw bodyFailed(path, 'an object', raw);
    const f = raw as Record<string, unknown>;
    for (const op of ['and', 'or'] as const) {
      if (f[op] === undefined) continue;
      if (depth >= 2)
        throw validationError(`body failed validation: ${path} should be at most two levels of nesting.`);
      if (!Array.isArray(f[op])) throw bodyFailed(`${path}.${op}`, 'an array', f[op]);
      const parts = (f[op] as unknown[]).map((x, i) =>
        this.compileFilter(ds, x, `${path}.${op}[${i}]`, depth + 1),
      );
      return op === 'and' ? (p) => parts.every((g) => g(p)) : (p) => parts.some((g) => g(p));
    }
    if (f.timestamp !== undefined) {
      const ts = f.timestamp;
      if (ts !== 'created_time' && ts !== 'last_edited_time')
        throw bodyFailed(`${path}.timestamp`, '`"created_time"` or `"last_edited_time"`', ts);
      const cond = dateCondition(f[ts], `${path}.${ts}`, this.clock.now());
      // Timestamps are compared as Notion stores them: rounded to the minute.
      return (p) => cond(round(ts === 'created_time' ? p.createdTime : p.lastEditedTime), false);
    }
    if (typeof f.property !== 'string') throw bodyFailed(`${path}.property`, 'a string', f.property);
    const prop = this.property(ds, f.property);
    if (!prop) throw validationError(`Could not find property with name or id: ${f.property}`);
    const kinds = Object.keys(f).filter((k) => k !== 'property' && k !== 'type');
    const kind = kinds[0];
    if (!kind || kinds.length !== 1)
      throw validationError(`body failed validation: ${path} should have one condition.`);
    const expected = filterKind(prop.type);
    // Text-like properties take their own type's key (`email`, `url`, `phone_number`, `title`,
    // `rich_text`), as Notion's filter reference documents; `rich_text` is accepted for each too.
    if (
      kind !== expected &&
      !(expected === 'rich_text' && (kind === 'title' || kind === prop.type)) &&
      !(kind === 'rich_text' && prop.type === 'title')
    )
      throw validationError(
        `body failed validation: ${path}.${kind} is not valid for property "${prop.name}" of type ${prop.type}.`,
      );
    const c = f[kind] as Record<string, unknown>;
    if (typeof c !== 'object' || c === null) throw bodyFailed(`${path}.${kind}`, 'an object', c);
    const cpath = `${path}.${kind}`;
    const value = (p: PageState) => page_value(this, p, prop);
    switch (expected) {
      case 'rich_text':
        return textCondition(c, cpath, (p) => String(value(p) ?? ''));
      case 'number':
        return numberCondition(c, cpath, (p) => value(p) as number | null);
      case 'checkbox': {
        if (typeof c.equals === 'boolean') return (p) => value(p) === c.equals;
        if (typeof c.does_not_equal === 'boolean') return (p) => value(p) !== c.does_not_equal;
        throw validationError(`body failed validation: ${cpath} should define equals or does_not_equal.`);
      }
      case 'select':
      case 'status':
        return textCondition(c, cpath, (p) => String(value(p) ?? ''), true);
      case 'multi_select':
      case 'relation':
      case 'people':
        return listCondition(c, cpath, (p) => (value(p) as string[]) ?? []);
      case 'date': {
        const cond = dateCondition(c, cpath, this.clock.now());
        return (p) => {
          const d = value(p) as DateValue | null;
          return cond(
            d ? Date.parse(d.start.length === 10 ? `${d.start}T00:00:00Z` : d.start) : null,
            d?.start.length === 10,
          );
        };
      }
      case 'unique_id':
        return numberCondition(c, cpath, (p) => p.uniqueNumber);
      default:
        throw validationError(`body failed validation: ${cpath} is not supported by this simulator.`);
    }
  }

  private propertyItem(page: PageState, propertyKey: string, q: URLSearchParams): SimResponse {
    const ds = this.dataSource(page.dataSourceId);
    const p = this.property(ds, propertyKey);
    if (!p) throw notFound('property', propertyKey);
    const paginated = ['title', 'rich_text', 'relation', 'people'].includes(p.type);
    if (!paginated) {
      const v = this.renderValue(page, p);
      return json(200, { object: 'property_item', id: p.id, type: p.type, ...v, request_id: this.newId() });
    }
    const stored = (page.values.get(p.id) as unknown[] | undefined) ?? [];
    const pageSize = pageSizeOf(q.get('page_size'), 'query.page_size');
    const start = offsetCursor(q.get('start_cursor'), stored.length);
    const slice = stored.slice(start, start + pageSize);
    const more = start + pageSize < stored.length;
    const item = (x: unknown) => {
      if (p.type === 'relation') return { relation: { id: x } };
      if (p.type === 'people') return { people: this.userJson(String(x)) };
      return { [p.type]: x };
    };
    return json(200, {
      object: 'list',
      results: slice.map((x) => ({ object: 'property_item', id: p.id, type: p.type, ...item(x) })),
      next_cursor: more ? String(start + pageSize) : null,
      has_more: more,
      type: 'property_item',
      property_item: { id: p.id, next_url: null, type: p.type, [p.type]: {} },
      request_id: this.newId(),
    });
  }

  private createRoute(token: TokenInfo, raw: unknown): SimResponse {
    this.requireCapability(token, 'insert_content');
    const body = (raw ?? {}) as Record<string, unknown>;
    const parent = body.parent as Record<string, unknown> | undefined;
    if (typeof parent !== 'object' || parent === null) throw bodyFailed('body.parent', 'defined', parent);
    let ds: DataSourceState | undefined;
    if (typeof parent.data_source_id === 'string') {
      ds = this.dataSources.get(normalizeId(parent.data_source_id) ?? '');
      if (!ds || !this.canSee(token, ds.id)) throw notFound('data source', parent.data_source_id);
    } else if (typeof parent.database_id === 'string') {
      const db = this.databases.get(normalizeId(parent.database_id) ?? '');
      if (!db?.dataSourceIds.some((d) => this.canSee(token, d)))
        throw notFound('database', parent.database_id);
      if (db.dataSourceIds.length !== 1)
        throw new NotionApiError(
          400,
          'validation_error',
          'Databases with multiple data sources are not supported as a parent; use data_source_id.',
        );
      ds = this.dataSources.get(db.dataSourceIds[0] as string);
    } else {
      throw validationError(
        'body failed validation. Fix one: body.parent.data_source_id should be defined, instead was `undefined`. body.parent.database_id should be defined, instead was `undefined`. body.parent.page_id should be defined, instead was `undefined`.',
      );
    }
    const page = this.create(ds as DataSourceState, body.properties ?? {}, token.userId);
    return json(200, { ...this.pageJson(page), request_id: this.newId() });
  }

  // -------------------------------------------------------------------------------------------
  // OAuth (public integrations)

  /** What the person answers on the consent screen of `GET /v1/oauth/authorize`. */
  oauthConsent: 'allow' | 'deny' = 'allow';

  registerOAuthClient(client: OAuthClient): void {
    this.oauthClients.set(client.clientId, client);
  }

  /**
   * The token endpoint answers errors in OAuth's shape (`{"error":"invalid_grant",
   * "error_description":...}`), not in the API's `{object:"error", code, message}`.
   */
  private oauth(req: SimRequest, rest: string[]): SimResponse {
    if (rest[0] === 'authorize' && req.method === 'GET') return this.authorize(req);
    if (rest.length !== 1 || req.method !== 'POST') throw invalidUrl();
    const oauthError = (status: number, error: string, description: string) =>
      json(status, { error, error_description: description, request_id: this.newId() });
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const [clientId, secret] = basic?.[1] ? Buffer.from(basic[1], 'base64').toString('utf8').split(':') : [];
    const client = this.oauthClients.get(clientId ?? '');
    if (!client || client.clientSecret !== secret)
      return oauthError(401, 'invalid_client', 'Invalid client credentials.');
    if (req.bodyInvalid) return oauthError(400, 'invalid_request', 'Error parsing JSON body.');
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (rest[0] === 'revoke') {
      if (typeof body.token !== 'string') throw bodyFailed('body.token', 'a string', body.token);
      this.tokens.revoke(body.token);
      return json(200, { request_id: this.newId() });
    }
    if (rest[0] !== 'token') throw invalidUrl();
    if (body.grant_type === 'authorization_code') {
      const code = this.authCodes.get(String(body.code ?? ''));
      if (!code || code.used || code.clientId !== client.clientId || this.clock.now() >= code.expiresAt)
        return oauthError(400, 'invalid_grant', 'Invalid code: this code has been revoked.');
      if (body.redirect_uri !== undefined && body.redirect_uri !== code.redirectUri)
        return oauthError(
          400,
          'invalid_grant',
          'Invalid redirect_uri: it does not match the authorization request.',
        );
      code.used = true;
      return json(200, this.issueTokens(client.clientId, this.newId()));
    }
    if (body.grant_type === 'refresh_token') {
      const rt = this.refreshTokens.get(String(body.refresh_token ?? ''));
      if (!rt || rt.used || rt.clientId !== client.clientId)
        return oauthError(400, 'invalid_grant', 'Invalid refresh token.');
      rt.used = true;
      return json(200, this.issueTokens(client.clientId, rt.botId, rt.dataSources));
    }
    return oauthError(
      400,
      'unsupported_grant_type',
      `body.grant_type should be \`"authorization_code"\` or \`"refresh_token"\`, instead was \`${show(body.grant_type)}\`.`,
    );
  }

  /**
   * A public integration's grant made in process (as if a person had consented and picked
   * `dataSources` on Notion's page picker; every data source when not given): the token answer
   * `POST /v1/oauth/token` would give. Its refresh tokens keep the same data sources.
   */
  grantOAuth(options: { clientId: string; botId?: string; dataSources?: string[] }) {
    if (!this.oauthClients.has(options.clientId)) throw new Error(`unknown OAuth client ${options.clientId}`);
    return this.issueTokens(options.clientId, options.botId ?? this.newId(), options.dataSources);
  }

  private authorize(req: SimRequest): SimResponse {
    const q = req.query;
    const client = this.oauthClients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client) throw validationError('Invalid client_id.');
    if (!redirectUri || (client.redirectUris.length > 0 && !client.redirectUris.includes(redirectUri)))
      throw validationError('Invalid redirect_uri.');
    const redirect = new URL(redirectUri);
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    if (q.get('response_type') !== 'code') {
      redirect.searchParams.set('error', 'unsupported_response_type');
      return { status: 302, headers: { location: redirect.toString() } };
    }
    if (q.get('owner') !== 'user') throw validationError('Invalid owner: it should be `user`.');
    // The person cancels on the consent screen: back with an error and no code.
    if (this.oauthConsent === 'deny') {
      redirect.searchParams.set('error', 'access_denied');
      return { status: 302, headers: { location: redirect.toString() } };
    }
    const code = randomBytes(18).toString('base64url');
    this.authCodes.set(code, {
      clientId: client.clientId,
      redirectUri,
      expiresAt: this.clock.now() + 10 * 60_000,
      used: false,
    });
    redirect.searchParams.set('code', code);
    return { status: 302, headers: { location: redirect.toString() } };
  }

  private issueTokens(clientId: string, botId: string, dataSources?: string[]) {
    const access = `ntn_${randomBytes(30).toString('hex').slice(0, 46)}`;
    const refresh = `nrt_${randomBytes(30).toString('hex').slice(0, 46)}`;
    if (!this.users.has(botId)) this.users.set(botId, { id: botId, name: 'Lockstep (public)', type: 'bot' });
    this.tokens.add({
      token: access,
      scopes: [...ALL_CAPABILITIES],
      kind: 'oauth',
      userId: botId,
      ...(dataSources ? { bases: dataSources } : {}),
      ...(this.oauthTtlMs !== undefined ? { expiresAt: this.clock.now() + this.oauthTtlMs } : {}),
    });
    this.refreshTokens.set(refresh, {
      clientId,
      used: false,
      botId,
      ...(dataSources ? { dataSources } : {}),
    });
    return {
      access_token: access,
      token_type: 'bearer',
      refresh_token: refresh,
      bot_id: botId,
      workspace_id: this.workspaceId,
      workspace_name: this.workspaceName,
      workspace_icon: null,
      owner: { type: 'user', user: { object: 'user', id: this.personId } },
      duplicated_template_id: null,
      request_id: this.newId(),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Definitions used to build data sources (seed data, tests)

export type PropertyDef = {
  name: string;
  type: PropertyType;
  description?: string;
  /** select, multi_select, status */
  options?: (string | { name: string; color?: string })[];
  /** status groups by option name (default: one group with every option) */
  groups?: { name: string; options: string[] }[];
  format?: string;
  /** relation */
  dataSourceId?: string;
  syncedPropertyName?: string;
  /** formula */
  expression?: string;
  compute?: (read: (propertyName: string) => unknown) => FormulaResult;
  /** rollup (count over this relation property) */
  relationProperty?: string;
  /** unique_id */
  prefix?: string;
};

// ---------------------------------------------------------------------------------------------
// Helpers

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const invalidUrl = () => new NotionApiError(400, 'invalid_request_url', 'Invalid request URL.');

function notFound(kind: string, id: string): NotionApiError {
  return new NotionApiError(
    404,
    'object_not_found',
    `Could not find ${kind} with ID: ${normalizeId(id) ?? id}. Make sure the relevant pages and databases are shared with your integration.`,
  );
}

function pageSizeOf(raw: unknown, path: string): number {
  if (raw === undefined || raw === null) return MAX_PAGE_SIZE;
  const n = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw bodyFailed(path, 'an integer', raw);
  if (n < 1)
    throw validationError(`body failed validation: ${path} should be ≥ \`1\`, instead was \`${n}\`.`);
  if (n > MAX_PAGE_SIZE)
    throw validationError(
      `body failed validation: ${path} should be ≤ \`${MAX_PAGE_SIZE}\`, instead was \`${n}\`.`,
    );
  return n;
}

function offsetCursor(raw: string | null, length: number): number {
  if (raw === null || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > length)
    throw validationError(`start_cursor provided is invalid: ${raw}`);
  return n;
}

function filterKind(type: PropertyType): string {
  switch (type) {
    case 'title':
    case 'rich_text':
    case 'url':
    case 'email':
    case 'phone_number':
      return 'rich_text';
    case 'created_time':
    case 'last_edited_time':
      return 'date';
    default:
      return type;
  }
}

/** The value a filter looks at: text for text types, option names, id lists, dates. */
function page_value(state: NotionState, page: PageState, p: PropertySchema): unknown {
  const v = page.values.get(p.id);
  switch (p.type) {
    case 'title':
    case 'rich_text':
      return richTextPlain((v as RichText[]) ?? []);
    case 'select':
    case 'status':
      return p.options?.find((o) => o.id === v)?.name ?? null;
    case 'multi_select':
      return ((v as string[]) ?? []).map((id) => p.options?.find((o) => o.id === id)?.name ?? '');
    case 'created_time':
      return { start: iso(round(page.createdTime)), end: null, time_zone: null };
    case 'last_edited_time':
      return { start: iso(round(page.lastEditedTime)), end: null, time_zone: null };
    case 'checkbox':
      return v === true;
    default:
      void state;
      return v ?? null;
  }
}

function textCondition(
  c: Record<string, unknown>,
  path: string,
  get: (p: PageState) => string,
  exactOnly = false,
): (p: PageState) => boolean {
  const [op, arg] = Object.entries(c)[0] ?? [];
  if (op === 'is_empty') return (p) => get(p) === '';
  if (op === 'is_not_empty') return (p) => get(p) !== '';
  if (typeof arg !== 'string') throw bodyFailed(`${path}.${op}`, 'a string', arg);
  const ops: Record<string, (s: string) => boolean> = {
    equals: (s) => s === arg,
    does_not_equal: (s) => s !== arg,
    ...(exactOnly
      ? {}
      : {
          contains: (s: string) => s.toLowerCase().includes(arg.toLowerCase()),
          does_not_contain: (s: string) => !s.toLowerCase().includes(arg.toLowerCase()),
          starts_with: (s: string) => s.toLowerCase().startsWith(arg.toLowerCase()),
          ends_with: (s: string) => s.toLowerCase().endsWith(arg.toLowerCase()),
        }),
  };
  const fn = op ? ops[op] : undefined;
  if (!fn) throw validationError(`body failed validation: ${path} has an unknown condition ${show(op)}.`);
  return (p) => fn(get(p));
}

function numberCondition(
  c: Record<string, unknown>,
  path: string,
  get: (p: PageState) => number | null,
): (p: PageState) => boolean {
  const [op, arg] = Object.entries(c)[0] ?? [];
  if (op === 'is_empty') return (p) => get(p) === null;
  if (op === 'is_not_empty') return (p) => get(p) !== null;
  if (typeof arg !== 'number') throw bodyFailed(`${path}.${op}`, 'a number', arg);
  const ops: Record<string, (n: number) => boolean> = {
    equals: (n) => n === arg,
    does_not_equal: (n) => n !== arg,
    greater_than: (n) => n > arg,
    less_than: (n) => n < arg,
    greater_than_or_equal_to: (n) => n >= arg,
    less_than_or_equal_to: (n) => n <= arg,
  };
  const fn = op ? ops[op] : undefined;
  if (!fn) throw validationError(`body failed validation: ${path} has an unknown condition ${show(op)}.`);
  return (p) => {
    const n = get(p);
    return n === null ? op === 'does_not_equal' : fn(n);
  };
}

function listCondition(
  c: Record<string, unknown>,
  path: string,
  get: (p: PageState) => string[],
): (p: PageState) => boolean {
  const [op, arg] = Object.entries(c)[0] ?? [];
  if (op === 'is_empty') return (p) => get(p).length === 0;
  if (op === 'is_not_empty') return (p) => get(p).length > 0;
  if (typeof arg !== 'string') throw bodyFailed(`${path}.${op}`, 'a string', arg);
  const want = normalizeId(arg) ?? arg;
  if (op === 'contains') return (p) => get(p).includes(want);
  if (op === 'does_not_contain') return (p) => !get(p).includes(want);
  throw validationError(`body failed validation: ${path} has an unknown condition ${show(op)}.`);
}

/** Date conditions; `at` is epoch ms (date-only values at UTC midnight), null when empty. */
function dateCondition(
  raw: unknown,
  path: string,
  now: number,
): (at: number | null, dateOnly: boolean) => boolean {
  if (typeof raw !== 'object' || raw === null) throw bodyFailed(path, 'an object', raw);
  const [op, arg] = Object.entries(raw as Record<string, unknown>)[0] ?? [];
  if (op === 'is_empty') return (at) => at === null;
  if (op === 'is_not_empty') return (at) => at !== null;
  const day = 86_400_000;
  const relative: Record<string, [number, number]> = {
    past_week: [now - 7 * day, now],
    past_month: [now - 30 * day, now],
    past_year: [now - 365 * day, now],
    next_week: [now, now + 7 * day],
    next_month: [now, now + 30 * day],
    next_year: [now, now + 365 * day],
  };
  if (op && relative[op]) {
    const [from, to] = relative[op] as [number, number];
    return (at) => at !== null && at >= from && at <= to;
  }
  if (typeof arg !== 'string' || Number.isNaN(Date.parse(arg)))
    throw validationError(
      `body failed validation: ${path}.${op} should be a valid ISO 8601 date string, instead was \`${show(arg)}\`.`,
    );
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(arg);
  const t = Date.parse(dateOnly ? `${arg}T00:00:00Z` : arg);
  const sameDay = (at: number) => Math.floor(at / day) === Math.floor(t / day);
  const ops: Record<string, (at: number, valueDateOnly: boolean) => boolean> = {
    equals: (at, vd) => (dateOnly || vd ? sameDay(at) : at === t),
    before: (at) => at < t,
    after: (at) => (dateOnly ? at >= t + day : at > t),
    on_or_before: (at) => (dateOnly ? at < t + day : at <= t),
    on_or_after: (at) => at >= t,
  };
  const fn = op ? ops[op] : undefined;
  if (!fn) throw validationError(`body failed validation: ${path} has an unknown condition ${show(op)}.`);
  return (at, vd) => at !== null && fn(at, vd);
}

/** Simple values (as a person would type them) to API property values. */
export function simpleToApi(p: PropertySchema, v: unknown): unknown {
  switch (p.type) {
    case 'title':
    case 'rich_text':
      return { [p.type]: plainRichText(v === null || v === undefined ? '' : String(v)) };
    case 'number':
      return { number: v === null || v === undefined || v === '' ? null : Number(v) };
    case 'checkbox':
      return { checkbox: v === true };
    case 'select':
    case 'status':
      return { [p.type]: v === null || v === undefined || v === '' ? null : { name: String(v) } };
    case 'multi_select':
      return { multi_select: ((v as string[] | null) ?? []).map((name) => ({ name })) };
    case 'date':
      return {
        date: v === null || v === undefined || v === '' ? null : typeof v === 'string' ? { start: v } : v,
      };
    case 'people':
    case 'relation':
      return { [p.type]: ((v as string[] | null) ?? []).map((id) => ({ id })) };
    case 'files':
      return { files: ((v as string[] | null) ?? []).map((url) => ({ name: url, external: { url } })) };
    default:
      return { [p.type]: v === '' ? null : v };
  }
}

// ---------------------------------------------------------------------------------------------
// Server

export type NotionSimulatorServer = RunningServer & {
  state: NotionState;
  faults: FaultInjector;
  requestLog: RequestLog;
};

export async function startNotionServer(state: NotionState): Promise<NotionSimulatorServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const server = await startHttpServer({
    handler: (req) => state.handle(req),
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => state.rateLimitResponse(1),
  });
  return { ...server, state, faults, requestLog };
}
