/**
 * HTTP routes of the HubSpot simulator: auth and scopes, rate limits, CRM objects v3 (basic,
 * batch, search, merge), properties v3 and associations v4. Bodies follow HubSpot's OpenAPI specs
 * (HubSpot-public-api-spec-collection); errors use HubSpot's {status, message, correlationId,
 * category} shape.
 */
import { randomUUID } from 'node:crypto';
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
  type AssociationInput,
  apiError,
  associationType,
  type CrmObject,
  defaultAssociationType,
  HubSpotApiError,
  type HubSpotState,
  notFound,
} from './model.ts';
import { type HubSpotOAuthOptions, HubSpotOAuthServer } from './oauth.ts';
import {
  DEFAULT_READ_PROPERTIES,
  FIELD_TYPES,
  LAST_MODIFIED,
  OBJECT_TYPE_IDS,
  type ObjectType,
  PROPERTY_TYPES,
  type PropertyDef,
  type PropertyType,
  SINGULAR,
} from './properties.ts';
import { RateLimiter, type RateLimitOptions, rateLimitBody } from './rate-limit.ts';
import { runSearch, type SearchRequest } from './search.ts';

export const MAX_PAGE_SIZE = 100;
export const MAX_BATCH_INPUTS = 100;
/** Associations v4 batch read: at most 1,000 ids per request (HubSpot's changelog, February 2025). */
export const MAX_ASSOCIATION_READ_INPUTS = 1000;
/**
 * Associations v4 batch create, associate/default and archive: HubSpot's reference gives no number;
 * the simulator takes up to 2,000 inputs (the maximum Workato documents for its HubSpot batch
 * associate action) and refuses more with a 400.
 */
export const MAX_ASSOCIATION_WRITE_INPUTS = 2000;
/** Associated records per input and page of a batch read (as the single GET's 500). */
export const ASSOCIATION_PAGE_SIZE = 500;

const AUTH_MISSING_MESSAGE =
  'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview';
const MISSING_SCOPES_MESSAGE =
  "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.";

export type HubSpotServerOptions = HubSpotOAuthOptions & {
  /** `false` turns the limits off. */
  rateLimit?: false | RateLimitOptions;
  /** Scopes an app may ask for on the install page (default: the CRM scopes the simulator knows). */
  knownScopes?: readonly string[];
};

export type HubSpotServer = RunningServer & {
  oauth: HubSpotOAuthServer;
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
};

type Ctx = { req: SimRequest; origin: string };

type Route = { scopes: string[]; search: boolean; run: (ctx: Ctx) => SimResponse | Promise<SimResponse> };

const invalid = (message: string) => apiError(400, 'VALIDATION_ERROR', message);

function objectType(segment: string): ObjectType {
  const known: Record<string, ObjectType> = {
    ...OBJECT_TYPE_IDS,
    contacts: 'contacts',
    contact: 'contacts',
    companies: 'companies',
    company: 'companies',
    deals: 'deals',
    deal: 'deals',
  };
  const t = known[segment.toLowerCase()];
  if (!t) throw invalid(`Unable to infer object type from: ${segment}`);
  return t;
}

