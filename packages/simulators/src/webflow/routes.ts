/**
 * HTTP routes of the Webflow simulator: Data API v2 (`/v2/...`: sites, site publish, CMS
 * collections and items, staged and live, webhooks) and the OAuth endpoints. Bodies follow
 * Webflow's OpenAPI spec (webflow/openapi-spec, openapi/v2.yml); errors use its
 * `{message, code, externalReference, details}` shape.
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
  type TokenInfo,
} from '../http.ts';
import {
  badRequest,
  type Collection,
  type ItemInput,
  MAX_BULK_ITEMS,
  notFound,
  renderItem,
  renderLive,
  type Site,
  validationError,
  WebflowApiError,
  type WebflowState,
} from './model.ts';
import type { OAuthServer } from './oauth.ts';
import { PublishLimiter, RateLimiter, type RateLimitOptions } from './rate-limit.ts';
import {
  MAX_PER_TRIGGER,
  TRIGGER_TYPES,
  type TriggerType,
  type WebhookDispatcher,
  type WebhookRegistration,
} from './webhooks.ts';

export const MAX_PAGE_SIZE = 100;

export type WebflowServerOptions = {
  /** `false` turns the per-minute limits off. */
  rateLimit?: false | RateLimitOptions;
  /** `false` turns off the one-publish-per-minute rule of the site publish endpoint. */
  publishLimit?: boolean;
};

export type WebflowServer = RunningServer & {
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
};

type Ctx = { req: SimRequest; token: TokenInfo };
type Route = { scopes: string[]; run: (ctx: Ctx) => SimResponse | Promise<SimResponse> };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const OBJECT_ID = /^[0-9a-f]{24}$/;

function checkId(id: string): string {
  if (!OBJECT_ID.test(id))
    throw new WebflowApiError(400, 'validation_error', 'Validation Error: Provided ID is invalid');
  return id;
}

function unauthorized(): WebflowApiError {
  return new WebflowApiError(401, 'not_authorized', 'Request not authorized');
}

function record(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest();
  return value as Record<string, unknown>;
}

function itemInput(value: unknown): ItemInput {
  const v = record(value);
  const out: ItemInput = {};
  if (v.fieldData !== undefined) out.fieldData = record(v.fieldData);
  if (typeof v.isArchived === 'boolean') out.isArchived = v.isArchived;
  if (typeof v.isDraft === 'boolean') out.isDraft = v.isDraft;
  if (typeof v.cmsLocaleId === 'string') out.cmsLocaleId = v.cmsLocaleId;
  return out;
}

function itemsArray(body: unknown): unknown[] {
  const items = record(body).items;
  if (!Array.isArray(items) || items.length === 0)
    throw validationError([{ param: 'items', description: 'Must be a non-empty array' }]);
  if (items.length > MAX_BULK_ITEMS)
    throw validationError([{ param: 'items', description: `Must contain at most ${MAX_BULK_ITEMS} items` }]);
  return items;
}

function idsOf(items: unknown[]): string[] {
  return items.map((i) => {
    const id = record(i).id;
    if (typeof id !== 'string') throw validationError([{ param: 'id', description: 'Item id is required' }]);
    return checkId(id);
  });
}

function skipInvalidFiles(query: URLSearchParams): boolean {
  return query.get('skipInvalidFiles') !== 'false';
}

function renderSite(site: Site): Record<string, unknown> {
  return {
    id: site.id,
    workspaceId: site.workspaceId,
    createdOn: iso(site.createdOn),
    displayName: site.displayName,
    shortName: site.shortName,
    lastPublished: iso(site.lastPublished),
    lastUpdated: iso(site.lastUpdated),
    previewUrl: `https://screenshots.webflow.com/sites/${site.id}/preview.png`,
    timeZone: site.timeZone,
    parentFolderId: null,
    customDomains: site.customDomains.map((d) => ({
      id: d.id,
      url: d.url,
      lastPublished: iso(d.lastPublished),
    })),
    locales: {
      primary: {
        id: site.locale.id,
        cmsLocaleId: site.locale.cmsLocaleId,
        enabled: true,
        displayName: site.locale.displayName,
        displayImageId: null,
        redirect: true,
        subdirectory: '',
        tag: site.locale.tag,
      },
      secondary: [],
    },
    dataCollectionEnabled: false,
    dataCollectionType: 'optOut',
  };
}

