/**
 * HTTP routes of the Pipedrive simulator: auth (api token, OAuth bearer), token-based rate
 * limits, API v2 persons/organizations/deals (cursor lists, single reads, one-entity writes,
 * search), field definitions (v1 and v2), v1 lists with start/limit, v1 webhooks, and the OAuth
 * server's /oauth/authorize, /oauth/token and /oauth/revoke. Bodies follow the shapes of
 * Pipedrive's OpenAPI descriptions as published in its official client (pipedrive on npm).
 */
import { randomBytes } from 'node:crypto';
import {
  bearerToken,
  FaultInjector,
  json,
  RequestLog,
  type RunningServer,
  type SimRequest,
  type SimResponse,
  startHttpServer,
} from '../http.ts';
import {
  ENTITY_KINDS,
  type EntityKind,
  FIELDS_PATH,
  renderFieldV1,
  renderFieldV2,
  SINGULAR,
  v1Time,
} from './fields.ts';
import {
  badRequest,
  type Entity,
  ERROR_INFO,
  notFound,
  PipedriveApiError,
  type PipedriveState,
  parseRfc3339,
} from './model.ts';
import { type EndpointClass, RateLimiter, type RateLimitOptions, rateLimitBody } from './rate-limit.ts';
import { renderWebhook, type WebhookDispatcher } from './webhooks.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
export const MAX_IDS = 100;
export const MAX_CUSTOM_FIELD_KEYS = 15;
export const OAUTH_TOKEN_LIFETIME_SECONDS = 3599;

export type OAuthClient = { clientId: string; clientSecret: string; redirectUri: string };

export type PipedriveServerOptions = {
  /** `false` turns the limits off. */
  rateLimit?: false | RateLimitOptions;
  /** OAuth access token lifetime (default 3599 s, as Pipedrive's expires_in). */
  oauthTokenLifetimeSeconds?: number;
};

export type OAuthServer = {
  clients: Map<string, OAuthClient>;
  /** Issue an authorization code, as the consent screen would after the user approves. */
  authorize: (clientId: string, redirectUri?: string, userId?: number) => string;
  /** Refresh tokens still valid, by token. */
  refreshTokens: Map<string, { clientId: string; userId: number }>;
};

export type PipedriveServer = RunningServer & {
  /**
   * The company's own API host (`https://{company_domain}.pipedrive.com` in Pipedrive): a second
   * listener serving the same API, the `api_domain` of every OAuth token answer.
   */
  companyUrl: string;
  faults: FaultInjector;
  /** Every request, on either host. */
  requestLog: RequestLog;
  /** The requests made on the company host only. */
  companyRequestLog: RequestLog;
  limiter: RateLimiter;
  oauth: OAuthServer;
};

/** A request log that also records into another (the simulator's log of every request). */
class TeeRequestLog extends RequestLog {
  constructor(private readonly all: RequestLog) {
    super();
  }
  override record(entry: Parameters<RequestLog['record']>[0]): void {
    super.record(entry);
    this.all.record(entry);
  }
}

type Ctx = { req: SimRequest; origin: string; userId: number };

type Route = {
  version: 'v1' | 'v2';
  cls: EndpointClass;
  run: (ctx: Ctx) => SimResponse | Promise<SimResponse>;
};

const ok = (data: unknown, additional?: unknown, status = 200): SimResponse =>
  json(status, { success: true, data, ...(additional !== undefined ? { additional_data: additional } : {}) });

function unauthorized(message: string): SimResponse {
  return json(401, {
    success: false,
    error: message,
    errorCode: 401,
    error_info: ERROR_INFO,
    data: null,
    additional_data: null,
  });
}

function parseId(raw: string): number {
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id < 1)
    throw badRequest('id must be a positive integer');
  return id;
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const raw = q.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`${name} must be an integer`);
  return Number(raw);
}

function listParam(q: URLSearchParams, name: string): string[] | undefined {
  const raw = q.get(name);
  if (raw === null || raw === '') return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

type Cursor = { k: number; i: number };

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof c.k === 'number' && typeof c.i === 'number') return { k: c.k, i: c.i };
  } catch {
    // fall through
  }
  throw badRequest('Invalid cursor');
}

