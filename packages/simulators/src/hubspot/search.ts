/**
 * CRM search (`POST /crm/v3/objects/{type}/search`) over what the lagging index holds: filter
 * groups (OR of ANDs), one sort, free-text `query`, offset paging with `after`, at most 200 per
 * page and 10,000 results per query (an `after` at or past it is a 400, as in HubSpot).
 */
import { apiError, type HubSpotState, type IndexedVersion } from './model.ts';
import { type ObjectType, type PropertyDef, parseTimestamp, QUERY_PROPERTIES } from './properties.ts';

export const SEARCH_MAX_LIMIT = 200;
export const SEARCH_RESULT_CAP = 10_000;
export const MAX_FILTER_GROUPS = 5;
export const MAX_FILTERS_PER_GROUP = 6;
export const MAX_FILTERS = 18;

const OPERATORS = [
  'EQ',
  'NEQ',
  'LT',
  'LTE',
  'GT',
  'GTE',
  'BETWEEN',
  'IN',
  'NOT_IN',
  'HAS_PROPERTY',
  'NOT_HAS_PROPERTY',
  'CONTAINS_TOKEN',
  'NOT_CONTAINS_TOKEN',
] as const;
type Operator = (typeof OPERATORS)[number];

type Filter = {
  propertyName: string;
  operator: Operator;
  value?: unknown;
  highValue?: unknown;
  values?: unknown[];
};

type Sort = string | { propertyName?: string; direction?: string };

export type SearchRequest = {
  filterGroups?: { filters?: Filter[] }[];
  sorts?: Sort[];
  query?: string;
  properties?: string[];
  limit?: number;
  after?: string | number;
};

export type SearchHit = { id: string; version: IndexedVersion };

const invalid = (message: string) => apiError(400, 'VALIDATION_ERROR', message);

/** Comparable form of a value: numbers for number and date properties, lower-case text otherwise. */
function comparable(def: PropertyDef, raw: unknown): number | string | undefined {
  if (raw === undefined || raw === null) return undefined;
  const text = String(raw);
  if (def.type === 'number') {
    const n = Number(text);
    return Number.isFinite(n) ? n : undefined;
  }
  if (def.type === 'datetime' || def.type === 'date') return parseTimestamp(text);
  return text.toLowerCase();
}

type Comparable = number | string;

/** Both sides come from the same property, so they are both numbers or both strings. */
const less = (a: Comparable, b: Comparable) => (a as number) < (b as number);

function tokenMatches(value: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern
      .toLowerCase()
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return value
    .toLowerCase()
    .split(/[^\p{L}\p{N}@._-]+/u)
    .concat(value.toLowerCase())
    .some((t) => re.test(t));
}

function matches(state: HubSpotState, type: ObjectType, values: Map<string, string>, f: Filter): boolean {
  const def = state.property(type, f.propertyName);
  if (!def)
    throw invalid(`There was a problem with the request: property "${f.propertyName}" does not exist.`);
  const stored = values.get(f.propertyName);
  const have = stored !== undefined && stored !== '';
  const left = have ? comparable(def, stored) : undefined;
  const right = comparable(def, f.value);
  switch (f.operator) {
    case 'HAS_PROPERTY':
      return have;
    case 'NOT_HAS_PROPERTY':
      return !have;
    case 'EQ':
      return left !== undefined && left === right;
    case 'NEQ':
      return left !== right;
    case 'LT':
      return left !== undefined && right !== undefined && less(left, right);
    case 'LTE':
      return left !== undefined && right !== undefined && !less(right, left);
    case 'GT':
      return left !== undefined && right !== undefined && less(right, left);
    case 'GTE':
      return left !== undefined && right !== undefined && !less(left, right);
    case 'BETWEEN': {
      const high = comparable(def, f.highValue);
      return (
        left !== undefined &&
        right !== undefined &&
        high !== undefined &&
        !less(left, right) &&
        !less(high, left)
      );
    }
    case 'IN':
    case 'NOT_IN': {
      const set = (f.values ?? []).map((v) => comparable(def, v));
      const inSet = left !== undefined && set.includes(left);
      return f.operator === 'IN' ? inSet : !inSet;
    }
    case 'CONTAINS_TOKEN':
    case 'NOT_CONTAINS_TOKEN': {
      const hit = have && tokenMatches(stored, String(f.value ?? ''));
      return f.operator === 'CONTAINS_TOKEN' ? hit : !hit;
    }
  }
}