function renderCollectionSummary(c: Collection): Record<string, unknown> {
  return {
    id: c.id,
    displayName: c.displayName,
    singularName: c.singularName,
    slug: c.slug,
    createdOn: iso(c.createdOn),
    lastUpdated: iso(c.lastUpdated),
  };
}

function renderCollection(c: Collection): Record<string, unknown> {
  return {
    ...renderCollectionSummary(c),
    fields: c.fields.map((f) => ({
      id: f.id,
      isEditable: f.isEditable,
      isRequired: f.isRequired,
      type: f.type,
      slug: f.slug,
      displayName: f.displayName,
      helpText: f.helpText,
      validations: f.validations,
    })),
  };
}

function renderWebhook(r: WebhookRegistration, withSecret = false): Record<string, unknown> {
  return {
    id: r.id,
    triggerType: r.triggerType,
    url: r.url,
    workspaceId: r.workspaceId,
    siteId: r.siteId,
    filter: r.filter,
    lastTriggered: iso(r.lastTriggered),
    createdOn: iso(r.createdOn),
    ...(withSecret && r.secretKey ? { secretKey: r.secretKey } : {}),
  };
}

/** `offset` and `limit` (1..100, default 100) of a list request. */
function paging(query: URLSearchParams): { offset: number; limit: number } {
  const rawLimit = query.get('limit');
  const rawOffset = query.get('offset');
  const limit = rawLimit === null ? MAX_PAGE_SIZE : Number(rawLimit);
  const offset = rawOffset === null ? 0 : Number(rawOffset);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE)
    throw validationError([
      { param: 'limit', description: `limit must be an integer from 1 to ${MAX_PAGE_SIZE}` },
    ]);
  if (!Number.isInteger(offset) || offset < 0)
    throw validationError([{ param: 'offset', description: 'offset must be a non-negative integer' }]);
  return { offset, limit };
}

// ---------------------------------------------------------------------------------------------

