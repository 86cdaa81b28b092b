/**
 * The HTTP surface: v2 reads under `/v2` (Bearer API key) and v1 reads and writes at the root
 * (HTTP Basic with the key as password and an empty user name, or Bearer since 2025-11-05).
 *
 * Error bodies: v2 `{"errors": [{"code", "message", "param"?}]}` as its OpenAPI document
 * defines them (`authentication`, `not-found`, `validation`, `bad-request`, `rate-limit`,
 * `method-not-allowed`); v1 documents status codes but no body, and the simulator answers
 * `{"errors": ["message"]}`.
 */
import {
  bearerToken,
  type Clock,
  FaultInjector,
  json,
  RequestLog,
  type SimRequest,
  type SimResponse,
  startHttpServer,
} from '../http.ts';
import {
  AffinityApiError,
  type AffinityState,
  ENTITY_OPPORTUNITY,
  ENTITY_ORGANIZATION,
  ENTITY_PERSON,
  type EntityType,
  iso,
  type ListEntry,
  type Opportunity,
  type Organization,
  type Person,
  WEBHOOK_EVENTS,
} from './model.ts';
import { RateLimiter, type RateLimitOptions } from './rate-limit.ts';
import {
  checkFieldIds,
  entityFieldMetadata,
  fieldSelection,
  idsFilter,
  listFieldMetadata,
  pageQuery,
  paginate,
  renderCompany,
  renderList,
  renderListEntry,
  renderOpportunity,
  renderPerson,
} from './v2.ts';
import type { WebhookDispatcher } from './webhooks.ts';

export const API_VERSION = '2024-01-01';
export const V1_MAX_PAGE_SIZE = 500;

export type AffinityServerOptions = {
  clock?: Clock;
  /** `false` turns the limits off (headers are still sent). */
  rateLimit?: false | RateLimitOptions;
};

type Json = Record<string, unknown>;
type Api = 'v1' | 'v2';
type Ctx = { req: SimRequest; api: Api; token: string; userId: number; params: string[] };
type Route = {
  method: string;
  pattern: RegExp;
  api: Api;
  handle: (ctx: Ctx) => Promise<SimResponse> | SimResponse;
};

function errorBody(api: Api, code: string, message: string, param?: string): Json {
  if (api === 'v1') return { errors: [message] };
  return { errors: [{ code, message, ...(param ? { param } : {}) }] };
}

export function v2Error(status: number, code: string, message: string, param?: string): SimResponse {
  return json(status, errorBody('v2', code, message, param));
}

function apiError(api: Api, err: AffinityApiError): SimResponse {
  return json(err.status, errorBody(api, err.code, err.message, err.param));
}

function intParam(raw: string | undefined, name: string): number {
  const n = Number(raw);
  if (!raw || !/^\d+$/.test(raw) || n < 1)
    throw new AffinityApiError(400, `${name} must be a positive integer.`, 'validation', name);
  return n;
}

function body(req: SimRequest): Json {
  if (req.bodyInvalid) throw new AffinityApiError(400, 'The request body is not valid JSON.', 'bad-request');
  const b = req.body;
  if (b === undefined) return {};
  if (typeof b !== 'object' || b === null || Array.isArray(b))
    throw new AffinityApiError(422, 'The request body must be a JSON object.');
  return b as Json;
}

/** A form-encoded body turns `subscriptions[]=a` keys into arrays, as Rails would. */
function formArray(b: Json, key: string): unknown {
  if (b[key] !== undefined) return b[key];
  const bracket = b[`${key}[]`];
  if (bracket === undefined) return undefined;
  return Array.isArray(bracket) ? bracket : [bracket];
}

function bool(v: string | null): boolean {
  return v === 'true' || v === '1';
}