/** `properties=a,b` and `properties=a&properties=b` both work, as in HubSpot. */
function listParam(query: URLSearchParams, name: string): string[] | undefined {
  const all = query.getAll(name);
  if (all.length === 0) return undefined;
  return all
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------
// Rendering

type RenderOptions = {
  properties?: string[];
  /** Render these values instead of the live ones (search reads the lagging index). */
  values?: Map<string, string>;
  updatedAt?: number;
  associations?: ObjectType[];
  associationNames?: string[];
};

function renderObject(state: HubSpotState, obj: CrmObject, o: RenderOptions = {}): Record<string, unknown> {
  const values = o.values ?? obj.properties;
  const names = new Set(o.properties ?? DEFAULT_READ_PROPERTIES[obj.type]);
  // HubSpot always returns the id and the two timestamps.
  for (const always of ['hs_object_id', 'createdate', LAST_MODIFIED[obj.type]]) names.add(always);
  const properties: Record<string, string | null> = {};
  for (const name of [...names].sort()) {
    if (!state.property(obj.type, name)) continue;
    properties[name] = values.get(name) ?? null;
  }
  const out: Record<string, unknown> = {
    id: obj.id,
    properties,
    createdAt: iso(obj.createdAt),
    updatedAt: iso(o.updatedAt ?? obj.updatedAt),
    archived: obj.archived,
  };
  if (obj.archived && obj.archivedAt !== undefined) out.archivedAt = iso(obj.archivedAt);
  if (o.associations && o.associations.length > 0) {
    const associations: Record<string, unknown> = {};
    o.associations.forEach((to, i) => {
      const results = state.associated(obj.type, obj.id, to).flatMap((a) =>
        a.typeIds.map((typeId) => ({
          id: a.id,
          type: associationType(obj.type, to, typeId)?.name ?? String(typeId),
        })),
      );
      if (results.length > 0) associations[o.associationNames?.[i] ?? to] = { results };
    });
    if (Object.keys(associations).length > 0) out.associations = associations;
  }
  return out;
}

function renderProperty(p: PropertyDef): Record<string, unknown> {
  return {
    updatedAt: iso(p.updatedAt),
    createdAt: iso(p.createdAt),
    name: p.name,
    label: p.label,
    type: p.type,
    fieldType: p.fieldType,
    description: p.description,
    groupName: p.groupName,
    options: p.options,
    displayOrder: p.displayOrder,
    calculated: p.calculated,
    externalOptions: false,
    hasUniqueValue: p.hasUniqueValue,
    hidden: p.hidden,
    hubspotDefined: p.hubspotDefined,
    modificationMetadata: {
      archivable: !p.hubspotDefined,
      readOnlyDefinition: p.hubspotDefined,
      readOnlyValue: p.readOnlyValue,
    },
    formField: p.formField,
    dataSensitivity: 'non_sensitive',
    ...(p.archived ? { archived: true } : {}),
  };
}

function batchResponse(results: unknown[], startedAt: number, completedAt: number, errors: unknown[] = []) {
  return {
    status: 'COMPLETE',
    results,
    ...(errors.length > 0 ? { numErrors: errors.length, errors } : {}),
    startedAt: iso(startedAt),
    completedAt: iso(completedAt),
  };
}

function notFoundInBatch(type: ObjectType, ids: string[]) {
  return {
    status: 'error',
    category: 'OBJECT_NOT_FOUND',
    message: `Could not get some ${SINGULAR[type].toUpperCase()} objects, they may be deleted or not exist. Check that ids are valid.`,
    context: { ids },
    errors: [],
    links: {},
  };
}

// ---------------------------------------------------------------------------------------------
// Body helpers

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(`${what} must be an object.`);
  return value as Record<string, unknown>;
}

function batchInputs(body: unknown): Record<string, unknown>[] {
  const inputs = record(body, 'The request body').inputs;
  if (!Array.isArray(inputs))
    throw invalid('Invalid input JSON: the request body must have an array of inputs.');
  if (inputs.length > MAX_BATCH_INPUTS) {
    throw invalid(
      `Too many inputs: ${inputs.length}. The maximum number of inputs per batch request is ${MAX_BATCH_INPUTS}.`,
    );
  }
  return inputs.map((i) => record(i, 'Each input'));
}

function checkDuplicateIds(ids: string[]): void {
  const seen = new Set<string>();
  const dupes = new Set<string>();
  for (const id of ids) (seen.has(id) ? dupes : seen).add(id);
  if (dupes.size > 0)
    throw invalid(`Duplicate IDs found in batch input: [${[...dupes].join(', ')}]. IDs must be unique`);
}

function associationInputs(value: unknown): AssociationInput[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid('associations must be an array.');
  return value as AssociationInput[];
}

// ---------------------------------------------------------------------------------------------
// Server

