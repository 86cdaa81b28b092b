/**
 * HTTP routes of the Attio simulator (REST API v2): auth and scopes, rate limits, objects and
 * attributes, records (query, get, create, assert, PATCH/PUT, delete, attribute values with
 * history), lists and entries, webhooks, /v2/self and the OAuth code exchange. Bodies follow
 * Attio's OpenAPI document; errors use its {status_code, type, code, message} shape.
 */
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
import { matchFilter, parseSorts, sortRows } from './filter.ts';
import {
  type Actor,
  AttioApiError,
  type AttioState,
  apiError,
  DEFAULT_RECORD_LIMIT,
  invalidRequest,
  isUuid,
  notFound,
  type Webhook,
  type WebhookSubscription,
} from './model.ts';
import { RateLimiter, type RateLimitOptions, type RequestKind, rateLimitResponse } from './rate-limit.ts';
import { attioTimestamp } from './values.ts';

export type OAuthApp = {
  clientId: string;
  clientSecret: string;
  /** Scopes granted to tokens of this app (default: every scope). */
  scopes?: string[];
  /**
   * The app's registered redirect URLs: `redirect_uri` must equal one of them exactly, as Attio
   * requires (when not given, any URL is accepted).
   */
  redirectUris?: string[];
};

export type AttioServerOptions = {
  /** `false` turns the limits off. */
  rateLimit?: false | RateLimitOptions;
  /** Accept http:// webhook target URLs (Attio requires https). */
  allowHttpWebhookTargets?: boolean;
  /** An OAuth app for /oauth/authorize and /oauth/token. */
  oauth?: OAuthApp;
};

export type AttioServer = RunningServer & {
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
};

export const WEBHOOK_EVENT_TYPES = [
  'call-recording.created',
  'comment.created',
  'comment.resolved',
  'comment.unresolved',
  'comment.deleted',
  'list.created',
  'list.updated',
  'list.deleted',
  'list-attribute.created',
  'list-attribute.updated',
  'list-entry.created',
  'list-entry.updated',
  'list-entry.deleted',
  'object-attribute.created',
  'object-attribute.updated',
  'note.created',
  'note-content.updated',
  'note.updated',
  'note.deleted',
  'record.created',
  'record.merged',
  'record.updated',
  'record.deleted',
  'task.created',
  'task.updated',
  'task.deleted',
  'workspace-member.created',
];

type Ctx = { req: SimRequest; params: Record<string, string>; actor: Actor };

type Route = {
  method: string;
  pattern: RegExp;
  names: string[];
  kind: RequestKind;
  scopes: (params: Record<string, string>) => string[];
  run: (ctx: Ctx) => SimResponse;
};

const validation = (message: string) => invalidRequest(400, 'validation_type', message);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function route(
  method: string,
  path: string,
  kind: RequestKind,
  scopes: string[] | ((p: Record<string, string>) => string[]),
  run: Route['run'],
): Route {
  const names: string[] = [];
  const pattern = new RegExp(
    `^${path.replace(/\{(\w+)\}/g, (_, n: string) => {
      names.push(n);
      return '([^/]+)';
    })}$`,
  );
  return { method, pattern, names, kind, scopes: typeof scopes === 'function' ? scopes : () => scopes, run };
}

/** `x:read` is satisfied by `x:read` or `x:read-write`. */
function hasScope(granted: string[], needed: string): boolean {
  if (granted.includes(needed)) return true;
  return needed.endsWith(':read') && granted.includes(`${needed}-write`);
}

function body(req: SimRequest): Record<string, unknown> {
  if (req.bodyInvalid) throw validation('Body payload validation error: the body is not valid JSON.');
  return isObject(req.body) ? req.body : {};
}

function dataOf(req: SimRequest): Record<string, unknown> {
  const data = body(req).data;
  if (!isObject(data)) throw validation('Body payload validation error: "data" must be an object.');
  return data;
}

function valuesOf(data: Record<string, unknown>, key: 'values' | 'entry_values'): Record<string, unknown> {
  const v = data[key];
  if (!isObject(v)) throw validation(`Body payload validation error: "data.${key}" must be an object.`);
  return v;
}

function paging(b: Record<string, unknown>): { limit: number; offset: number } {
  const { limit = DEFAULT_RECORD_LIMIT, offset = 0 } = b;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > DEFAULT_RECORD_LIMIT)
    throw validation(
      `Body payload validation error: limit must be an integer between 1 and ${DEFAULT_RECORD_LIMIT}.`,
    );
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0)
    throw validation('Body payload validation error: offset must be a non-negative integer.');
  return { limit, offset };
}