function decodeBasic(h: string | undefined): string | undefined {
  const m = /^Basic\s+(\S+)\s*$/i.exec(h ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i >= 0 ? decoded.slice(i + 1) : undefined;
}

// ---------------------------------------------------------------------------------------------
// v1 page tokens: the offset and the query they were made for.

function v1Page<T>(
  req: SimRequest,
  rows: T[],
  defaultAll: boolean,
): { page: T[]; next: string | null; paged: boolean } {
  const q = req.query;
  const signature = [...q]
    .filter(([k]) => k !== 'page_token')
    .map(([k, v]) => `${k}=${v}`)
    .sort()
    .join('&');
  const rawSize = q.get('page_size');
  const token = q.get('page_token');
  if (rawSize === null && token === null && defaultAll) return { page: rows, next: null, paged: false };
  let size = V1_MAX_PAGE_SIZE;
  if (rawSize !== null) {
    const n = Number(rawSize);
    if (!Number.isInteger(n) || n < 1)
      throw new AffinityApiError(422, 'page_size must be a positive integer.');
    size = Math.min(n, V1_MAX_PAGE_SIZE);
  }
  let offset = 0;
  if (token !== null) {
    try {
      const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
        offset: number;
        sig: string;
      };
      if (t.sig !== signature || !Number.isInteger(t.offset)) throw new Error('mismatch');
      offset = t.offset;
    } catch {
      throw new AffinityApiError(422, 'Invalid page_token variable');
    }
  }
  const page = rows.slice(offset, offset + size);
  const nextOffset = offset + size;
  const next =
    nextOffset < rows.length
      ? Buffer.from(JSON.stringify({ offset: nextOffset, sig: signature }), 'utf8').toString('base64url')
      : null;
  return { page, next, paged: true };
}

function termMatches(term: string | null, ...texts: (string | null | undefined)[]): boolean {
  if (!term) return true;
  const t = term.toLowerCase();
  return texts.some((x) => x?.toLowerCase().includes(t));
}

// ---------------------------------------------------------------------------------------------