export async function startHubSpotServer(
  state: HubSpotState,
  options: HubSpotServerOptions = {},
): Promise<HubSpotServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(state.clock, options.rateLimit || {}, options.rateLimit !== false);
  const oauth = new HubSpotOAuthServer(state, ['oauth', ...(options.knownScopes ?? [])], options);

  /** OAuth lives outside the API's auth: the install page, the token endpoint, token metadata. */
  function oauthRoute(req: SimRequest, parts: string[]): SimResponse | undefined {
    if (parts[0] !== 'oauth') return undefined;
    if (req.method === 'GET' && parts.length === 2 && parts[1] === 'authorize')
      return oauth.authorize(req.query);
    if (req.method === 'POST' && parts.length === 3 && parts[1] === 'v1' && parts[2] === 'token') {
      if (!String(req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
        return json(415, {
          status: 'error',
          message: 'Content type must be application/x-www-form-urlencoded',
          correlationId: randomUUID(),
        });
      }
      return oauth.token(req.body);
    }
    if (parts[1] === 'v1' && parts[2] === 'access-tokens' && parts.length === 4 && req.method === 'GET')
      return oauth.accessTokenInfo(parts[3] as string);
    if (parts[1] === 'v1' && parts[2] === 'refresh-tokens' && parts.length === 4 && req.method === 'DELETE') {
      return oauth.revokeRefreshToken(parts[3] as string)
        ? { status: 204 }
        : json(404, { status: 'error', message: 'refresh token not found', correlationId: randomUUID() });
    }
    return undefined;
  }

  // Looks up a live object by id, or by a unique property with `idProperty`.
  function find(
    type: ObjectType,
    id: string,
    idProperty: string | null,
    archived = false,
  ): CrmObject | undefined {
    if (idProperty && idProperty !== 'hs_object_id') {
      const def = state.property(type, idProperty);
      if (!def?.hasUniqueValue)
        throw invalid(`${idProperty} is not a unique identifier property for ${type}.`);
      const obj = state.findByUnique(type, idProperty, id);
      return obj && obj.archived === archived ? obj : undefined;
    }
    return state.get(type, id, { archived });
  }

  async function handle(req: SimRequest): Promise<SimResponse> {
    const parts = req.path
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    const oauthAnswer = oauthRoute(req, parts);
    if (oauthAnswer) return oauthAnswer;
    let route: Route | undefined;
    try {
      route = matchRoute(req.method, parts);
    } catch (err) {
      if (err instanceof HubSpotApiError) return json(err.status, err.body);
      throw err;
    }
    if (!route) {
      return json(404, {
        status: 'error',
        message: 'Not Found',
        correlationId: randomUUID(),
        category: 'OBJECT_NOT_FOUND',
      });
    }

    const token = bearerToken(req.headers);
    const check = state.tokens.check(token);
    if (!check.ok) {
      if (check.reason === 'expired') {
        return json(401, {
          status: 'error',
          message: 'The OAuth token used to make this call expired.',
          correlationId: randomUUID(),
          category: 'EXPIRED_AUTHENTICATION',
        });
      }
      return json(401, {
        status: 'error',
        message: AUTH_MISSING_MESSAGE,
        correlationId: randomUUID(),
        category: 'INVALID_AUTHENTICATION',
      });
    }
    const tokenValue = check.info.token;
    const refused = limiter.take(tokenValue, route.search);
    if (refused) return limiter.refusal(refused, tokenValue, state.portalId);

    let response: SimResponse;
    try {
      const missing = route.scopes.filter((s) => !check.info.scopes.includes(s));
      if (missing.length > 0) {
        throw apiError(403, 'MISSING_SCOPES', MISSING_SCOPES_MESSAGE, {
          errors: [
            {
              message: 'One or more of the following scopes are required.',
              context: { requiredGranularScopes: missing },
            },
          ],
          links: { scopes: 'https://developers.hubspot.com/scopes' },
        });
      }
      if (req.bodyInvalid)
        throw invalid('Invalid input JSON on line 1, column 1: Cannot parse the request body as JSON');
      response = await route.run({ req, origin: `http://${req.headers.host ?? '127.0.0.1'}` });
    } catch (err) {
      if (!(err instanceof HubSpotApiError)) throw err;
      response = json(err.status, err.body);
    }
    const correlationId =
      response.body && typeof response.body === 'object' && 'correlationId' in response.body
        ? String((response.body as { correlationId: unknown }).correlationId)
        : randomUUID();
    response.headers = {
      ...limiter.headers(tokenValue),
      'X-HubSpot-Correlation-Id': correlationId,
      ...response.headers,
    };
    return response;
  }

  function matchRoute(method: string, p: string[]): Route | undefined {
    const read = (t: ObjectType) => [`crm.objects.${t}.read`];
    const write = (t: ObjectType) => [`crm.objects.${t}.write`];
    const route = (scopes: string[], run: Route['run'], search = false): Route => ({ scopes, run, search });

    // /crm/v3/objects/{type}...
    if (p[0] === 'crm' && p[1] === 'v3' && p[2] === 'objects' && p[3] !== undefined) {
      const type = objectType(p[3]);
      const rest = p.slice(4);
      if (rest.length === 0 && method === 'GET') return route(read(type), (c) => listObjects(type, c));
      if (rest.length === 0 && method === 'POST') return route(write(type), (c) => createObject(type, c));
      if (rest.length === 1 && rest[0] === 'search' && method === 'POST') {
        return route(read(type), (c) => search(type, c), true);
      }
      if (rest.length === 1 && rest[0] === 'merge' && method === 'POST')
        return route(write(type), (c) => merge(type, c));
      if (rest.length === 2 && rest[0] === 'batch' && method === 'POST') {
        const op = rest[1];
        if (op === 'read') return route(read(type), (c) => batchRead(type, c));
        if (op === 'create') return route(write(type), (c) => batchCreate(type, c));
        if (op === 'update') return route(write(type), (c) => batchUpdate(type, c));
        if (op === 'upsert') return route(write(type), (c) => batchUpsert(type, c));
        if (op === 'archive') return route(write(type), (c) => batchArchive(type, c));
        return undefined;
      }
      if (rest.length === 1 && rest[0] !== undefined) {
        const id = rest[0];
        if (method === 'GET') return route(read(type), (c) => getObject(type, id, c));
        if (method === 'PATCH') return route(write(type), (c) => updateObject(type, id, c));
        if (method === 'DELETE') return route(write(type), () => archiveObject(type, id));
      }
      return undefined;
    }
    // /account-info/v3/details: the portal the token belongs to (any valid token may ask).
    if (
      p[0] === 'account-info' &&
      p[1] === 'v3' &&
      p[2] === 'details' &&
      p.length === 3 &&
      method === 'GET'
    ) {
      return route([], () =>
        json(200, {
          portalId: state.portalId,
          accountType: 'STANDARD',
          timeZone: 'US/Eastern',
          companyCurrency: 'USD',
          additionalCurrencies: [],
          utcOffset: '-05:00',
          utcOffsetMilliseconds: -18_000_000,
          uiDomain: 'app.hubspot.com',
          dataHostingLocation: 'na1',
        }),
      );
    }
    // /crm/v3/properties/{type}[/{name}]
    if (p[0] === 'crm' && p[1] === 'v3' && p[2] === 'properties' && p[3] !== undefined) {
      const type = objectType(p[3]);
      const name = p[4];
      if (p.length === 4 && method === 'GET')
        return route([`crm.schemas.${type}.read`], (c) => listProperties(type, c));
      if (p.length === 4 && method === 'POST')
        return route([`crm.schemas.${type}.write`], (c) => createProperty(type, c));
      if (p.length === 5 && name !== undefined && method === 'GET') {
        return route([`crm.schemas.${type}.read`], () => getProperty(type, name));
      }
      return undefined;
    }
    // /crm/v4/associations/{from}/{to}/batch/{read|associate/default|create|archive}
    if (p[0] === 'crm' && p[1] === 'v4' && p[2] === 'associations' && p[3] && p[4] && p[5] === 'batch') {
      const from = objectType(p[3]);
      const to = objectType(p[4]);
      const op = p.slice(6).join('/');
      if (method !== 'POST') return undefined;
      if (op === 'read') return route(read(from), (c) => batchReadAssociations(from, to, c));
      if (op === 'associate/default') return route(write(from), (c) => batchAssociateDefault(from, to, c));
      if (op === 'create') return route(write(from), (c) => batchAssociateLabelled(from, to, c));
      if (op === 'archive') return route(write(from), (c) => batchArchiveAssociations(from, to, c));
      return undefined;
    }
    // /crm/v4/objects/{from}/{id}/associations/...
    if (p[0] === 'crm' && p[1] === 'v4' && p[2] === 'objects' && p[5] === 'associations' && p[3] && p[4]) {
      const from = objectType(p[3]);
      const fromId = p[4];
      if (p.length === 9 && p[6] === 'default' && method === 'PUT' && p[7] && p[8]) {
        const to = objectType(p[7]);
        const toId = p[8];
        return route(write(from), () => associateDefault(from, fromId, to, toId));
      }
      if (p.length === 7 && p[6] && method === 'GET') {
        const to = objectType(p[6]);
        return route(read(from), (c) => listAssociations(from, fromId, to, c));
      }
      if (p.length === 8 && p[6] && p[7]) {
        const to = objectType(p[6]);
        const toId = p[7];
        if (method === 'PUT') return route(write(from), (c) => associateLabelled(from, fromId, to, toId, c));
        if (method === 'DELETE') {
          return route(write(from), () => {
            state.unassociate(from, fromId, to, toId);
            return { status: 204 };
          });
        }
      }
    }
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Objects

  function readOptions(q: URLSearchParams): RenderOptions {
    const names = listParam(q, 'associations');
    const o: RenderOptions = {};
    const properties = listParam(q, 'properties');
    if (properties) o.properties = properties;
    if (names) {
      // Unknown association types are ignored, as HubSpot documents.
      const known = names.flatMap((n) => {
        try {
          return [{ type: objectType(n), name: n }];
        } catch {
          return [];
        }
      });
      o.associations = known.map((k) => k.type);
      o.associationNames = known.map((k) => k.name);
    }
    return o;
  }

  function listObjects(type: ObjectType, { req, origin }: Ctx): SimResponse {
    const q = req.query;
    const rawLimit = q.get('limit');
    let limit = rawLimit === null ? 10 : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1)
      throw invalid(`limit must be a positive integer, got ${rawLimit}.`);
    // HubSpot caps a list page at 100 rather than refusing a larger limit.
    limit = Math.min(limit, MAX_PAGE_SIZE);
    const rawAfter = q.get('after');
    const after = rawAfter === null || rawAfter === '' ? 0 : Number(rawAfter);
    if (!Number.isFinite(after)) throw invalid(`Invalid after value: ${rawAfter}`);
    const archived = q.get('archived') === 'true';
    const all = state.list(type).filter((o) => o.archived === archived && Number(o.id) >= after);
    const page = all.slice(0, limit);
    const options = readOptions(q);
    const body: Record<string, unknown> = { results: page.map((o) => renderObject(state, o, options)) };
    const next = all[limit];
    if (next) {
      const link = new URL(`${origin}${req.path}`);
      for (const [k, v] of q) if (k !== 'after') link.searchParams.append(k, v);
      link.searchParams.set('after', next.id);
      body.paging = { next: { after: next.id, link: link.toString() } };
    }
    return json(200, body);
  }

  function getObject(type: ObjectType, id: string, { req }: Ctx): SimResponse {
    const obj = find(type, id, req.query.get('idProperty'), req.query.get('archived') === 'true');
    if (!obj) throw notFound();
    return json(200, renderObject(state, obj, readOptions(req.query)));
  }

  function createObject(type: ObjectType, { req }: Ctx): SimResponse {
    const body = record(req.body, 'The request body');
    const input = record(body.properties, 'properties');
    const obj = state.create(type, input, 'INTEGRATION', associationInputs(body.associations));
    return json(201, renderObject(state, obj, { properties: Object.keys(input) }));
  }

  function updateObject(type: ObjectType, id: string, { req }: Ctx): SimResponse {
    const obj = find(type, id, req.query.get('idProperty'));
    if (!obj) throw notFound();
    const input = record(record(req.body, 'The request body').properties, 'properties');
    state.apply(obj, state.prepareUpdate(obj, input), 'INTEGRATION');
    return json(200, renderObject(state, obj, { properties: Object.keys(input) }));
  }

  function archiveObject(type: ObjectType, id: string): SimResponse {
    // Archiving an unknown or already archived id is a no-op 204, as in HubSpot.
    state.archive(type, id, 'INTEGRATION');
    return { status: 204 };
  }

  function merge(type: ObjectType, { req }: Ctx): SimResponse {
    const body = record(req.body, 'The request body');
    const primary = body.primaryObjectId;
    const other = body.objectIdToMerge;
    if (primary === undefined || other === undefined)
      throw invalid('primaryObjectId and objectIdToMerge are required.');
    const obj = state.merge(type, String(primary), String(other), 'INTEGRATION');
    return json(200, renderObject(state, obj, { properties: [...obj.properties.keys()] }));
  }

  // -------------------------------------------------------------------------------------------
  // Batch

  function batchRead(type: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const body = record(req.body, 'The request body');
    const inputs = batchInputs(body);
    const idProperty = typeof body.idProperty === 'string' ? body.idProperty : null;
    const archived = req.query.get('archived') === 'true';
    const properties =
      Array.isArray(body.properties) && body.properties.length > 0
        ? (body.properties as string[])
        : undefined;
    const results: unknown[] = [];
    const missing: string[] = [];
    for (const input of inputs) {
      const id = String(input.id);
      const obj = find(type, id, idProperty, archived);
      if (obj) results.push(renderObject(state, obj, properties ? { properties } : {}));
      else missing.push(id);
    }
    const errors = missing.length > 0 ? [notFoundInBatch(type, missing)] : [];
    return json(errors.length > 0 ? 207 : 200, batchResponse(results, started, state.clock.now(), errors));
  }

  function batchCreate(type: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const inputs = batchInputs(req.body);
    // All or nothing: every input is checked before any is stored.
    const prepared = inputs.map((input) => {
      const values = state.prepareCreate(type, record(input.properties, 'properties'));
      const associations = associationInputs(input.associations);
      state.checkAssociationInputs(type, associations);
      return { values, associations };
    });
    if (type === 'contacts') {
      const emails = prepared.map((p) => p.values.get('email')).filter((e): e is string => !!e);
      const dupe = emails.find((e, i) => emails.indexOf(e) !== i);
      if (dupe) throw apiError(409, 'CONFLICT', `Duplicate email in batch input: ${dupe}`);
    }
    const results = prepared.map(({ values, associations }) => {
      const obj = state.insert(type, values, 'INTEGRATION', associations);
      return renderObject(state, obj, { properties: [...values.keys()] });
    });
    return json(201, batchResponse(results, started, state.clock.now()));
  }

  function batchUpdate(type: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const inputs = batchInputs(req.body);
    checkDuplicateIds(inputs.map((i) => String(i.id)));
    const missing: string[] = [];
    const found: { obj: CrmObject; values: Map<string, string>; names: string[] }[] = [];
    for (const input of inputs) {
      const idProperty = typeof input.idProperty === 'string' ? input.idProperty : null;
      const obj = find(type, String(input.id), idProperty);
      if (!obj) {
        missing.push(String(input.id));
        continue;
      }
      const props = record(input.properties, 'properties');
      found.push({ obj, values: state.prepareUpdate(obj, props), names: Object.keys(props) });
    }
    const results = found.map(({ obj, values, names }) => {
      state.apply(obj, values, 'INTEGRATION');
      return renderObject(state, obj, { properties: names });
    });
    const errors = missing.length > 0 ? [notFoundInBatch(type, missing)] : [];
    return json(errors.length > 0 ? 207 : 200, batchResponse(results, started, state.clock.now(), errors));
  }

  function batchUpsert(type: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const inputs = batchInputs(req.body);
    checkDuplicateIds(inputs.map((i) => String(i.id)));
    const plan = inputs.map((input) => {
      const idProperty = typeof input.idProperty === 'string' ? input.idProperty : undefined;
      if (!idProperty) throw invalid('Upsert requires an idProperty that is a unique identifier property.');
      const def = state.property(type, idProperty);
      if (!def?.hasUniqueValue || idProperty === 'hs_object_id') {
        throw invalid(`${idProperty} is not a unique identifier property for ${type}.`);
      }
      const props = record(input.properties, 'properties');
      const existing = state.findByUnique(type, idProperty, String(input.id));
      if (existing)
        return { existing, values: state.prepareUpdate(existing, props), names: Object.keys(props) };
      const withId = { ...props, [idProperty]: String(input.id) };
      return { existing: undefined, values: state.prepareCreate(type, withId), names: Object.keys(withId) };
    });
    const results = plan.map(({ existing, values, names }) => {
      const obj = existing
        ? state.apply(existing, values, 'INTEGRATION')
        : state.insert(type, values, 'INTEGRATION');
      return { ...renderObject(state, obj, { properties: names }), new: !existing };
    });
    return json(200, batchResponse(results, started, state.clock.now()));
  }

  function batchArchive(type: ObjectType, { req }: Ctx): SimResponse {
    const inputs = batchInputs(req.body);
    for (const input of inputs) state.archive(type, String(input.id), 'INTEGRATION');
    return { status: 204 };
  }

  function search(type: ObjectType, { req }: Ctx): SimResponse {
    const body = record(req.body, 'The request body') as SearchRequest;
    const { total, hits, next } = runSearch(state, type, body);
    const properties =
      Array.isArray(body.properties) && body.properties.length > 0 ? body.properties : undefined;
    const results = hits.map((h) => {
      const obj = state.objects[type].get(h.id) as CrmObject;
      return renderObject(state, obj, {
        ...(properties ? { properties } : {}),
        values: h.version.properties,
        updatedAt: h.version.updatedAt,
      });
    });
    return json(200, { total, results, ...(next ? { paging: { next: { after: next } } } : {}) });
  }

  // -------------------------------------------------------------------------------------------
  // Properties

  function listProperties(type: ObjectType, { req }: Ctx): SimResponse {
    const archived = req.query.get('archived') === 'true';
    return json(200, {
      results: state.properties[type].filter((p) => p.archived === archived).map(renderProperty),
    });
  }

  function getProperty(type: ObjectType, name: string): SimResponse {
    const p = state.property(type, name);
    if (!p) throw apiError(404, 'OBJECT_NOT_FOUND', `Unable to find property ${name} for ${type}.`);
    return json(200, renderProperty(p));
  }

  function createProperty(type: ObjectType, { req }: Ctx): SimResponse {
    const b = record(req.body, 'The request body');
    const missing = ['name', 'label', 'type', 'fieldType', 'groupName'].filter(
      (k) => typeof b[k] !== 'string' || b[k] === '',
    );
    if (missing.length > 0) throw invalid(`Missing required fields: ${missing.join(', ')}`);
    const name = String(b.name);
    if (!/^[a-z][a-z0-9_]*$/.test(name)) {
      throw invalid(
        `Property name ${name} is invalid: names must be lower case letters, digits and underscores.`,
      );
    }
    const type_ = String(b.type) as PropertyType;
    if (!PROPERTY_TYPES.includes(type_)) throw invalid(`${type_} is not a valid property type.`);
    const fieldType = String(b.fieldType);
    if (!FIELD_TYPES.includes(fieldType)) throw invalid(`${fieldType} is not a valid field type.`);
    const options = Array.isArray(b.options) ? (b.options as Record<string, unknown>[]) : [];
    if (type_ === 'enumeration' && options.length === 0)
      throw invalid('Enumeration properties need options.');
    const now = state.clock.now();
    const def: PropertyDef = {
      name,
      label: String(b.label),
      type: type_,
      fieldType,
      groupName: String(b.groupName),
      description: typeof b.description === 'string' ? b.description : '',
      options: options.map((o, i) => ({
        label: String(o.label ?? o.value),
        value: String(o.value ?? o.label),
        displayOrder: typeof o.displayOrder === 'number' ? o.displayOrder : i,
        hidden: o.hidden === true,
        ...(typeof o.description === 'string' ? { description: o.description } : {}),
      })),
      displayOrder: typeof b.displayOrder === 'number' ? b.displayOrder : -1,
      hasUniqueValue: b.hasUniqueValue === true,
      hidden: b.hidden === true,
      formField: b.formField === true,
      calculated: false,
      hubspotDefined: false,
      readOnlyValue: false,
      createdAt: now,
      updatedAt: now,
      archived: false,
    };
    return json(201, renderProperty(state.addProperty(type, def)));
  }

  // -------------------------------------------------------------------------------------------
  // Associations v4

  function associateDefault(from: ObjectType, fromId: string, to: ObjectType, toId: string): SimResponse {
    const started = state.clock.now();
    const def = state.associate(from, fromId, to, toId);
    const a = state.resolveId(from, fromId);
    const b = state.resolveId(to, toId);
    const spec = (associationTypeId: number) => ({
      associationCategory: 'HUBSPOT_DEFINED',
      associationTypeId,
    });
    // HubSpot answers with both directions of the new association.
    const results = [{ from: { id: a }, to: { id: b }, associationSpec: spec(def.typeId) }];
    const back = defaultAssociationType(to, from);
    if (back) results.push({ from: { id: b }, to: { id: a }, associationSpec: spec(back.typeId) });
    return json(200, batchResponse(results, started, state.clock.now()));
  }

  function associateLabelled(
    from: ObjectType,
    fromId: string,
    to: ObjectType,
    toId: string,
    { req }: Ctx,
  ): SimResponse {
    const specs = req.body;
    if (!Array.isArray(specs) || specs.length === 0)
      throw invalid('The body must be an array of association types.');
    for (const s of specs as { associationTypeId?: unknown }[]) {
      state.associate(from, fromId, to, toId, Number(s.associationTypeId));
    }
    return json(201, {
      fromObjectTypeId: Object.entries(OBJECT_TYPE_IDS).find(([, t]) => t === from)?.[0],
      fromObjectId: Number(state.resolveId(from, fromId)),
      toObjectTypeId: Object.entries(OBJECT_TYPE_IDS).find(([, t]) => t === to)?.[0],
      toObjectId: Number(state.resolveId(to, toId)),
      labels: [],
    });
  }

  function listAssociations(from: ObjectType, fromId: string, to: ObjectType, { req }: Ctx): SimResponse {
    const obj = state.get(from, fromId);
    if (!obj) throw notFound();
    const limit = Math.min(Number(req.query.get('limit') ?? 500) || 500, 500);
    const all = state.associated(from, obj.id, to);
    const after = Number(req.query.get('after') ?? 0) || 0;
    const page = all.slice(after, after + limit);
    const results = page.map((a) => ({
      toObjectId: Number(a.id),
      associationTypes: a.typeIds.map((typeId) => ({
        category: 'HUBSPOT_DEFINED',
        typeId,
        label: associationType(from, to, typeId)?.primary ? 'Primary' : null,
      })),
    }));
    const next = after + limit < all.length ? { paging: { next: { after: String(after + limit) } } } : {};
    return json(200, { results, ...next });
  }

  // -------------------------------------------------------------------------------------------
  // Associations v4, batch

  /** An input's `{id}` (from, to) as a string, or a 400 naming what is missing. */
  function objectIdOf(value: unknown, what: string): string {
    const id = value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
    if (id === undefined || id === null || String(id) === '') throw invalid(`${what}.id is required.`);
    return String(id);
  }

  function associationInputsOf(body: unknown, max: number): Record<string, unknown>[] {
    const inputs = record(body, 'The request body').inputs;
    if (!Array.isArray(inputs))
      throw invalid('Invalid input JSON: the request body must have an array of inputs.');
    if (inputs.length > max)
      throw invalid(
        `Too many inputs: ${inputs.length}. The maximum number of inputs per batch request is ${max}.`,
      );
    return inputs.map((i) => record(i, 'Each input'));
  }

  /** Errors of a batch association call for ids that are not live records of `type`. */
  function associationNotFound(type: ObjectType, ids: string[], subCategory?: string) {
    return {
      status: 'error',
      category: 'OBJECT_NOT_FOUND',
      ...(subCategory ? { subCategory } : {}),
      message: `No ${SINGULAR[type]} found with ids ${ids.join(', ')}.`,
      context: { ids },
      errors: [],
      links: {},
    };
  }

  /**
   * POST /crm/v4/associations/{from}/{to}/batch/read: per input id (at most 1,000, HubSpot's limit
   * since February 2025) its associated records of `to`, 500 per page; an input's `after` (from a
   * result's `paging.next.after`) continues that id. Ids with nothing associated (or no record) are
   * left out of the results and named in an error (207).
   */
  function batchReadAssociations(from: ObjectType, to: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const inputs = associationInputsOf(req.body, MAX_ASSOCIATION_READ_INPUTS);
    const results: unknown[] = [];
    const none: string[] = [];
    for (const input of inputs) {
      const id = String(input.id ?? '');
      const obj = id ? state.get(from, id) : undefined;
      const all = obj ? state.associated(from, obj.id, to) : [];
      const after = Number(input.after ?? 0) || 0;
      const page = all.slice(after, after + ASSOCIATION_PAGE_SIZE);
      if (page.length === 0) {
        none.push(id);
        continue;
      }
      results.push({
        from: { id: obj?.id },
        to: page.map((a) => ({
          toObjectId: a.id,
          associationTypes: a.typeIds.map((typeId) => ({
            category: 'HUBSPOT_DEFINED',
            typeId,
            label: associationType(from, to, typeId)?.primary ? 'Primary' : null,
          })),
        })),
        ...(after + ASSOCIATION_PAGE_SIZE < all.length
          ? { paging: { next: { after: String(after + ASSOCIATION_PAGE_SIZE) } } }
          : {}),
      });
    }
    const errors =
      none.length > 0 ? [associationNotFound(from, none, 'crm.associations.NO_ASSOCIATIONS_FOUND')] : [];
    return json(errors.length > 0 ? 207 : 200, batchResponse(results, started, state.clock.now(), errors));
  }

  /**
   * POST .../batch/associate/default `{inputs: [{from: {id}, to: {id}}]}`: the default (unlabeled)
   * association for each pair, answered with both directions as the single PUT does; a pair whose
   * record is missing fails alone (207 with its ids).
   */
  function batchAssociateDefault(from: ObjectType, to: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const inputs = associationInputsOf(req.body, MAX_ASSOCIATION_WRITE_INPUTS);
    const pairs = inputs.map((i) => ({ a: objectIdOf(i.from, 'from'), b: objectIdOf(i.to, 'to') }));
    const results: unknown[] = [];
    const missing: string[] = [];
    const spec = (associationTypeId: number) => ({
      associationCategory: 'HUBSPOT_DEFINED',
      associationTypeId,
    });
    const back = defaultAssociationType(to, from);
    for (const { a, b } of pairs) {
      const x = state.get(from, a);
      const y = state.get(to, b);
      if (!x || !y) {
        if (!x) missing.push(a);
        if (!y) missing.push(b);
        continue;
      }
      const def = state.associate(from, x.id, to, y.id);
      results.push({ from: { id: x.id }, to: { id: y.id }, associationSpec: spec(def.typeId) });
      if (back) results.push({ from: { id: y.id }, to: { id: x.id }, associationSpec: spec(back.typeId) });
    }
    const errors = missing.length > 0 ? [associationNotFound(from, [...new Set(missing)])] : [];
    return json(errors.length > 0 ? 207 : 200, batchResponse(results, started, state.clock.now(), errors));
  }

  /** POST .../batch/create `{inputs: [{from, to, types: [{associationCategory, associationTypeId}]}]}` (201). */
  function batchAssociateLabelled(from: ObjectType, to: ObjectType, { req }: Ctx): SimResponse {
    const started = state.clock.now();
    const inputs = associationInputsOf(req.body, MAX_ASSOCIATION_WRITE_INPUTS);
    const results: unknown[] = [];
    const missing: string[] = [];
    const typeIdOf = (t: ObjectType) => Object.entries(OBJECT_TYPE_IDS).find(([, x]) => x === t)?.[0];
    for (const input of inputs) {
      const a = objectIdOf(input.from, 'from');
      const b = objectIdOf(input.to, 'to');
      const types = Array.isArray(input.types) ? (input.types as { associationTypeId?: unknown }[]) : [];
      if (types.length === 0) throw invalid('types must name at least one association type.');
      const x = state.get(from, a);
      const y = state.get(to, b);
      if (!x || !y) {
        missing.push(...(!x ? [a] : []), ...(!y ? [b] : []));
        continue;
      }
      for (const t of types) state.associate(from, x.id, to, y.id, Number(t.associationTypeId));
      results.push({
        fromObjectTypeId: typeIdOf(from),
        fromObjectId: x.id,
        toObjectTypeId: typeIdOf(to),
        toObjectId: y.id,
        labels: [],
      });
    }
    const errors = missing.length > 0 ? [associationNotFound(from, [...new Set(missing)])] : [];
    return json(errors.length > 0 ? 207 : 201, batchResponse(results, started, state.clock.now(), errors));
  }

  /**
   * POST .../batch/archive `{inputs: [{from: {id}, to: [{id}]}]}`: every association (all labels)
   * between each pair is removed; 204, also for pairs that were not associated.
   */
  function batchArchiveAssociations(from: ObjectType, to: ObjectType, { req }: Ctx): SimResponse {
    const inputs = associationInputsOf(req.body, MAX_ASSOCIATION_WRITE_INPUTS);
    const pairs = inputs.flatMap((i) => {
      const a = objectIdOf(i.from, 'from');
      if (!Array.isArray(i.to)) throw invalid('to must be an array of object ids.');
      return (i.to as unknown[]).map((t) => ({ a, b: objectIdOf(t, 'to') }));
    });
    for (const { a, b } of pairs) state.unassociate(from, a, to, b);
    return { status: 204 };
  }

  const server = await startHttpServer({
    handler: handle,
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => ({ status: 429, body: rateLimitBody('TEN_SECONDLY_ROLLING', state.portalId) }),
  });
  return { ...server, oauth, faults, requestLog, limiter };
}