export async function startPipedriveServer(
  state: PipedriveState,
  webhooks: WebhookDispatcher,
  oauthClients: OAuthClient[],
  options: PipedriveServerOptions = {},
): Promise<PipedriveServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(state.clock, options.rateLimit || {}, options.rateLimit !== false);
  const lifetime = options.oauthTokenLifetimeSeconds ?? OAUTH_TOKEN_LIFETIME_SECONDS;
  const companyRequestLog = new TeeRequestLog(requestLog);
  /** Set once the company host listens: OAuth token answers name it as `api_domain`. */
  let companyUrl = '';

  // ---------------------------------------------------------------------------------------------
  // OAuth

  const clients = new Map(oauthClients.map((c) => [c.clientId, c]));
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; userId: number; expiresAt: number }
  >();
  const refreshTokens = new Map<string, { clientId: string; userId: number }>();
  /** Access tokens issued under each refresh token (revoking the refresh token ends them). */
  const grantAccess = new Map<string, string[]>();
  const oauth: OAuthServer = {
    clients,
    refreshTokens,
    authorize: (clientId, redirectUri, userId = state.defaultUserId) => {
      const client = clients.get(clientId);
      if (!client) throw new Error(`Unknown OAuth client ${clientId}`);
      const code = `${state.companyId}.${userId}.${randomBytes(16).toString('hex')}`;
      codes.set(code, {
        clientId,
        redirectUri: redirectUri ?? client.redirectUri,
        userId,
        expiresAt: state.clock.now() + 5 * 60_000,
      });
      return code;
    },
  };

  function issueTokens(clientId: string, userId: number, refresh?: string): SimResponse {
    const access = `${state.companyId}:${userId}:${randomBytes(20).toString('hex')}`;
    state.tokens.add({
      token: access,
      scopes: ['base', 'contacts:full', 'deals:full'],
      kind: 'oauth',
      userId: String(userId),
      expiresAt: state.clock.now() + lifetime * 1000,
    });
    const refreshToken = refresh ?? `${state.companyId}:${userId}:${randomBytes(20).toString('hex')}`;
    refreshTokens.set(refreshToken, { clientId, userId });
    grantAccess.set(refreshToken, [...(grantAccess.get(refreshToken) ?? []), access]);
    return json(200, {
      access_token: access,
      token_type: 'Bearer',
      refresh_token: refreshToken,
      scope: 'base,contacts:full,deals:full',
      expires_in: lifetime,
      // The company's own host, where Pipedrive asks apps to send their API requests.
      api_domain: companyUrl,
    });
  }

  function clientFromBasic(req: SimRequest): OAuthClient | undefined {
    const m = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m?.[1]) return undefined;
    const [id, ...rest] = Buffer.from(m[1], 'base64').toString('utf8').split(':');
    const client = clients.get(id ?? '');
    return client && client.clientSecret === rest.join(':') ? client : undefined;
  }

  const oauthError = (status: number, error: string, description: string) =>
    json(status, { error, error_description: description });

  function oauthRoute(req: SimRequest): SimResponse | undefined {
    if (req.path === '/oauth/authorize' && req.method === 'GET') {
      // The user approves at once: redirect back with a code (and the state given).
      const clientId = req.query.get('client_id') ?? '';
      const client = clients.get(clientId);
      if (!client) return oauthError(400, 'invalid_client', 'Unknown client_id');
      const redirectUri = req.query.get('redirect_uri') ?? client.redirectUri;
      if (redirectUri !== client.redirectUri)
        return oauthError(400, 'invalid_request', 'redirect_uri mismatch');
      const target = new URL(redirectUri);
      target.searchParams.set('code', oauth.authorize(clientId, redirectUri));
      const st = req.query.get('state');
      if (st !== null) target.searchParams.set('state', st);
      return { status: 302, headers: { location: target.toString() } };
    }
    if (req.path === '/oauth/token' && req.method === 'POST') {
      const client = clientFromBasic(req);
      if (!client) return oauthError(401, 'invalid_client', 'Invalid client credentials');
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (body.grant_type === 'authorization_code') {
        const code = typeof body.code === 'string' ? codes.get(body.code) : undefined;
        if (!code || code.clientId !== client.clientId || code.expiresAt <= state.clock.now())
          return oauthError(400, 'invalid_grant', 'Invalid or expired authorization code');
        if (body.redirect_uri !== undefined && body.redirect_uri !== code.redirectUri)
          return oauthError(400, 'invalid_grant', 'redirect_uri mismatch');
        codes.delete(body.code as string);
        return issueTokens(client.clientId, code.userId);
      }
      if (body.grant_type === 'refresh_token') {
        const token = typeof body.refresh_token === 'string' ? body.refresh_token : '';
        const known = refreshTokens.get(token);
        if (!known || known.clientId !== client.clientId)
          return oauthError(400, 'invalid_grant', 'Invalid refresh token');
        return issueTokens(client.clientId, known.userId, token);
      }
      return oauthError(
        400,
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token',
      );
    }
    if (req.path === '/oauth/revoke' && req.method === 'POST') {
      const client = clientFromBasic(req);
      if (!client) return oauthError(401, 'invalid_client', 'Invalid client credentials');
      const body = (req.body ?? {}) as Record<string, unknown>;
      const token = typeof body.token === 'string' ? decodeURIComponent(body.token) : '';
      if (refreshTokens.has(token)) {
        // Revoking the refresh token ends the whole grant: its access tokens too.
        refreshTokens.delete(token);
        for (const t of grantAccess.get(token) ?? []) state.tokens.revoke(t);
        grantAccess.delete(token);
      } else state.tokens.revoke(token);
      return { status: 200 };
    }
    return undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Dispatch

  async function handle(req: SimRequest): Promise<SimResponse> {
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    const oauthResponse = oauthRoute(req);
    if (oauthResponse) return oauthResponse;

    const parts = req.path.split('/').filter((p) => p !== '');
    let route: Route | undefined;
    try {
      route = matchRoute(req.method, parts);
    } catch (err) {
      if (err instanceof PipedriveApiError) return json(err.status, err.body);
      throw err;
    }
    if (!route) return json(404, new PipedriveApiError(404, 'Unknown method .').body);

    // api_token (header or query) or an OAuth bearer token.
    const bearer = bearerToken(req.headers);
    const headerToken = req.headers['x-api-token'];
    const apiToken =
      (Array.isArray(headerToken) ? headerToken[0] : headerToken) ?? req.query.get('api_token');
    const token = bearer ?? apiToken ?? undefined;
    const check = state.tokens.check(token);
    if (!check.ok || (bearer === undefined && check.info.kind !== 'pat')) {
      if (bearer !== undefined) {
        return unauthorized(
          !check.ok && check.reason === 'expired'
            ? 'Invalid token: access token is expired'
            : 'Invalid token: access token is invalid',
        );
      }
      return unauthorized(
        apiToken ? 'unauthorized access' : 'You need to be authorized to make this request.',
      );
    }
    const tokenValue = check.info.token;
    const refused = limiter.take(tokenValue, limiter.cost(route.version, route.cls));
    if (refused) return limiter.refusal(refused, tokenValue);

    let response: SimResponse;
    try {
      if (req.bodyInvalid) throw badRequest('Invalid JSON in the request body');
      response = await route.run({ req, origin, userId: Number(check.info.userId) });
    } catch (err) {
      if (!(err instanceof PipedriveApiError)) throw err;
      const webhookErrors = (err as { webhookErrors?: Record<string, string> }).webhookErrors;
      response = webhookErrors
        ? json(400, { success: false, status: 'error', errors: webhookErrors })
        : json(err.status, err.body);
    }
    response.headers = { ...limiter.headers(tokenValue), ...response.headers };
    return response;
  }

  function matchRoute(method: string, p: string[]): Route | undefined {
    const r = (version: Route['version'], cls: EndpointClass, run: Route['run']): Route => ({
      version,
      cls,
      run,
    });
    if (p[0] !== 'api') return undefined;
    const version = p[1];
    const kind = ENTITY_KINDS.find((k) => k === p[2]);
    const fieldsKind = p[2] !== undefined ? FIELDS_PATH[p[2]] : undefined;

    if (version === 'v2') {
      if (kind && p.length === 3) {
        if (method === 'GET') return r('v2', 'list', (c) => listV2(kind, c));
        if (method === 'POST') return r('v2', 'write', (c) => createV2(kind, c));
        return undefined;
      }
      if (kind && p.length === 4 && p[3] === 'search' && method === 'GET')
        return r('v2', 'search', (c) => searchV2(kind, c));
      if (kind && p.length === 4 && p[3] !== undefined) {
        const raw = p[3];
        if (method === 'GET') return r('v2', 'get', (c) => getV2(kind, parseId(raw), c));
        if (method === 'PATCH') return r('v2', 'write', (c) => updateV2(kind, parseId(raw), c));
        if (method === 'DELETE') return r('v2', 'delete', (c) => deleteV2(kind, parseId(raw), c));
        return undefined;
      }
      if (fieldsKind && p.length === 3 && method === 'GET')
        return r('v2', 'list', (c) => fieldsV2(fieldsKind, c));
      if (p[2] === 'pipelines' && p.length === 3 && method === 'GET')
        return r('v2', 'list', (c) => pipelinesV2(c));
      if (p[2] === 'stages' && p.length === 3 && method === 'GET') return r('v2', 'list', (c) => stagesV2(c));
      return undefined;
    }
    if (version === 'v1') {
      if (kind && p.length === 3 && method === 'GET') return r('v1', 'list', (c) => listV1(kind, c));
      if (fieldsKind && p.length === 3 && method === 'GET')
        return r('v1', 'list', (c) => fieldsV1(fieldsKind, c));
      if (p[2] === 'webhooks') {
        if (p.length === 3 && method === 'GET')
          return r('v1', 'other', () =>
            json(200, { success: true, status: 'ok', data: webhooks.active().map(renderWebhook) }),
          );
        if (p.length === 3 && method === 'POST') return r('v1', 'write', (c) => addWebhook(c));
        if (p.length === 4 && p[3] !== undefined && method === 'DELETE') {
          const raw = p[3];
          return r('v1', 'delete', () => deleteWebhook(raw));
        }
        return undefined;
      }
      if (p[2] === 'users' && p[3] === 'me' && p.length === 4 && method === 'GET')
        return r('v1', 'get', (c) => me(c));
      if (p[2] === 'users' && p.length === 3 && method === 'GET') return r('v1', 'list', () => usersV1());
    }
    return undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // v2 entities

  function listV2(kind: EntityKind, { req }: Ctx): SimResponse {
    const q = req.query;
    const limit = intParam(q, 'limit') ?? DEFAULT_LIMIT;
    if (limit < 1) throw badRequest('limit must be greater than or equal to 1');
    if (limit > MAX_LIMIT) throw badRequest(`limit must be less than or equal to ${MAX_LIMIT}`);
    const sortBy = q.get('sort_by') ?? 'id';
    if (!['id', 'update_time', 'add_time'].includes(sortBy))
      throw badRequest('sort_by must be one of id, update_time, add_time');
    const dir = q.get('sort_direction') ?? 'asc';
    if (dir !== 'asc' && dir !== 'desc') throw badRequest('sort_direction must be one of asc, desc');
    const since = timeParam(q, 'updated_since');
    const until = timeParam(q, 'updated_until');
    const ids = listParam(q, 'ids')?.map((s) => {
      if (!/^\d+$/.test(s)) throw badRequest('ids must be a comma-separated list of integers');
      return Number(s);
    });
    if (ids && ids.length > MAX_IDS) throw badRequest(`ids can have at most ${MAX_IDS} items`);
    const customKeys = customKeysParam(q);
    const filters: [string, number | undefined][] = [['owner_id', intParam(q, 'owner_id')]];
    if (kind !== 'organizations') filters.push(['org_id', intParam(q, 'org_id')]);
    if (kind === 'deals') {
      filters.push(['person_id', intParam(q, 'person_id')]);
      filters.push(['pipeline_id', intParam(q, 'pipeline_id')]);
      filters.push(['stage_id', intParam(q, 'stage_id')]);
    }
    let statuses: string[] | undefined;
    if (kind === 'deals') {
      statuses = listParam(q, 'status');
      const bad = statuses?.find((s) => !['open', 'won', 'lost', 'deleted'].includes(s));
      if (bad) throw badRequest('status must be one of open, won, lost, deleted');
    }
    const dealIdFilter = kind === 'persons' ? intParam(q, 'deal_id') : undefined;

    const key = (e: Entity) => (sortBy === 'id' ? e.id : sortBy === 'update_time' ? e.updateTime : e.addTime);
    const sign = dir === 'asc' ? 1 : -1;
    const compare = (ak: number, ai: number, bk: number, bi: number) => sign * (ak - bk || ai - bi);
    let items = state.list(kind).filter((e) => {
      if (e.deleted && !(statuses?.includes('deleted') ?? false)) return false;
      if (statuses && !e.deleted && !statuses.includes(String(e.values.status))) return false;
      if (since !== undefined && e.updateTime < since) return false;
      if (until !== undefined && e.updateTime >= until) return false;
      if (ids && !ids.includes(e.id)) return false;
      for (const [field, value] of filters)
        if (value !== undefined && e.values[field] !== value) return false;
      if (dealIdFilter !== undefined) {
        const deal = state.get('deals', dealIdFilter);
        if (deal?.values.person_id !== e.id) return false;
      }
      return true;
    });
    items.sort((a, b) => compare(key(a), a.id, key(b), b.id));
    const rawCursor = q.get('cursor');
    if (rawCursor) {
      const c = decodeCursor(rawCursor);
      items = items.filter((e) => compare(key(e), e.id, c.k, c.i) > 0);
    }
    const page = items.slice(0, limit);
    const last = page[page.length - 1];
    const next = items.length > limit && last ? encodeCursor({ k: key(last), i: last.id }) : null;
    return ok(
      page.map((e) => state.render(e, customKeys)),
      { next_cursor: next },
    );
  }

  function timeParam(q: URLSearchParams, name: string): number | undefined {
    const raw = q.get(name);
    if (raw === null || raw === '') return undefined;
    const ms = parseRfc3339(raw);
    if (ms === undefined) throw badRequest(`${name} must be in RFC3339 format, e.g. 2025-01-01T10:20:00Z`);
    return ms;
  }

  function customKeysParam(q: URLSearchParams): string[] | undefined {
    const keys = listParam(q, 'custom_fields');
    if (keys && keys.length > MAX_CUSTOM_FIELD_KEYS)
      throw badRequest(`custom_fields can have at most ${MAX_CUSTOM_FIELD_KEYS} keys`);
    return keys;
  }

  function getV2(kind: EntityKind, id: number, { req }: Ctx): SimResponse {
    const e = state.get(kind, id);
    if (!e) throw notFound(kind);
    return ok(state.render(e, customKeysParam(req.query)));
  }

  function createV2(kind: EntityKind, { req, userId }: Ctx): SimResponse {
    const e = state.create(kind, req.body ?? {}, 'api', userId);
    return ok(state.render(e));
  }

  function updateV2(kind: EntityKind, id: number, { req, userId }: Ctx): SimResponse {
    const e = state.update(kind, id, req.body ?? {}, 'api', userId);
    return ok(state.render(e));
  }

  function deleteV2(kind: EntityKind, id: number, { userId }: Ctx): SimResponse {
    state.remove(kind, id, 'api', userId);
    return ok({ id });
  }

  function searchV2(kind: EntityKind, { req }: Ctx): SimResponse {
    const q = req.query;
    const term = (q.get('term') ?? '').trim();
    const exact = q.get('exact_match') === 'true';
    if (term.length < (exact ? 1 : 2))
      throw badRequest(`term must be at least ${exact ? 1 : 2} characters long`);
    const all =
      kind === 'persons' ? ['name', 'email', 'phone', 'notes', 'custom_fields'] : ['name', 'custom_fields'];
    const fields = listParam(q, 'fields') ?? all;
    const badField = fields.find(
      (f) => !all.includes(f) && !(kind !== 'persons' && ['address', 'notes'].includes(f)),
    );
    if (badField) throw badRequest(`fields must be some of ${all.join(', ')}`);
    const limit = intParam(q, 'limit') ?? DEFAULT_LIMIT;
    if (limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit must be between 1 and ${MAX_LIMIT}`);
    const orgId = kind === 'persons' ? intParam(q, 'organization_id') : undefined;
    const needle = term.toLowerCase();
    const matches = (value: unknown): number => {
      if (typeof value !== 'string') return 0;
      const v = value.toLowerCase();
      if (v === needle) return 1;
      return !exact && v.includes(needle) ? 0.5 : 0;
    };
    const searchableCustom = state
      .customFields(kind)
      .filter((f) =>
        ['varchar', 'varchar_auto', 'text', 'phone', 'double', 'monetary'].includes(f.field_type),
      );
    const hits: { e: Entity; score: number }[] = [];
    for (const e of state.list(kind)) {
      if (e.deleted) continue;
      if (orgId !== undefined && e.values.org_id !== orgId) continue;
      const candidates: unknown[] = [];
      const nameKey = kind === 'deals' ? 'title' : 'name';
      if (fields.includes('name')) candidates.push(e.values[nameKey]);
      const contacts = (k: string) =>
        ((e.values[k] as { value: string }[] | undefined) ?? []).map((c) => c.value);
      if (fields.includes('email')) candidates.push(...contacts('emails'));
      if (fields.includes('phone')) candidates.push(...contacts('phones'));
      if (fields.includes('custom_fields'))
        for (const f of searchableCustom)
          candidates.push(e.custom[f.key] === undefined ? undefined : String(e.custom[f.key]));
      const score = Math.max(0, ...candidates.map(matches));
      if (score > 0) hits.push({ e, score });
    }
    hits.sort((a, b) => b.score - a.score || a.e.id - b.e.id);
    const rawCursor = q.get('cursor');
    const offset = rawCursor ? decodeCursor(rawCursor).k : 0;
    const page = hits.slice(offset, offset + limit);
    const next = offset + limit < hits.length ? encodeCursor({ k: offset + limit, i: 0 }) : null;
    const items = page.map(({ e, score }) => ({ result_score: score, item: searchItem(e) }));
    return ok({ items }, { next_cursor: next });
  }

  function searchItem(e: Entity): Record<string, unknown> {
    const owner = { id: e.values.owner_id };
    const org = typeof e.values.org_id === 'number' ? state.get('organizations', e.values.org_id) : undefined;
    const organization = org ? { id: org.id, name: org.values.name } : null;
    const custom = Object.values(e.custom).filter((v) => typeof v === 'string');
    if (e.kind === 'persons') {
      const contacts = (k: string) =>
        ((e.values[k] as { value: string }[] | undefined) ?? []).map((c) => c.value);
      return {
        id: e.id,
        type: 'person',
        name: e.values.name,
        phones: contacts('phones'),
        emails: contacts('emails'),
        visible_to: e.values.visible_to,
        owner,
        organization,
        custom_fields: custom,
        notes: [],
      };
    }
    if (e.kind === 'organizations') {
      const address = e.values.address as { value?: string } | null | undefined;
      return {
        id: e.id,
        type: 'organization',
        name: e.values.name,
        address: address?.value ?? null,
        visible_to: e.values.visible_to,
        owner,
        custom_fields: custom,
        notes: [],
      };
    }
    const person =
      typeof e.values.person_id === 'number' ? state.get('persons', e.values.person_id) : undefined;
    const stage = state.stages.find((s) => s.id === e.values.stage_id);
    return {
      id: e.id,
      type: 'deal',
      title: e.values.title,
      value: e.values.value,
      currency: e.values.currency,
      status: e.values.status,
      visible_to: e.values.visible_to,
      owner,
      stage: stage ? { id: stage.id, name: stage.name } : null,
      person: person ? { id: person.id, name: person.values.name } : null,
      organization,
      custom_fields: custom,
      notes: [],
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Fields

  function fieldsV2(kind: EntityKind, { req }: Ctx): SimResponse {
    const q = req.query;
    const limit = intParam(q, 'limit') ?? DEFAULT_LIMIT;
    if (limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit must be between 1 and ${MAX_LIMIT}`);
    const rawCursor = q.get('cursor');
    const offset = rawCursor ? decodeCursor(rawCursor).k : 0;
    const all = state.fields[kind];
    const page = all.slice(offset, offset + limit);
    const next = offset + limit < all.length ? encodeCursor({ k: offset + limit, i: 0 }) : null;
    return ok(page.map(renderFieldV2), { next_cursor: next });
  }

  // ---------------------------------------------------------------------------------------------
  // Pipelines, stages (v2) and users (v1)

  /** A v2 list of configuration rows by id: `limit` (100, at most 500) and an opaque `cursor`. */
  function pageById<T extends { id: number }>(q: URLSearchParams, rows: T[]) {
    const limit = intParam(q, 'limit') ?? DEFAULT_LIMIT;
    if (limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit must be between 1 and ${MAX_LIMIT}`);
    const rawCursor = q.get('cursor');
    const after = rawCursor ? decodeCursor(rawCursor).i : 0;
    const sorted = rows.filter((x) => x.id > after).sort((a, b) => a.id - b.id);
    const page = sorted.slice(0, limit);
    const last = page[page.length - 1];
    return { page, next: sorted.length > limit && last ? encodeCursor({ k: 0, i: last.id }) : null };
  }

  function pipelinesV2({ req }: Ctx): SimResponse {
    const { page, next } = pageById(req.query, state.pipelines);
    const at = new Date(state.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return ok(
      page.map((p, i) => ({
        id: p.id,
        name: p.name,
        order_nr: i + 1,
        is_deleted: false,
        is_deal_probability_enabled: true,
        add_time: at,
        update_time: at,
      })),
      { next_cursor: next },
    );
  }

  function stagesV2({ req }: Ctx): SimResponse {
    const pipelineId = intParam(req.query, 'pipeline_id');
    const rows = state.stages.filter((s) => pipelineId === undefined || s.pipeline_id === pipelineId);
    const { page, next } = pageById(req.query, rows);
    const at = new Date(state.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return ok(
      page.map((s) => ({
        id: s.id,
        order_nr: s.order_nr,
        name: s.name,
        is_deleted: false,
        deal_probability: s.deal_probability,
        pipeline_id: s.pipeline_id,
        is_deal_rot_enabled: false,
        days_to_rotten: null,
        add_time: at,
        update_time: at,
      })),
      { next_cursor: next },
    );
  }

  function usersV1(): SimResponse {
    return ok(
      state.users.map((u) => ({
        id: u.id,
        name: u.name,
        email: u.email,
        default_currency: 'USD',
        locale: 'en_US',
        lang: 1,
        phone: null,
        activated: true,
        active_flag: u.active !== false,
        is_admin: u.id === state.defaultUserId ? 1 : 0,
        timezone_name: 'UTC',
        timezone_offset: '+00:00',
      })),
    );
  }

  function startLimit(q: URLSearchParams): { start: number; limit: number } {
    const start = intParam(q, 'start') ?? 0;
    if (start < 0) throw badRequest('start must be 0 or more');
    const limit = intParam(q, 'limit') ?? DEFAULT_LIMIT;
    if (limit < 1) throw badRequest('limit must be 1 or more');
    // v1 lists cap a larger limit at 500 rather than refusing it.
    return { start, limit: Math.min(limit, MAX_LIMIT) };
  }

  function pagination(start: number, limit: number, total: number) {
    const more = start + limit < total;
    return {
      pagination: {
        start,
        limit,
        more_items_in_collection: more,
        ...(more ? { next_start: start + limit } : {}),
      },
    };
  }

  function fieldsV1(kind: EntityKind, { req }: Ctx): SimResponse {
    const { start, limit } = startLimit(req.query);
    const all = state.fields[kind];
    return ok(all.slice(start, start + limit).map(renderFieldV1), pagination(start, limit, all.length));
  }

  // ---------------------------------------------------------------------------------------------
  // v1 lists

  function userRef(id: unknown): Record<string, unknown> | null {
    const u = state.users.find((x) => x.id === id);
    return u
      ? { id: u.id, name: u.name, email: u.email, has_pic: 0, pic_hash: null, active_flag: true, value: u.id }
      : null;
  }

  function renderV1(e: Entity): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: e.id,
      company_id: state.companyId,
      owner_id: userRef(e.values.owner_id),
      add_time: v1Time(e.addTime),
      update_time: v1Time(e.updateTime),
      active_flag: !e.deleted,
      visible_to: String(e.values.visible_to),
      label_ids: e.values.label_ids ?? [],
    };
    const orgRef = (id: unknown) => {
      const org = typeof id === 'number' ? state.get('organizations', id, { deleted: true }) : undefined;
      return org
        ? {
            name: org.values.name,
            people_count: 0,
            owner_id: org.values.owner_id,
            active_flag: !org.deleted,
            value: org.id,
          }
        : null;
    };
    if (e.kind === 'persons') {
      const contacts = (k: string) => {
        const list = (e.values[k] as { value: string; primary: boolean; label: string }[] | undefined) ?? [];
        return list.length > 0 ? list : [{ value: '', primary: true }];
      };
      Object.assign(out, {
        name: e.values.name,
        first_name: e.values.first_name ?? null,
        last_name: e.values.last_name ?? null,
        org_id: orgRef(e.values.org_id),
        org_name: (orgRef(e.values.org_id)?.name as string | undefined) ?? null,
        phone: contacts('phones'),
        email: contacts('emails'),
        primary_email:
          ((e.values.emails as { value: string; primary: boolean }[] | undefined) ?? []).find(
            (c) => c.primary,
          )?.value ?? null,
        job_title: e.values.job_title ?? null,
      });
    } else if (e.kind === 'organizations') {
      const address = e.values.address as { value?: string } | null | undefined;
      Object.assign(out, {
        name: e.values.name,
        address: address?.value ?? null,
        website: e.values.website ?? null,
      });
    } else {
      const person =
        typeof e.values.person_id === 'number'
          ? state.get('persons', e.values.person_id, { deleted: true })
          : undefined;
      Object.assign(out, {
        title: e.values.title,
        value: e.values.value,
        currency: e.values.currency,
        status: e.deleted ? 'deleted' : e.values.status,
        stage_id: e.values.stage_id,
        pipeline_id: e.values.pipeline_id,
        person_id: person ? { name: person.values.name, value: person.id } : null,
        org_id: orgRef(e.values.org_id),
        probability: e.values.probability ?? null,
        expected_close_date: e.values.expected_close_date ?? null,
      });
    }
    // v1 puts custom fields at the top level; option values are option ids as strings.
    for (const f of state.customFields(e.kind)) {
      const v = e.custom[f.key];
      if (v === undefined) out[f.key] = null;
      else if (f.field_type === 'enum') out[f.key] = String(v);
      else if (f.field_type === 'set') out[f.key] = (v as number[]).join(',');
      else if (f.field_type === 'monetary') {
        const m = v as { value: number; currency: string };
        out[f.key] = m.value;
        out[`${f.key}_currency`] = m.currency;
      } else out[f.key] = v;
    }
    return out;
  }

  function listV1(kind: EntityKind, { req }: Ctx): SimResponse {
    const { start, limit } = startLimit(req.query);
    const all = state
      .list(kind)
      .filter((e) => !e.deleted)
      .sort((a, b) => a.id - b.id);
    const page = all.slice(start, start + limit);
    return ok(page.length > 0 ? page.map(renderV1) : null, pagination(start, limit, all.length));
  }

  // ---------------------------------------------------------------------------------------------
  // Webhooks and user

  function addWebhook({ req, userId }: Ctx): SimResponse {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const w = webhooks.add(body, userId);
    return json(201, { success: true, status: 'ok', data: renderWebhook(w) });
  }

  function deleteWebhook(raw: string): SimResponse {
    const id = parseId(raw);
    if (!webhooks.remove(id)) throw new PipedriveApiError(404, 'Webhook not found');
    return json(200, { success: true, status: 'ok' });
  }

  function me({ origin, userId }: Ctx): SimResponse {
    const u = state.users.find((x) => x.id === userId) ?? state.users[0];
    return ok({
      id: u?.id,
      name: u?.name,
      email: u?.email,
      company_id: state.companyId,
      company_name: 'Lockstep Sandbox',
      company_domain: state.companyDomain,
      company_country: 'US',
      default_currency: 'USD',
      locale: 'en_US',
      lang: 1,
      timezone_name: 'UTC',
      timezone_offset: '+00:00',
      is_admin: u?.id === state.defaultUserId ? 1 : 0,
      active_flag: true,
      activated: true,
      access: [{ app: 'sales', admin: true, permission_set_id: '1' }],
      api_domain: origin,
    });
  }

  const listen = (log: RequestLog) =>
    startHttpServer({
      handler: handle,
      faults,
      log,
      clock: state.clock,
      rateLimitResponse: () => ({
        status: 429,
        body: rateLimitBody('burst'),
        headers: {
          'x-ratelimit-limit': String(limiter.burst),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': '2',
        },
      }),
    });
  const server = await listen(requestLog);
  const company = await listen(companyRequestLog);
  companyUrl = company.url;
  return {
    url: server.url,
    companyUrl,
    close: async () => {
      await Promise.all([server.close(), company.close()]);
    },
    faults,
    requestLog,
    companyRequestLog,
    limiter,
    oauth,
  };
}

export { SINGULAR };