export async function startAffinityServer(
  state: AffinityState,
  options: AffinityServerOptions & { webhooks: () => WebhookDispatcher | undefined },
) {
  const clock = options.clock ?? state.clock;
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(
    clock,
    options.rateLimit === false ? {} : (options.rateLimit ?? {}),
    options.rateLimit !== false,
  );

  const baseUrl = (req: SimRequest) => `http://${req.headers.host ?? '127.0.0.1'}`;

  const v1Person = (p: Person, req: SimRequest, full: boolean): Json => {
    const out = state.v1Person(p);
    if (!full) delete out.organization_ids;
    if (bool(req.query.get('with_opportunities')))
      out.opportunity_ids = [...state.opportunities.values()]
        .filter((o) => o.personIds.includes(p.id))
        .map((o) => o.id);
    if (full) out.list_entries = state.entriesOf(ENTITY_PERSON, p.id).map((e) => state.v1ListEntryBrief(e));
    return out;
  };
  const v1Org = (o: Organization, req: SimRequest, full: boolean): Json => {
    const out = state.v1Organization(o);
    if (bool(req.query.get('with_opportunities')))
      out.opportunity_ids = [...state.opportunities.values()]
        .filter((x) => x.organizationIds.includes(o.id))
        .map((x) => x.id);
    if (full)
      out.list_entries = state.entriesOf(ENTITY_ORGANIZATION, o.id).map((e) => state.v1ListEntryBrief(e));
    return out;
  };
  const v1List = (l: { id: number }, withFields: boolean): Json => {
    const list = state.list(l.id);
    const out: Json = {
      id: list.id,
      type: list.type,
      name: list.name,
      public: list.isPublic,
      owner_id: list.ownerId,
      creator_id: list.creatorId,
      list_size: [...state.listEntries.values()].filter((e) => e.listId === list.id).length,
    };
    if (withFields)
      out.fields = [...state.fields.values()]
        .filter((f) => f.listId === list.id)
        .map((f) => state.v1Field(f));
    return out;
  };
  const whoami = (token: string, v2: boolean): Json => {
    const info = state.tokens.get(token);
    const user = state.users.find((u) => String(u.id) === info?.userId) ?? state.owner;
    const createdAt = iso(state.keyCreatedAt.get(token) ?? clock.now());
    return v2
      ? {
          tenant: { ...state.tenant, subdomain: `${state.tenant.subdomain}.affinity.co` },
          user: { id: user.id, firstName: user.firstName, lastName: user.lastName, emailAddress: user.email },
          grant: { type: 'api-key', scopes: ['api'], createdAt },
        }
      : {
          tenant: state.tenant,
          user: { id: user.id, firstName: user.firstName, lastName: user.lastName, email: user.email },
          grant: { type: 'api_key', scope: 'external_api', createdAt },
        };
  };

  const v2List = <T extends { id: number }>(
    req: SimRequest,
    rows: T[],
    render: (row: T, params: [string, string][]) => Json,
    pageParams: string[],
  ): SimResponse => {
    const q = pageQuery(req.query, pageParams);
    const ids = idsFilter(q.params);
    const filtered = ids ? rows.filter((r) => ids.includes(r.id)) : rows;
    const { page, pagination } = paginate(filtered, q, `${baseUrl(req)}${req.path}`);
    return json(200, { data: page.map((r) => render(r, q.params)), pagination });
  };
  const queryParams = (req: SimRequest): [string, string][] => [...req.query];

  const routes: Route[] = [
    // ----------------------------------------------------------------------------------------- v2
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/auth\/whoami$/,
      handle: (c) => json(200, whoami(c.token, true)),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/persons\/fields$/,
      handle: (c) => metadataPage(c.req, entityFieldMetadata(state, ENTITY_PERSON)),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/persons$/,
      handle: (c) => {
        const known = entityFieldMetadata(state, ENTITY_PERSON);
        return v2List(
          c.req,
          [...state.persons.values()],
          (p, params) => {
            const sel = fieldSelection(params, ['enriched', 'global', 'relationship-intelligence']);
            checkFieldIds(known, sel);
            return renderPerson(state, p, sel);
          },
          ['ids', 'fieldIds', 'fieldTypes'],
        );
      },
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/persons\/([^/]+)$/,
      handle: (c) => {
        const id = intParam(c.params[0], 'personId');
        const sel = fieldSelection(queryParams(c.req), ['enriched', 'global', 'relationship-intelligence']);
        checkFieldIds(entityFieldMetadata(state, ENTITY_PERSON), sel);
        return json(200, renderPerson(state, state.person(id), sel));
      },
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/companies\/fields$/,
      handle: (c) => metadataPage(c.req, entityFieldMetadata(state, ENTITY_ORGANIZATION)),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/companies$/,
      handle: (c) => {
        const known = entityFieldMetadata(state, ENTITY_ORGANIZATION);
        return v2List(
          c.req,
          [...state.organizations.values()],
          (o, params) => {
            const sel = fieldSelection(params, ['enriched', 'global', 'relationship-intelligence']);
            checkFieldIds(known, sel);
            return renderCompany(state, o, sel);
          },
          ['ids', 'fieldIds', 'fieldTypes'],
        );
      },
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/companies\/([^/]+)$/,
      handle: (c) => {
        const id = intParam(c.params[0], 'companyId');
        const sel = fieldSelection(queryParams(c.req), ['enriched', 'global', 'relationship-intelligence']);
        checkFieldIds(entityFieldMetadata(state, ENTITY_ORGANIZATION), sel);
        return json(200, renderCompany(state, state.organization(id), sel));
      },
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/opportunities$/,
      handle: (c) => v2List(c.req, [...state.opportunities.values()], (o) => renderOpportunity(o), ['ids']),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/opportunities\/([^/]+)$/,
      handle: (c) => json(200, renderOpportunity(state.opportunity(intParam(c.params[0], 'opportunityId')))),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/lists$/,
      handle: (c) => v2List(c.req, [...state.lists.values()], (l) => renderList(l), []),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/lists\/([^/]+)$/,
      handle: (c) => json(200, renderList(state.list(intParam(c.params[0], 'listId')))),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/lists\/([^/]+)\/fields$/,
      handle: (c) =>
        metadataPage(c.req, listFieldMetadata(state, state.list(intParam(c.params[0], 'listId')))),
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/lists\/([^/]+)\/list-entries$/,
      handle: (c) => {
        const list = state.list(intParam(c.params[0], 'listId'));
        const known = listFieldMetadata(state, list);
        const rows = [...state.listEntries.values()].filter((e) => e.listId === list.id);
        return v2List(
          c.req,
          rows,
          (e, params) => {
            const sel = fieldSelection(params, ['enriched', 'global', 'list', 'relationship-intelligence']);
            checkFieldIds(known, sel);
            return renderListEntry(state, e, sel);
          },
          ['fieldIds', 'fieldTypes'],
        );
      },
    },
    {
      method: 'GET',
      api: 'v2',
      pattern: /^\/v2\/lists\/([^/]+)\/list-entries\/([^/]+)$/,
      handle: (c) => {
        const list = state.list(intParam(c.params[0], 'listId'));
        const entry = state.listEntry(list.id, intParam(c.params[1], 'listEntryId'));
        const sel = fieldSelection(queryParams(c.req), [
          'enriched',
          'global',
          'list',
          'relationship-intelligence',
        ]);
        checkFieldIds(listFieldMetadata(state, list), sel);
        return json(200, renderListEntry(state, entry, sel));
      },
    },

    // ----------------------------------------------------------------------------------------- v1
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/auth\/whoami$/,
      handle: (c) => json(200, whoami(c.token, false)),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/rate-limit$/,
      handle: (c) => json(200, limiter.status(c.token)),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/lists$/,
      handle: () =>
        json(
          200,
          [...state.lists.values()].map((l) => v1List(l, false)),
        ),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/lists\/(\d+)$/,
      handle: (c) => json(200, v1List(state.list(Number(c.params[0])), true)),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/lists\/(\d+)\/list-entries$/,
      handle: (c) => {
        const list = state.list(Number(c.params[0]));
        const rows = [...state.listEntries.values()]
          .filter((e) => e.listId === list.id)
          .sort((a, b) => a.id - b.id);
        const { page, next, paged } = v1Page(c.req, rows, true);
        const rendered = page.map((e) => state.v1ListEntry(e));
        return json(200, paged ? { list_entries: rendered, next_page_token: next } : rendered);
      },
    },
    {
      method: 'POST',
      api: 'v1',
      pattern: /^\/lists\/(\d+)\/list-entries$/,
      handle: (c) => json(200, state.v1ListEntry(state.createListEntry(Number(c.params[0]), body(c.req)))),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/lists\/(\d+)\/list-entries\/(\d+)$/,
      handle: (c) => json(200, state.v1ListEntry(state.listEntry(Number(c.params[0]), Number(c.params[1])))),
    },
    {
      method: 'DELETE',
      api: 'v1',
      pattern: /^\/lists\/(\d+)\/list-entries\/(\d+)$/,
      handle: (c) => {
        state.deleteListEntry(Number(c.params[0]), Number(c.params[1]));
        return json(200, { success: true });
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/persons\/fields$/,
      handle: () => json(200, globalFields(ENTITY_PERSON)),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/persons$/,
      handle: (c) => {
        const term = c.req.query.get('term');
        const rows = [...state.persons.values()]
          .filter((p) => termMatches(term, p.firstName, p.lastName, ...p.emails))
          .sort((a, b) => a.id - b.id);
        const { page, next } = v1Page(c.req, rows, false);
        return json(200, { persons: page.map((p) => v1Person(p, c.req, false)), next_page_token: next });
      },
    },
    {
      method: 'POST',
      api: 'v1',
      pattern: /^\/persons$/,
      handle: (c) => json(200, state.v1Person(state.createPerson(body(c.req)))),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/persons\/(\d+)$/,
      handle: (c) => json(200, v1Person(state.person(Number(c.params[0])), c.req, true)),
    },
    {
      method: 'PUT',
      api: 'v1',
      pattern: /^\/persons\/(\d+)$/,
      handle: (c) => json(200, state.v1Person(state.updatePerson(Number(c.params[0]), body(c.req)))),
    },
    {
      method: 'DELETE',
      api: 'v1',
      pattern: /^\/persons\/(\d+)$/,
      handle: (c) => {
        state.deletePerson(Number(c.params[0]));
        return json(200, { success: true });
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/organizations\/fields$/,
      handle: () => json(200, globalFields(ENTITY_ORGANIZATION)),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/organizations$/,
      handle: (c) => {
        const term = c.req.query.get('term');
        const rows = [...state.organizations.values()]
          .filter((o) => termMatches(term, o.name, ...o.domains))
          .sort((a, b) => a.id - b.id);
        const { page, next } = v1Page(c.req, rows, false);
        return json(200, { organizations: page.map((o) => v1Org(o, c.req, false)), next_page_token: next });
      },
    },
    {
      method: 'POST',
      api: 'v1',
      pattern: /^\/organizations$/,
      handle: (c) => json(200, state.v1Organization(state.createOrganization(body(c.req)))),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/organizations\/(\d+)$/,
      handle: (c) => json(200, v1Org(state.organization(Number(c.params[0])), c.req, true)),
    },
    {
      method: 'PUT',
      api: 'v1',
      pattern: /^\/organizations\/(\d+)$/,
      handle: (c) =>
        json(200, state.v1Organization(state.updateOrganization(Number(c.params[0]), body(c.req)))),
    },
    {
      method: 'DELETE',
      api: 'v1',
      pattern: /^\/organizations\/(\d+)$/,
      handle: (c) => {
        state.deleteOrganization(Number(c.params[0]));
        return json(200, { success: true });
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/opportunities$/,
      handle: (c) => {
        const term = c.req.query.get('term');
        const rows = [...state.opportunities.values()]
          .filter((o) => termMatches(term, o.name))
          .sort((a, b) => a.id - b.id);
        const { page, next } = v1Page(c.req, rows, false);
        return json(200, { opportunities: page.map((o) => state.v1Opportunity(o)), next_page_token: next });
      },
    },
    {
      method: 'POST',
      api: 'v1',
      pattern: /^\/opportunities$/,
      handle: (c) => json(200, state.v1Opportunity(state.createOpportunity(body(c.req), 'api', c.userId))),
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/opportunities\/(\d+)$/,
      handle: (c) => json(200, state.v1Opportunity(state.opportunity(Number(c.params[0])))),
    },
    {
      method: 'PUT',
      api: 'v1',
      pattern: /^\/opportunities\/(\d+)$/,
      handle: (c) =>
        json(200, state.v1Opportunity(state.updateOpportunity(Number(c.params[0]), body(c.req)))),
    },
    {
      method: 'DELETE',
      api: 'v1',
      pattern: /^\/opportunities\/(\d+)$/,
      handle: (c) => {
        state.deleteOpportunity(Number(c.params[0]));
        return json(200, { success: true });
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/fields$/,
      handle: (c) => {
        const q = c.req.query;
        const num = (k: string) => (q.get(k) === null ? undefined : Number(q.get(k)));
        const listId = num('list_id');
        const valueType = num('value_type');
        const entityType = num('entity_type');
        const rows = [...state.fields.values()].filter(
          (f) =>
            (listId === undefined || f.listId === listId) &&
            (valueType === undefined || f.valueType === valueType) &&
            (entityType === undefined || f.entityType === entityType),
        );
        return json(
          200,
          rows.map((f) =>
            state.v1Field(f, bool(q.get('with_modified_names')), !bool(q.get('exclude_dropdown_options'))),
          ),
        );
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/field-values$/,
      handle: (c) => {
        const q = c.req.query;
        const given = ['person_id', 'organization_id', 'opportunity_id', 'list_entry_id'].filter(
          (k) => q.get(k) !== null,
        );
        if (given.length !== 1)
          throw new AffinityApiError(
            422,
            'Exactly one of person_id, organization_id, opportunity_id, or list_entry_id must be specified.',
          );
        const key = given[0] as string;
        const id = Number(q.get(key));
        let rows = [...state.fieldValues.values()];
        if (key === 'list_entry_id') {
          if (!state.listEntries.has(id)) throw new AffinityApiError(404, 'List entry not found.');
          rows = rows.filter((v) => v.listEntryId === id);
        } else {
          const type: EntityType =
            key === 'person_id'
              ? ENTITY_PERSON
              : key === 'organization_id'
                ? ENTITY_ORGANIZATION
                : ENTITY_OPPORTUNITY;
          if (!state.entityExists(type, id)) throw new AffinityApiError(404, 'Entity not found.');
          rows = rows.filter((v) => v.entityType === type && v.entityId === id);
        }
        return json(
          200,
          rows.sort((a, b) => a.id - b.id).map((v) => state.v1FieldValue(v)),
        );
      },
    },
    {
      method: 'POST',
      api: 'v1',
      pattern: /^\/field-values$/,
      handle: (c) => json(200, state.v1FieldValue(state.createFieldValue(body(c.req)))),
    },
    {
      method: 'PUT',
      api: 'v1',
      pattern: /^\/field-values\/(\d+)$/,
      handle: (c) => json(200, state.v1FieldValue(state.updateFieldValue(Number(c.params[0]), body(c.req)))),
    },
    {
      method: 'DELETE',
      api: 'v1',
      pattern: /^\/field-values\/(\d+)$/,
      handle: (c) => {
        state.deleteFieldValue(Number(c.params[0]));
        return json(200, { success: true });
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/webhook$/,
      handle: () =>
        json(
          200,
          [...state.webhooks.values()].map((w) => state.v1Webhook(w)),
        ),
    },
    {
      method: 'POST',
      api: 'v1',
      pattern: /^\/webhook\/subscribe$/,
      handle: async (c) => {
        const b = body(c.req);
        const url = checkUrl(b.webhook_url);
        const subscriptions = checkSubscriptions(formArray(b, 'subscriptions'));
        await probe(url);
        return json(200, state.v1Webhook(state.createWebhook(url, subscriptions, c.userId)));
      },
    },
    {
      method: 'GET',
      api: 'v1',
      pattern: /^\/webhook\/(\d+)$/,
      handle: (c) => json(200, state.v1Webhook(webhook(Number(c.params[0])))),
    },
    {
      method: 'PUT',
      api: 'v1',
      pattern: /^\/webhook\/(\d+)$/,
      handle: async (c) => {
        const w = webhook(Number(c.params[0]));
        if (w.createdBy !== c.userId)
          throw new AffinityApiError(403, 'A webhook subscription can only be updated by its creator.');
        const b = body(c.req);
        const url = b.webhook_url === undefined ? w.webhookUrl : checkUrl(b.webhook_url);
        const subs = formArray(b, 'subscriptions');
        const subscriptions = subs === undefined ? w.subscriptions : checkSubscriptions(subs);
        let disabled = w.disabled;
        if (b.disabled !== undefined) {
          if (b.disabled !== true && b.disabled !== false && b.disabled !== 'true' && b.disabled !== 'false')
            throw new AffinityApiError(422, 'disabled must be a boolean.');
          disabled = b.disabled === true || b.disabled === 'true';
        }
        if (url !== w.webhookUrl) await probe(url);
        Object.assign(w, { webhookUrl: url, subscriptions, disabled });
        return json(200, state.v1Webhook(w));
      },
    },
    {
      method: 'DELETE',
      api: 'v1',
      pattern: /^\/webhook\/(\d+)$/,
      handle: (c) => {
        const w = webhook(Number(c.params[0]));
        state.webhooks.delete(w.id);
        return json(200, { success: true });
      },
    },
  ];

  function metadataPage(req: SimRequest, rows: Json[]): SimResponse {
    // Field metadata ids are strings; page by position.
    const indexed = rows.map((r, i) => ({ ...r, id: i + 1, realId: r.id }));
    const q = pageQuery(req.query, []);
    const { page, pagination } = paginate(indexed, q, `${baseUrl(req)}${req.path}`);
    return json(200, {
      data: page.map(({ realId, id: _i, ...rest }) => ({ id: realId, ...rest })),
      pagination,
    });
  }

  function globalFields(type: EntityType): Json[] {
    return [...state.fields.values()]
      .filter((f) => f.listId === null && f.entityType === type)
      .map((f) => {
        const { list_id: _l, track_changes: _t, enrichment_source: _e, ...rest } = state.v1Field(f);
        return rest;
      });
  }

  function webhook(id: number) {
    const w = state.webhooks.get(id);
    if (!w) throw new AffinityApiError(404, 'Webhook subscription not found.');
    return w;
  }

  function checkUrl(v: unknown): string {
    if (typeof v !== 'string') throw new AffinityApiError(422, 'webhook_url is required.');
    try {
      const u = new URL(v);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
    } catch {
      throw new AffinityApiError(422, 'webhook_url must be a valid URL.');
    }
    return v;
  }

  function checkSubscriptions(v: unknown): string[] {
    if (v === undefined || v === null || v === '') return [];
    if (!Array.isArray(v)) throw new AffinityApiError(422, 'subscriptions must be an array.');
    for (const s of v) {
      if (typeof s !== 'string' || !(WEBHOOK_EVENTS as readonly string[]).includes(s))
        throw new AffinityApiError(422, `${String(s)} is not a supported webhook event.`);
    }
    return [...new Set(v as string[])];
  }

  async function probe(url: string): Promise<void> {
    const dispatcher = options.webhooks();
    if (dispatcher && !(await dispatcher.probe(url)))
      throw new AffinityApiError(422, 'The webhook URL did not return a valid response.');
  }

  function authenticate(req: SimRequest, api: Api): { token: string; userId: number } | SimResponse {
    const header = req.headers.authorization;
    const token = api === 'v2' ? bearerToken(req.headers) : (decodeBasic(header) ?? bearerToken(req.headers));
    const check = state.tokens.check(token);
    if (!check.ok) {
      const message =
        api === 'v2' && header && !/^Bearer\s/i.test(header)
          ? 'Affinity API v2 uses bearer authentication; provide your API key as the bearer token.'
          : 'Your API key is invalid.';
      return json(401, errorBody(api, 'authentication', message));
    }
    return { token: check.info.token, userId: Number(check.info.userId) };
  }

  async function handler(req: SimRequest): Promise<SimResponse> {
    const api: Api = req.path === '/v2' || req.path.startsWith('/v2/') ? 'v2' : 'v1';
    const auth = authenticate(req, api);
    if ('status' in auth) return auth;
    const version = req.headers['x-affinity-api-version'];
    if (api === 'v2' && version !== undefined && version !== API_VERSION) {
      return v2Error(
        400,
        'validation',
        `Unsupported API version: ${String(version)}.`,
        'X-Affinity-Api-Version',
      );
    }
    const exempt =
      req.path === '/rate-limit' || req.path === '/auth/whoami' || req.path === '/v2/auth/whoami';
    const limit = limiter.take(auth.token, exempt);
    const extra: Record<string, string> = {
      ...limit.headers,
      ...(api === 'v2' ? { 'X-Affinity-Api-Version': API_VERSION } : {}),
    };
    if (limit.refused) {
      const message =
        limit.refused === 'user'
          ? `Per-minute rate limit of ${limiter.perMinute} requests exceeded for this API key.`
          : `Monthly rate limit of ${limiter.monthly} requests exceeded for this account.`;
      return json(429, errorBody(api, 'rate-limit', message), extra);
    }
    let response: SimResponse;
    try {
      response = await dispatch(req, api, auth);
    } catch (err) {
      if (!(err instanceof AffinityApiError)) throw err;
      response = apiError(api, err);
    }
    return { ...response, headers: { ...extra, ...(response.headers ?? {}) } };
  }

  async function dispatch(
    req: SimRequest,
    api: Api,
    auth: { token: string; userId: number },
  ): Promise<SimResponse> {
    let pathMatched = false;
    for (const r of routes) {
      if (r.api !== api) continue;
      const m = r.pattern.exec(req.path);
      if (!m) continue;
      pathMatched = true;
      if (r.method !== req.method) continue;
      return r.handle({ req, api, token: auth.token, userId: auth.userId, params: m.slice(1) });
    }
    if (pathMatched)
      return json(405, errorBody(api, 'method-not-allowed', `${req.method} is not allowed here.`));
    return json(404, errorBody(api, 'not-found', `No route for ${req.method} ${req.path}.`));
  }

  const server = await startHttpServer({
    handler,
    faults,
    log: requestLog,
    clock,
    rateLimitResponse: () => v2Error(429, 'rate-limit', 'Too many requests.'),
  });
  return { ...server, faults, requestLog, limiter };
}

export type { ListEntry, Opportunity };