function parseWebhookSubscriptions(raw: unknown): WebhookSubscription[] {
  if (!Array.isArray(raw))
    throw validation('Body payload validation error: "data.subscriptions" must be an array.');
  return raw.map((s, i) => {
    if (!isObject(s) || typeof s.event_type !== 'string' || !WEBHOOK_EVENT_TYPES.includes(s.event_type))
      throw validation(
        `Body payload validation error: subscriptions[${i}].event_type is not a valid event type.`,
      );
    const f = s.filter ?? null;
    if (f === null) return { event_type: s.event_type, filter: null };
    const list = isObject(f) ? (f.$and ?? f.$or) : undefined;
    const ok =
      isObject(f) &&
      Object.keys(f).length === 1 &&
      Array.isArray(list) &&
      list.every(
        (c) =>
          isObject(c) &&
          typeof c.field === 'string' &&
          (c.operator === 'equals' || c.operator === 'not_equals') &&
          typeof c.value === 'string',
      );
    if (!ok)
      throw validation(`Body payload validation error: subscriptions[${i}].filter is not a valid filter.`);
    return { event_type: s.event_type, filter: f as WebhookSubscription['filter'] };
  });
}

export async function startAttioServer(
  state: AttioState,
  options: AttioServerOptions = {},
): Promise<AttioServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(
    state.clock,
    options.rateLimit === false ? {} : (options.rateLimit ?? {}),
    options.rateLimit !== false,
  );
  const oauthCodes = new Map<string, { redirectUri: string }>();
  const ws = () => state.workspace.id;

  const checkTarget = (url: unknown): string => {
    if (typeof url !== 'string' || !URL.canParse(url))
      throw validation('Body payload validation error: "data.target_url" must be a URL.');
    const scheme = new URL(url).protocol;
    if (scheme !== 'https:' && !(options.allowHttpWebhookTargets && scheme === 'http:'))
      throw validation('Body payload validation error: "data.target_url" must use https.');
    return url;
  };

  const webhook = (id: string): Webhook => {
    const w = state.webhooks.get(id);
    if (!w) throw notFound(`Webhook with ID "${id}" was not found.`);
    return w;
  };

  const attributeParent = (target: string, identifier: string): string => {
    if (target === 'objects') return state.object(identifier).id;
    if (target === 'lists') return state.list(identifier).id;
    throw notFound(`Target "${target}" not found: use "objects" or "lists".`);
  };

  const attribute = (p: Record<string, string>) => {
    const parent = attributeParent(p.target ?? '', p.identifier ?? '');
    const attr = state.attribute(parent, p.attribute ?? '');
    if (!attr) throw notFound(`Attribute with slug/ID "${p.attribute}" not found.`);
    return attr;
  };

  const configScope = (p: Record<string, string>) =>
    p.target === 'lists' ? ['list_configuration:read'] : ['object_configuration:read'];
  const RECORD_READ = ['record_permission:read', 'object_configuration:read'];
  const RECORD_WRITE = ['record_permission:read-write', 'object_configuration:read'];
  const ENTRY_READ = ['list_entry:read', 'list_configuration:read'];
  const ENTRY_WRITE = ['list_entry:read-write', 'list_configuration:read'];

  const routes: Route[] = [
    // Objects and attributes
    route('GET', '/v2/objects', 'read', ['object_configuration:read'], () =>
      json(200, { data: state.objects.map((o) => state.renderObject(o)) }),
    ),
    route('GET', '/v2/objects/{object}', 'read', ['object_configuration:read'], ({ params }) =>
      json(200, { data: state.renderObject(state.object(params.object ?? '')) }),
    ),
    route('GET', '/v2/{target}/{identifier}/attributes', 'read', configScope, ({ params, req }) => {
      const parent = attributeParent(params.target ?? '', params.identifier ?? '');
      const limit = Number(req.query.get('limit') ?? Number.POSITIVE_INFINITY);
      const offset = Number(req.query.get('offset') ?? 0);
      const all = state.attributesOf(parent).map((a) => state.renderAttribute(a));
      return json(200, { data: all.slice(offset, offset + limit) });
    }),
    route('GET', '/v2/{target}/{identifier}/attributes/{attribute}', 'read', configScope, ({ params }) =>
      json(200, { data: state.renderAttribute(attribute(params)) }),
    ),
    route(
      'GET',
      '/v2/{target}/{identifier}/attributes/{attribute}/options',
      'read',
      configScope,
      ({ params, req }) => {
        const attr = attribute(params);
        if (attr.type !== 'select') throw validation('This attribute is not a select attribute.');
        const archived = req.query.get('show_archived') === 'true';
        return json(200, {
          data: attr.options
            .filter((o) => archived || !o.is_archived)
            .map((o) => state.renderOption(attr, o)),
        });
      },
    ),
    route(
      'GET',
      '/v2/{target}/{identifier}/attributes/{attribute}/statuses',
      'read',
      configScope,
      ({ params, req }) => {
        const attr = attribute(params);
        if (attr.type !== 'status') throw validation('This attribute is not a status attribute.');
        const archived = req.query.get('show_archived') === 'true';
        return json(200, {
          data: attr.statuses
            .filter((s) => archived || !s.is_archived)
            .map((s) => state.renderStatus(attr, s)),
        });
      },
    ),

    // Records
    route('POST', '/v2/objects/{object}/records/query', 'read', RECORD_READ, ({ params, req }) => {
      const b = body(req);
      const o = state.object(params.object ?? '');
      const attrs = state.attributesOf(o.id);
      const { limit, offset } = paging(b);
      const sorts = parseSorts(b.sorts, attrs);
      const rows = state.queryableRecords(o.api_slug).filter((r) => matchFilter(b.filter, r, attrs));
      const page = sortRows(rows, sorts).slice(offset, offset + limit);
      return json(200, { data: page.map((r) => state.renderRecord(r)) });
    }),
    route('POST', '/v2/objects/{object}/records', 'write', RECORD_WRITE, ({ params, req, actor }) => {
      const row = state.createRecord(params.object ?? '', valuesOf(dataOf(req), 'values'), actor);
      return json(200, { data: state.renderRecord(row) });
    }),
    route('PUT', '/v2/objects/{object}/records', 'write', RECORD_WRITE, ({ params, req, actor }) => {
      const matching = req.query.get('matching_attribute');
      state.object(params.object ?? '');
      if (!matching) throw validation('Query parameter validation error: matching_attribute is required.');
      const { row } = state.assertRecord(
        params.object ?? '',
        matching,
        valuesOf(dataOf(req), 'values'),
        actor,
      );
      return json(200, { data: state.renderRecord(row) });
    }),
    route('GET', '/v2/objects/{object}/records/{record_id}', 'read', RECORD_READ, ({ params }) =>
      json(200, { data: state.renderRecord(state.record(params.object ?? '', params.record_id ?? '')) }),
    ),
    route(
      'PATCH',
      '/v2/objects/{object}/records/{record_id}',
      'write',
      RECORD_WRITE,
      ({ params, req, actor }) => {
        const values = valuesOf(dataOf(req), 'values');
        const row = state.updateRecord(params.object ?? '', params.record_id ?? '', values, 'append', actor);
        return json(200, { data: state.renderRecord(row) });
      },
    ),
    route(
      'PUT',
      '/v2/objects/{object}/records/{record_id}',
      'write',
      RECORD_WRITE,
      ({ params, req, actor }) => {
        const values = valuesOf(dataOf(req), 'values');
        const row = state.updateRecord(
          params.object ?? '',
          params.record_id ?? '',
          values,
          'overwrite',
          actor,
        );
        return json(200, { data: state.renderRecord(row) });
      },
    ),
    route(
      'DELETE',
      '/v2/objects/{object}/records/{record_id}',
      'write',
      RECORD_WRITE,
      ({ params, actor }) => {
        state.deleteRecord(params.object ?? '', params.record_id ?? '', actor);
        return json(200, {});
      },
    ),
    route(
      'GET',
      '/v2/objects/{object}/records/{record_id}/attributes/{attribute}/values',
      'read',
      RECORD_READ,
      ({ params, req }) => {
        const o = state.object(params.object ?? '');
        const row = state.record(o.api_slug, params.record_id ?? '');
        const attr = state.attribute(o.id, params.attribute ?? '');
        if (!attr) throw notFound(`Attribute with slug/ID "${params.attribute}" not found.`);
        const historic = req.query.get('show_historic') === 'true';
        if (historic && !attr.historic)
          throw validation('Cannot set show_historic param to true when querying a non-historic attribute.');
        const values = (row.values.get(attr.id) ?? [])
          .filter((v) => historic || v.activeUntil === null)
          .sort((a, b) => a.activeFrom - b.activeFrom);
        const offset = Number(req.query.get('offset') ?? 0);
        const limit = Number(req.query.get('limit') ?? values.length);
        return json(200, {
          data: values.slice(offset, offset + limit).map((v) => state.renderValue(attr, v)),
        });
      },
    ),
    route(
      'GET',
      '/v2/objects/{object}/records/{record_id}/entries',
      'read',
      [...RECORD_READ, 'list_entry:read'],
      ({ params }) => {
        const row = state.record(params.object ?? '', params.record_id ?? '');
        const data = [...state.entries.values()]
          .filter((e) => e.parentRecordId === row.id)
          .map((e) => ({
            list_id: e.list,
            list_api_slug: state.list(e.list).api_slug,
            entry_id: e.id,
            created_at: state.renderEntry(e).created_at,
          }));
        return json(200, { data });
      },
    ),

    // Lists and entries
    route('GET', '/v2/lists', 'read', ['list_configuration:read'], () =>
      json(200, { data: state.lists.map((l) => state.renderList(l)) }),
    ),
    route('GET', '/v2/lists/{list}', 'read', ['list_configuration:read'], ({ params }) =>
      json(200, { data: state.renderList(state.list(params.list ?? '')) }),
    ),
    route('POST', '/v2/lists/{list}/entries/query', 'read', ENTRY_READ, ({ params, req }) => {
      const b = body(req);
      const l = state.list(params.list ?? '');
      const attrs = state.attributesOf(l.id);
      const { limit, offset } = paging(b);
      const sorts = parseSorts(b.sorts, attrs);
      // `parent_record_id` filters on the entry's parent record (equality or $eq / $in).
      const byParent = (parentId: string, condition: unknown): boolean => {
        if (isObject(condition) && Array.isArray(condition.$in)) return condition.$in.includes(parentId);
        return parentId === (isObject(condition) ? condition.$eq : condition);
      };
      const rows = state
        .queryableEntries(l.id)
        .filter((e) =>
          matchFilter(b.filter, e, attrs, (key, c) =>
            key === 'parent_record_id' ? byParent(e.parentRecordId, c) : undefined,
          ),
        );
      const page = sortRows(rows, sorts).slice(offset, offset + limit);
      return json(200, { data: page.map((e) => state.renderEntry(e)) });
    }),
    route('POST', '/v2/lists/{list}/entries', 'write', ENTRY_WRITE, ({ params, req, actor }) => {
      const data = dataOf(req);
      if (typeof data.parent_record_id !== 'string' || typeof data.parent_object !== 'string')
        throw validation('Body payload validation error: parent_record_id and parent_object are required.');
      const e = state.createEntry(
        params.list ?? '',
        data.parent_object,
        data.parent_record_id,
        valuesOf(data, 'entry_values'),
        actor,
      );
      return json(200, { data: state.renderEntry(e) });
    }),
    route('PUT', '/v2/lists/{list}/entries', 'write', ENTRY_WRITE, ({ params, req, actor }) => {
      const data = dataOf(req);
      if (typeof data.parent_record_id !== 'string' || typeof data.parent_object !== 'string')
        throw validation('Body payload validation error: parent_record_id and parent_object are required.');
      const e = state.assertEntry(
        params.list ?? '',
        data.parent_object,
        data.parent_record_id,
        valuesOf(data, 'entry_values'),
        actor,
      );
      return json(200, { data: state.renderEntry(e) });
    }),
    route('GET', '/v2/lists/{list}/entries/{entry_id}', 'read', ENTRY_READ, ({ params }) =>
      json(200, { data: state.renderEntry(state.entry(params.list ?? '', params.entry_id ?? '')) }),
    ),
    route('PATCH', '/v2/lists/{list}/entries/{entry_id}', 'write', ENTRY_WRITE, ({ params, req, actor }) => {
      const e = state.updateEntry(
        params.list ?? '',
        params.entry_id ?? '',
        valuesOf(dataOf(req), 'entry_values'),
        'append',
        actor,
      );
      return json(200, { data: state.renderEntry(e) });
    }),
    route('PUT', '/v2/lists/{list}/entries/{entry_id}', 'write', ENTRY_WRITE, ({ params, req, actor }) => {
      const e = state.updateEntry(
        params.list ?? '',
        params.entry_id ?? '',
        valuesOf(dataOf(req), 'entry_values'),
        'overwrite',
        actor,
      );
      return json(200, { data: state.renderEntry(e) });
    }),
    route('DELETE', '/v2/lists/{list}/entries/{entry_id}', 'write', ENTRY_WRITE, ({ params, actor }) => {
      state.deleteEntry(params.list ?? '', params.entry_id ?? '', actor);
      return json(200, {});
    }),

    // Workspace members
    route('GET', '/v2/workspace_members', 'read', ['user_management:read'], () =>
      json(200, {
        data: state.members.map((m) => ({
          id: { workspace_id: ws(), workspace_member_id: m.id },
          first_name: m.first_name,
          last_name: m.last_name,
          avatar_url: null,
          email_address: m.email,
          created_at: attioTimestamp(m.createdAt),
          access_level: 'admin',
        })),
      }),
    ),

    // Webhooks
    route('GET', '/v2/webhooks', 'read', ['webhook:read'], ({ req }) => {
      const limit = Number(req.query.get('limit') ?? 10);
      const offset = Number(req.query.get('offset') ?? 0);
      if (!Number.isInteger(limit) || limit < 10 || limit > 100)
        throw validation('Query parameter validation error: limit must be between 10 and 100.');
      const all = [...state.webhooks.values()].sort((a, b) => a.created_at - b.created_at);
      return json(200, { data: all.slice(offset, offset + limit).map((w) => state.renderWebhook(w)) });
    }),
    route('POST', '/v2/webhooks', 'write', ['webhook:read-write'], ({ req }) => {
      const data = dataOf(req);
      const w: Webhook = {
        id: state.uuid(),
        target_url: checkTarget(data.target_url),
        subscriptions: parseWebhookSubscriptions(data.subscriptions),
        status: 'active',
        created_at: state.clock.now(),
        secret: state.secret(),
      };
      state.webhooks.set(w.id, w);
      return json(200, { data: state.renderWebhook(w, true) });
    }),
    route('GET', '/v2/webhooks/{webhook_id}', 'read', ['webhook:read'], ({ params }) =>
      json(200, { data: state.renderWebhook(webhook(params.webhook_id ?? '')) }),
    ),
    route('PATCH', '/v2/webhooks/{webhook_id}', 'write', ['webhook:read-write'], ({ params, req }) => {
      const w = webhook(params.webhook_id ?? '');
      const data = dataOf(req);
      const target = data.target_url === undefined ? w.target_url : checkTarget(data.target_url);
      const subs =
        data.subscriptions === undefined ? w.subscriptions : parseWebhookSubscriptions(data.subscriptions);
      w.target_url = target;
      w.subscriptions = subs;
      return json(200, { data: state.renderWebhook(w) });
    }),
    route('DELETE', '/v2/webhooks/{webhook_id}', 'write', ['webhook:read-write'], ({ params }) => {
      const w = state.webhooks.get(params.webhook_id ?? '');
      if (!w) throw notFound('Webhook not found');
      state.webhooks.delete(w.id);
      return json(200, {});
    }),
  ];

  const unauthorized = (message: string) => apiError(401, 'auth_error', 'unauthorized', message);

  /** `GET /v2/self` and `POST /oauth/introspect`: the bearer token's workspace and scopes. */
  function self(req: SimRequest): SimResponse {
    const token = bearerToken(req.headers);
    if (!token) throw unauthorized('The Authorization header was not provided.');
    const check = state.tokens.check(token);
    const meta = state.tokenMeta.get(token);
    if (!check.ok || !meta) return json(200, { active: false });
    return json(200, {
      active: true,
      scope: check.info.scopes.join(' '),
      client_id: meta.clientId,
      token_type: 'Bearer',
      exp: null,
      iat: Math.floor(meta.issuedAt / 1000),
      sub: ws(),
      aud: meta.clientId,
      iss: 'attio.com',
      authorized_by_workspace_member_id: check.info.userId,
      workspace_id: ws(),
      workspace_name: state.workspace.name,
      workspace_slug: state.workspace.slug,
      workspace_logo_url: null,
    });
  }

  function authorize(req: SimRequest): SimResponse {
    const app = options.oauth;
    const clientId = req.query.get('client_id');
    const redirectUri = req.query.get('redirect_uri');
    if (!app || clientId !== app.clientId) throw validation('Unknown client_id.');
    if (req.query.get('response_type') !== 'code') throw validation('response_type must be "code".');
    if (!redirectUri || !URL.canParse(redirectUri)) throw validation('redirect_uri is required.');
    if (app.redirectUris && !app.redirectUris.includes(redirectUri))
      throw validation("redirect_uri does not match any of the app's redirect URLs.");
    // The simulated user approves at once.
    const code = state.secret();
    oauthCodes.set(code, { redirectUri });
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    const st = req.query.get('state');
    if (st !== null) target.searchParams.set('state', st);
    return { status: 302, headers: { location: target.toString() }, text: '' };
  }

  function exchangeCode(req: SimRequest): SimResponse {
    const app = options.oauth;
    const b = body(req);
    if (!app || b.client_id !== app.clientId || b.client_secret !== app.clientSecret)
      throw apiError(401, 'auth_error', 'invalid_client', 'Invalid client_id or client_secret.');
    if (b.grant_type !== 'authorization_code') throw validation('grant_type must be "authorization_code".');
    const code = typeof b.code === 'string' ? oauthCodes.get(b.code) : undefined;
    if (!code)
      throw invalidRequest(400, 'invalid_grant', 'The authorization code is invalid or has been used.');
    // RFC 6749 4.1.3: a redirect_uri sent with the exchange must be the one the code was issued for.
    if (b.redirect_uri !== undefined && b.redirect_uri !== code.redirectUri)
      throw invalidRequest(400, 'invalid_grant', 'redirect_uri does not match the authorization request.');
    oauthCodes.delete(b.code as string);
    const accessToken = state.secret();
    const member = state.members[0];
    state.tokens.add({
      token: accessToken,
      scopes: app.scopes ?? [...ALL_SCOPES],
      kind: 'oauth',
      userId: member?.id ?? ws(),
    });
    state.tokenMeta.set(accessToken, {
      tokenId: state.uuid(),
      clientId: app.clientId,
      issuedAt: state.clock.now(),
    });
    return json(200, { access_token: accessToken, token_type: 'Bearer' });
  }

  function handle(req: SimRequest): SimResponse {
    try {
      if (req.method === 'GET' && (req.path === '/authorize' || req.path === '/oauth/authorize'))
        return authorize(req);
      if (req.method === 'POST' && req.path === '/oauth/token') return exchangeCode(req);
      if (req.method === 'GET' && req.path === '/v2/self') return self(req);
      if (req.method === 'POST' && req.path === '/oauth/introspect') return self(req);

      let matched: { r: Route; params: Record<string, string> } | undefined;
      let pathMatched = false;
      for (const r of routes) {
        const m = r.pattern.exec(req.path);
        if (!m) continue;
        pathMatched = true;
        if (r.method !== req.method) continue;
        const params: Record<string, string> = {};
        r.names.forEach((n, i) => {
          params[n] = decodeURIComponent(m[i + 1] ?? '');
        });
        matched = { r, params };
        break;
      }
      if (!matched) {
        throw pathMatched
          ? invalidRequest(405, 'method_not_allowed', `Method ${req.method} is not allowed on ${req.path}.`)
          : notFound(`Route ${req.method} ${req.path} not found.`);
      }

      const token = bearerToken(req.headers);
      if (!token) throw unauthorized('The Authorization header was not provided.');
      const check = state.tokens.check(token);
      if (!check.ok) throw unauthorized('The access token provided is invalid or has been revoked.');

      const refused = limiter.take(matched.r.kind);
      if (refused) return refused;

      const missing = matched.r.scopes(matched.params).filter((s) => !hasScope(check.info.scopes, s));
      if (missing.length > 0)
        throw apiError(
          403,
          'auth_error',
          'unauthorized',
          `The access token is missing the required scopes for this request: ${missing.join(', ')}.`,
        );

      if (matched.params.record_id !== undefined && !isUuid(matched.params.record_id))
        throw notFound(`Record with ID "${matched.params.record_id}" not found.`);

      const meta = state.tokenMeta.get(token);
      return matched.r.run({
        req,
        params: matched.params,
        actor: { type: 'api-token', id: meta?.tokenId ?? ws() },
      });
    } catch (err) {
      if (err instanceof AttioApiError) return { status: err.status, body: err.body, headers: err.headers };
      throw err;
    }
  }

  const server = await startHttpServer({
    handler: handle,
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => rateLimitResponse(state.clock),
  });
  return { ...server, faults, requestLog, limiter };
}

/** Every scope the REST API names. */
export const ALL_SCOPES = [
  'user_management:read',
  'record_permission:read-write',
  'object_configuration:read-write',
  'list_entry:read-write',
  'list_configuration:read-write',
  'public_collection:read-write',
  'private_collection:read-write',
  'comment:read-write',
  'task:read-write',
  'note:read-write',
  'meeting:read-write',
  'call_recording:read-write',
  'webhook:read-write',
];