export async function startWebflowServer(
  state: WebflowState,
  oauth: OAuthServer,
  webhooks: WebhookDispatcher,
  options: WebflowServerOptions = {},
): Promise<WebflowServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(state.clock, options.rateLimit || {}, options.rateLimit !== false);
  const publishLimiter = new PublishLimiter(state.clock, options.publishLimit !== false);

  function canUseSite(token: TokenInfo, siteId: string): void {
    if (token.bases && !token.bases.includes(siteId)) throw unauthorized();
  }

  function collectionFor(token: TokenInfo, id: string): Collection {
    const c = state.collection(checkId(id));
    canUseSite(token, c.siteId);
    return c;
  }

  function siteFor(token: TokenInfo, id: string): Site {
    const s = state.site(checkId(id));
    canUseSite(token, s.id);
    return s;
  }

  async function handle(req: SimRequest): Promise<SimResponse> {
    const parts = req.path
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);

    // OAuth: no bearer token, and not rate limited per key.
    if (parts[0] === 'oauth' && parts.length === 2) {
      if (parts[1] === 'authorize' && req.method === 'GET') return oauth.authorize(req.query);
      if (parts[1] === 'access_token' && req.method === 'POST') return oauth.accessToken(req.body);
      if (parts[1] === 'revoke_authorization' && req.method === 'POST') return oauth.revoke(req.body);
    }

    const route = parts[0] === 'v2' ? matchRoute(req.method, parts.slice(1)) : undefined;
    if (!route) return json(404, notFound().body);

    const check = state.tokens.check(bearerToken(req.headers));
    if (!check.ok) return json(401, unauthorized().body);
    const token = check.info;

    let response: SimResponse;
    try {
      limiter.take(token.token);
      const missing = route.scopes.filter((s) => !token.scopes.includes(s));
      if (missing.length > 0) {
        throw new WebflowApiError(
          403,
          'missing_scopes',
          `OAuthForbidden: You are missing the following scopes - ${missing.join(', ')}`,
        );
      }
      if (req.bodyInvalid) throw badRequest();
      response = await route.run({ req, token });
      oauth.touch(token);
    } catch (err) {
      if (!(err instanceof WebflowApiError)) throw err;
      response = { status: err.status, body: err.body, headers: err.headers };
    }
    response.headers = { ...limiter.headers(token.token), ...response.headers };
    return response;
  }

  function matchRoute(method: string, p: string[]): Route | undefined {
    const route = (scopes: string[], run: Route['run']): Route => ({ scopes, run });
    const [a, b, c, d, e] = p;

    if (a === 'sites') {
      if (p.length === 1 && method === 'GET') return route(['sites:read'], listSites);
      if (b === undefined) return undefined;
      if (p.length === 2 && method === 'GET') return route(['sites:read'], (x) => getSite(x, b));
      if (p.length === 3 && c === 'publish' && method === 'POST')
        return route(['sites:write'], (x) => publishSite(x, b));
      if (p.length === 3 && c === 'collections' && method === 'GET')
        return route(['cms:read'], (x) => listCollections(x, b));
      if (p.length === 3 && c === 'webhooks' && method === 'GET')
        return route(['sites:read'], (x) => listWebhooks(x, b));
      if (p.length === 3 && c === 'webhooks' && method === 'POST')
        return route(['sites:write'], (x) => createWebhook(x, b));
      return undefined;
    }
    if (a === 'token' && p.length === 2 && method === 'GET') {
      if (b === 'introspect') return route([], ({ token }) => oauth.introspect(token));
      if (b === 'authorized_by') return route(['authorized_user:read'], () => oauth.authorizedBy());
      return undefined;
    }
    if (a === 'webhooks' && b !== undefined && p.length === 2) {
      if (method === 'GET') return route(['sites:read'], (x) => getWebhook(x, b));
      if (method === 'DELETE') return route(['sites:write'], (x) => deleteWebhook(x, b));
      return undefined;
    }
    if (a === 'collections' && b !== undefined) {
      if (p.length === 2 && method === 'GET') return route(['cms:read'], (x) => getCollection(x, b));
      if (c !== 'items') return undefined;
      if (p.length === 3) {
        if (method === 'GET') return route(['cms:read'], (x) => listItems(x, b, false));
        if (method === 'POST') return route(['cms:write'], (x) => createItems(x, b, false));
        if (method === 'PATCH') return route(['cms:write'], (x) => updateItems(x, b, false));
        if (method === 'DELETE') return route(['cms:write'], (x) => deleteItems(x, b));
        return undefined;
      }
      if (d === undefined) return undefined;
      if (p.length === 4 && d === 'live') {
        if (method === 'GET') return route(['cms:read'], (x) => listItems(x, b, true));
        if (method === 'POST') return route(['cms:write'], (x) => createItems(x, b, true));
        if (method === 'PATCH') return route(['cms:write'], (x) => updateItems(x, b, true));
        if (method === 'DELETE') return route(['cms:write'], (x) => unpublishItems(x, b));
        return undefined;
      }
      if (p.length === 4 && d === 'bulk' && method === 'POST')
        return route(['cms:write'], (x) => bulkCreate(x, b));
      if (p.length === 4 && d === 'publish' && method === 'POST')
        return route(['cms:write'], (x) => publishItems(x, b));
      if (p.length === 4) {
        if (method === 'GET') return route(['cms:read'], (x) => getItem(x, b, d, false));
        if (method === 'PATCH') return route(['cms:write'], (x) => updateItem(x, b, d, false));
        if (method === 'DELETE') return route(['cms:write'], (x) => deleteItem(x, b, d));
        return undefined;
      }
      if (p.length === 5 && e === 'live') {
        if (method === 'GET') return route(['cms:read'], (x) => getItem(x, b, d, true));
        if (method === 'PATCH') return route(['cms:write'], (x) => updateItem(x, b, d, true));
        if (method === 'DELETE') return route(['cms:write'], (x) => unpublishItem(x, b, d));
      }
      return undefined;
    }
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Sites

  function listSites({ token }: Ctx): SimResponse {
    const sites = [...state.sites.values()].filter((s) => !token.bases || token.bases.includes(s.id));
    return json(200, { sites: sites.map(renderSite) });
  }

  function getSite({ token }: Ctx, id: string): SimResponse {
    return json(200, renderSite(siteFor(token, id)));
  }

  function publishSite({ token, req }: Ctx, id: string): SimResponse {
    const site = siteFor(token, id);
    const body = record(req.body ?? {});
    const domainIds = body.customDomains;
    const toSubdomain = body.publishToWebflowSubdomain === true;
    if (domainIds !== undefined && !Array.isArray(domainIds)) throw badRequest();
    const ids = (domainIds ?? []) as unknown[];
    if (ids.length === 0 && !toSubdomain) {
      throw badRequest('Bad Request: Provide customDomains or publishToWebflowSubdomain');
    }
    const domains = ids.map((x) => {
      const dom = site.customDomains.find((dd) => dd.id === x);
      if (!dom)
        throw new WebflowApiError(
          400,
          'invalid_domain',
          'Requested an invalid Domain. Please send a valid custom domain URI.',
        );
      return dom;
    });
    publishLimiter.check(site.id);
    state.publishSite(site.id, 'api');
    publishLimiter.record(site.id);
    const now = state.clock.now();
    for (const dom of domains) dom.lastPublished = now;
    return json(202, {
      customDomains: domains.map((dom) => ({
        id: dom.id,
        url: dom.url,
        lastPublished: iso(dom.lastPublished),
      })),
      publishToWebflowSubdomain: toSubdomain,
    });
  }

  // -------------------------------------------------------------------------------------------
  // Collections

  function listCollections({ token }: Ctx, siteId: string): SimResponse {
    const site = siteFor(token, siteId);
    const collections = [...state.collections.values()].filter((c) => c.siteId === site.id);
    return json(200, { collections: collections.map(renderCollectionSummary) });
  }

  function getCollection({ token }: Ctx, id: string): SimResponse {
    return json(200, renderCollection(collectionFor(token, id)));
  }

  // -------------------------------------------------------------------------------------------
  // Items

  function checkLocaleQuery(c: Collection, query: URLSearchParams): void {
    const wanted = query.get('cmsLocaleId');
    if (wanted === null || wanted === '') return;
    const site = state.site(c.siteId);
    for (const id of wanted.split(',')) {
      if (id !== site.locale.cmsLocaleId)
        throw validationError([{ param: 'cmsLocaleId', description: `Provided ID is invalid: '${id}'` }]);
    }
  }

  function listItems({ token, req }: Ctx, collectionId: string, live: boolean): SimResponse {
    const c = collectionFor(token, collectionId);
    checkLocaleQuery(c, req.query);
    const { offset, limit } = paging(req.query);
    let rows = state
      .listItems(c.id)
      .map((it) => (live ? renderLive(it) : renderItem(it)))
      .filter((r): r is Record<string, unknown> => r !== undefined);
    const name = req.query.get('name');
    const slug = req.query.get('slug');
    if (name !== null) rows = rows.filter((r) => (r.fieldData as { name?: unknown }).name === name);
    if (slug !== null) rows = rows.filter((r) => (r.fieldData as { slug?: unknown }).slug === slug);
    const sortBy = req.query.get('sortBy');
    if (sortBy !== null) {
      if (!['lastPublished', 'name', 'slug'].includes(sortBy))
        throw validationError([{ param: 'sortBy', description: 'Must be one of lastPublished, name, slug' }]);
      const dir = req.query.get('sortOrder') === 'desc' ? -1 : 1;
      const key = (r: Record<string, unknown>) =>
        String(
          sortBy === 'lastPublished'
            ? (r.lastPublished ?? '')
            : (r.fieldData as Record<string, unknown>)[sortBy],
        );
      rows = [...rows].sort((x, y) => dir * key(x).localeCompare(key(y)));
    }
    return json(200, {
      items: rows.slice(offset, offset + limit),
      pagination: { limit, offset, total: rows.length },
    });
  }

  function getItem({ token, req }: Ctx, collectionId: string, itemId: string, live: boolean): SimResponse {
    const c = collectionFor(token, collectionId);
    checkLocaleQuery(c, req.query);
    const item = state.item(c.id, checkId(itemId));
    if (!live) return json(200, renderItem(item));
    const rendered = renderLive(item);
    if (!rendered) throw notFound();
    return json(200, rendered);
  }

  /** POST /items and /items/live: one item, or `{items: [...]}`. */
  function createItems({ token, req }: Ctx, collectionId: string, live: boolean): SimResponse {
    const c = collectionFor(token, collectionId);
    const body = record(req.body);
    const many = Array.isArray(body.items);
    const inputs = many ? itemsArray(body).map(itemInput) : [itemInput(body)];
    const created = state.createItems(c.id, inputs, {
      source: 'api',
      skipInvalidFiles: skipInvalidFiles(req.query),
    });
    if (live)
      state.publishItems(
        c.id,
        created.map((i) => i.id),
        'api',
      );
    const out = created.map((i) => (live ? (renderLive(i) ?? renderItem(i)) : renderItem(i)));
    return json(202, many ? { items: out } : out[0]);
  }

  /** POST /items/bulk: `fieldData` is one item or an array; the same flags apply to each. */
  function bulkCreate({ token, req }: Ctx, collectionId: string): SimResponse {
    const c = collectionFor(token, collectionId);
    const body = record(req.body);
    const site = state.site(c.siteId);
    const locales = body.cmsLocaleIds;
    if (locales !== undefined) {
      if (!Array.isArray(locales) || locales.some((l) => l !== site.locale.cmsLocaleId))
        throw validationError([{ param: 'cmsLocaleIds', description: 'Provided ID is invalid' }]);
    }
    const list = Array.isArray(body.fieldData) ? body.fieldData : [body.fieldData];
    if (list.length === 0 || list.length > MAX_BULK_ITEMS)
      throw validationError([
        { param: 'fieldData', description: `Must contain 1 to ${MAX_BULK_ITEMS} items` },
      ]);
    const inputs: ItemInput[] = list.map((fd) => ({
      fieldData: record(fd),
      ...(typeof body.isArchived === 'boolean' ? { isArchived: body.isArchived } : {}),
      ...(typeof body.isDraft === 'boolean' ? { isDraft: body.isDraft } : {}),
    }));
    const created = state.createItems(c.id, inputs, {
      source: 'api',
      skipInvalidFiles: skipInvalidFiles(req.query),
    });
    return json(202, { items: created.map(renderItem) });
  }

  function neverPublishedConflict(): WebflowApiError {
    return new WebflowApiError(
      409,
      'conflict',
      "Conflict: Conflict with server data: Live PATCH updates can't be applied to items that have never been published",
    );
  }

  /** PATCH /items and /items/live: `{items: [{id, fieldData, isDraft, isArchived}]}`. */
  function updateItems({ token, req }: Ctx, collectionId: string, live: boolean): SimResponse {
    const c = collectionFor(token, collectionId);
    const raw = itemsArray(req.body);
    const ids = idsOf(raw);
    const inputs = raw.map((r, i) => ({ ...itemInput(r), id: ids[i] as string }));
    if (live && ids.some((id) => state.item(c.id, id).lastPublished === null)) throw neverPublishedConflict();
    const updated = state.updateItems(c.id, inputs, {
      source: 'api',
      skipInvalidFiles: skipInvalidFiles(req.query),
    });
    if (live) state.publishItems(c.id, ids, 'api');
    return json(200, {
      items: updated.map((i) => (live ? (renderLive(i) ?? renderItem(i)) : renderItem(i))),
    });
  }

  function updateItem({ token, req }: Ctx, collectionId: string, itemId: string, live: boolean): SimResponse {
    const c = collectionFor(token, collectionId);
    const id = checkId(itemId);
    const existing = state.item(c.id, id);
    if (live && existing.lastPublished === null) throw neverPublishedConflict();
    const [item] = state.updateItems(c.id, [{ ...itemInput(req.body), id }], {
      source: 'api',
      skipInvalidFiles: skipInvalidFiles(req.query),
    });
    if (!item) throw notFound();
    if (live) state.publishItems(c.id, [id], 'api');
    return json(200, live ? (renderLive(item) ?? renderItem(item)) : renderItem(item));
  }

  function deleteItems({ token, req }: Ctx, collectionId: string): SimResponse {
    const c = collectionFor(token, collectionId);
    state.deleteItems(c.id, idsOf(itemsArray(req.body)), 'api');
    return { status: 204 };
  }

  function deleteItem({ token }: Ctx, collectionId: string, itemId: string): SimResponse {
    const c = collectionFor(token, collectionId);
    state.deleteItems(c.id, [checkId(itemId)], 'api');
    return { status: 204 };
  }

  function unpublishItems({ token, req }: Ctx, collectionId: string): SimResponse {
    const c = collectionFor(token, collectionId);
    state.unpublishItems(c.id, idsOf(itemsArray(req.body)), 'api');
    return { status: 204 };
  }

  function unpublishItem({ token }: Ctx, collectionId: string, itemId: string): SimResponse {
    const c = collectionFor(token, collectionId);
    const item = state.item(c.id, checkId(itemId));
    if (!item.live) throw notFound();
    state.unpublishItems(c.id, [item.id], 'api');
    return { status: 204 };
  }

  /** `{itemIds: [...]}` or `{items: [{id, cmsLocaleIds}]}`. */
  function publishItems({ token, req }: Ctx, collectionId: string): SimResponse {
    const c = collectionFor(token, collectionId);
    const body = record(req.body);
    let ids: string[];
    if (Array.isArray(body.itemIds)) ids = body.itemIds.map(String);
    else if (Array.isArray(body.items)) ids = idsOf(body.items);
    else throw validationError([{ param: 'itemIds', description: 'itemIds or items is required' }]);
    if (ids.length === 0 || ids.length > MAX_BULK_ITEMS)
      throw validationError([{ param: 'itemIds', description: `Must contain 1 to ${MAX_BULK_ITEMS} ids` }]);
    return json(202, state.publishItems(c.id, ids, 'api'));
  }

  // -------------------------------------------------------------------------------------------
  // Webhooks

  function listWebhooks({ token }: Ctx, siteId: string): SimResponse {
    const site = siteFor(token, siteId);
    const all = webhooks.forSite(site.id);
    return json(200, {
      webhooks: all.map((r) => renderWebhook(r)),
      pagination: { limit: all.length, offset: 0, total: all.length },
    });
  }

  function createWebhook({ token, req }: Ctx, siteId: string): SimResponse {
    const site = siteFor(token, siteId);
    const body = record(req.body);
    const triggerType = body.triggerType;
    if (typeof triggerType !== 'string' || !(TRIGGER_TYPES as readonly string[]).includes(triggerType)) {
      throw validationError([
        { param: 'triggerType', description: `Invalid trigger type: '${String(triggerType)}'` },
      ]);
    }
    let url: URL;
    try {
      url = new URL(String(body.url));
    } catch {
      throw validationError([{ param: 'url', description: 'Invalid url' }]);
    }
    let filter: { name: string } | null = null;
    if (body.filter !== undefined && body.filter !== null) {
      if (triggerType !== 'form_submission')
        throw new WebflowApiError(
          400,
          'incompatible_webhook_filter',
          'Bad Request: filter is only supported for form_submission',
        );
      filter = { name: String(record(body.filter).name ?? '') };
    }
    if (webhooks.forSite(site.id).filter((r) => r.triggerType === triggerType).length >= MAX_PER_TRIGGER) {
      throw validationError([
        { param: 'triggerType', description: `Limit of ${MAX_PER_TRIGGER} webhooks per triggerType reached` },
      ]);
    }
    // OAuth-made webhooks are signed with the app's client secret; site-token-made ones with a
    // secret of their own, returned in this response.
    const app = token.kind === 'oauth' ? oauth.appOfToken(token.token) : undefined;
    const secretKey = app ? undefined : state.newSecret(64);
    const reg: WebhookRegistration = {
      id: state.newId(),
      siteId: site.id,
      workspaceId: site.workspaceId,
      triggerType: triggerType as TriggerType,
      url: url.toString(),
      filter,
      createdOn: state.clock.now(),
      lastTriggered: null,
      signingKey: app ? app.clientSecret : secretKey,
      ...(secretKey ? { secretKey } : {}),
    };
    webhooks.registrations.set(reg.id, reg);
    return json(201, renderWebhook(reg, true));
  }

  function webhookFor(token: TokenInfo, id: string): WebhookRegistration {
    const reg = webhooks.registrations.get(checkId(id));
    if (!reg) throw notFound();
    canUseSite(token, reg.siteId);
    return reg;
  }

  function getWebhook({ token }: Ctx, id: string): SimResponse {
    return json(200, renderWebhook(webhookFor(token, id)));
  }

  function deleteWebhook({ token }: Ctx, id: string): SimResponse {
    const reg = webhookFor(token, id);
    webhooks.registrations.delete(reg.id);
    return { status: 204 };
  }

  const server = await startHttpServer({
    handler: handle,
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => {
      const err = limiter.refusal();
      return { status: err.status, body: err.body, headers: err.headers };
    },
  });
  return { ...server, faults, requestLog, limiter };
}