function checkShape(body: SearchRequest): void {
  const groups = body.filterGroups ?? [];
  if (!Array.isArray(groups)) throw invalid('filterGroups must be an array.');
  if (groups.length > MAX_FILTER_GROUPS) {
    throw invalid(`Too many filter groups: ${groups.length}. The maximum is ${MAX_FILTER_GROUPS}.`);
  }
  let total = 0;
  for (const g of groups) {
    const filters = g.filters ?? [];
    if (filters.length > MAX_FILTERS_PER_GROUP) {
      throw invalid(
        `Too many filters in a group: ${filters.length}. The maximum is ${MAX_FILTERS_PER_GROUP}.`,
      );
    }
    total += filters.length;
    for (const f of filters) {
      if (!OPERATORS.includes(f.operator)) throw invalid(`Unknown filter operator: ${String(f.operator)}`);
    }
  }
  if (total > MAX_FILTERS) throw invalid(`Too many filters: ${total}. The maximum is ${MAX_FILTERS}.`);
}

/** Run a search; `after` is an offset into the sorted matches. */
export function runSearch(
  state: HubSpotState,
  type: ObjectType,
  body: SearchRequest,
): { total: number; hits: SearchHit[]; next?: string } {
  checkShape(body);
  const limit = body.limit ?? 10;
  if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_MAX_LIMIT) {
    throw invalid(`limit must be between 1 and ${SEARCH_MAX_LIMIT}, got ${String(body.limit)}.`);
  }
  const after = body.after === undefined || body.after === '' ? 0 : Number(body.after);
  if (!Number.isInteger(after) || after < 0) throw invalid(`Invalid after value: ${String(body.after)}`);
  if (after >= SEARCH_RESULT_CAP) {
    throw invalid(
      `The search endpoints are limited to ${SEARCH_RESULT_CAP} total results for any given query.`,
    );
  }

  let hits: SearchHit[] = [];
  for (const obj of state.list(type)) {
    const version = state.indexed(obj);
    if (version && !version.archived) hits.push({ id: obj.id, version });
  }
  const groups = (body.filterGroups ?? []).filter((g) => (g.filters ?? []).length > 0);
  if (groups.length > 0) {
    hits = hits.filter((h) =>
      groups.some((g) => (g.filters ?? []).every((f) => matches(state, type, h.version.properties, f))),
    );
  }
  const query = body.query?.trim().toLowerCase();
  if (query) {
    hits = hits.filter((h) =>
      QUERY_PROPERTIES[type].some((p) => (h.version.properties.get(p) ?? '').toLowerCase().includes(query)),
    );
  }
  sortHits(state, type, hits, body.sorts?.[0]);

  // A query gives at most SEARCH_RESULT_CAP results, however the pages fall.
  const nextOffset = Math.min(after + limit, SEARCH_RESULT_CAP);
  const page = hits.slice(after, nextOffset);
  return {
    total: hits.length,
    hits: page,
    ...(nextOffset < hits.length ? { next: String(nextOffset) } : {}),
  };
}

function sortHits(state: HubSpotState, type: ObjectType, hits: SearchHit[], sort: Sort | undefined): void {
  let name = 'hs_object_id';
  let descending = false;
  if (typeof sort === 'string') {
    descending = sort.startsWith('-');
    name = descending ? sort.slice(1) : sort;
  } else if (sort?.propertyName) {
    name = sort.propertyName;
    descending = sort.direction === 'DESCENDING';
  }
  const def = state.property(type, name);
  if (!def) throw invalid(`There was a problem with the request: property "${name}" does not exist.`);
  const key = (h: SearchHit) => comparable(def, h.version.properties.get(name));
  hits.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    // Objects without a value come last either way; ties keep id order.
    if (x === undefined || y === undefined) {
      if (x === y) return Number(a.id) - Number(b.id);
      return x === undefined ? 1 : -1;
    }
    const c = less(x, y) ? -1 : less(y, x) ? 1 : Number(a.id) - Number(b.id);
    return descending ? -c : c;
  });
}
