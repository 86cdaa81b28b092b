/**
 * v2 renderings (Affinity API v2 OpenAPI, version 2024-01-01): persons, companies,
 * opportunities, lists, list entries and the `fields` array, plus cursor pagination.
 *
 * - A field is `{id, name, type, enrichmentSource, value: {type, data}}`; ids are `field-<n>` for
 *   global and list-specific fields and a slug for enriched ones (`affinity-data-description`).
 * - Value types: `person`/`person-multi`, `company`/`company-multi`, `dropdown`/`dropdown-multi`,
 *   `ranked-dropdown`, `number`/`number-multi`, `datetime`, `location`/`location-multi`, `text`,
 *   `filterable-text-multi`. An empty multi value is `null`, not `[]` (as documented).
 * - Pages: `limit` 1..100 (default 100), `pagination: {nextUrl, prevUrl}`; the cursor is opaque
 *   (base64url) and carries the query it was made for, so `nextUrl` holds only `cursor`.
 */
import {
  AffinityApiError,
  type AffinityList,
  type AffinityState,
  ENTITY_OPPORTUNITY,
  ENTITY_ORGANIZATION,
  ENTITY_PERSON,
  type EnrichedField,
  type EntityType,
  type Field,
  type FieldValue,
  iso,
  type ListEntry,
  type LocationValue,
  type Opportunity,
  type Organization,
  type Person,
  VALUE_TYPES,
} from './model.ts';

export const V2_MAX_LIMIT = 100;

type Json = Record<string, unknown>;

export function listType(t: EntityType): 'person' | 'company' | 'opportunity' {
  return t === ENTITY_PERSON ? 'person' : t === ENTITY_ORGANIZATION ? 'company' : 'opportunity';
}

export function personData(state: AffinityState, id: number): Json | null {
  const p = state.persons.get(id);
  if (!p) return null;
  return {
    id: p.id,
    firstName: p.firstName,
    lastName: p.lastName,
    primaryEmailAddress: state.primaryEmail(p),
    type: p.type === 1 ? 'internal' : 'external',
  };
}

export function companyData(state: AffinityState, id: number): Json | null {
  const o = state.organizations.get(id);
  return o ? { id: o.id, name: o.name, domain: o.domain } : null;
}

function location(l: LocationValue): Json {
  return {
    streetAddress: l.street_address,
    city: l.city,
    state: l.state,
    country: l.country,
    continent: l.continent,
  };
}

/** The v2 `valueType` of a v1 field. */
export function v2ValueType(f: Field): string {
  const multi = f.allowsMultiple;
  switch (f.valueType) {
    case VALUE_TYPES.person:
      return multi ? 'person-multi' : 'person';
    case VALUE_TYPES.organization:
      return multi ? 'company-multi' : 'company';
    case VALUE_TYPES.dropdown:
      return multi ? 'dropdown-multi' : 'dropdown';
    case VALUE_TYPES.number:
      return multi ? 'number-multi' : 'number';
    case VALUE_TYPES.date:
      return 'datetime';
    case VALUE_TYPES.location:
      return multi ? 'location-multi' : 'location';
    case VALUE_TYPES.rankedDropdown:
      return 'ranked-dropdown';
    default:
      return 'text';
  }
}

function renderOne(state: AffinityState, f: Field, v: FieldValue): unknown {
  switch (f.valueType) {
    case VALUE_TYPES.person:
      return personData(state, v.value as number);
    case VALUE_TYPES.organization:
      return companyData(state, v.value as number);
    case VALUE_TYPES.dropdown: {
      const o = f.dropdownOptions.find((x) => x.id === v.value);
      return o ? { dropdownOptionId: o.id, text: o.text } : null;
    }
    case VALUE_TYPES.rankedDropdown: {
      const o = f.dropdownOptions.find((x) => x.id === v.value);
      // v1 colors are integers; v2 documents a string or null and no mapping, so null here.
      return o ? { dropdownOptionId: o.id, text: o.text, rank: o.rank, color: null } : null;
    }
    case VALUE_TYPES.location:
      return location(v.value as LocationValue);
    default:
      return v.value;
  }
}

export function fieldValueOf(state: AffinityState, f: Field, values: FieldValue[]): Json {
  const type = v2ValueType(f);
  const sorted = [...values].sort((a, b) => a.id - b.id);
  if (f.allowsMultiple && type !== 'datetime' && type !== 'text' && type !== 'ranked-dropdown') {
    const data = sorted.map((v) => renderOne(state, f, v)).filter((x) => x !== null);
    return { type, data: data.length ? data : null };
  }
  const first = sorted[0];
  return { type, data: first ? renderOne(state, f, first) : null };
}

export function v2FieldId(f: Field): string {
  return `field-${f.id}`;
}

function renderEnriched(
  state: AffinityState,
  f: EnrichedField,
  entityType: EntityType,
  entityId: number,
): Json {
  const raw = state.enrichedValues.get(`${entityType}:${entityId}`)?.get(f.id);
  let data: unknown = raw ?? null;
  if (f.valueType === 'location' && raw) data = location(raw as LocationValue);
  if (f.valueType === 'filterable-text-multi' && Array.isArray(raw) && raw.length === 0) data = null;
  return {
    id: f.id,
    name: f.name,
    type: 'enriched',
    enrichmentSource: 'affinity-data',
    value: { type: f.valueType, data },
  };
}

/**
 * A person's companies as v2 reads give them: the association field `companies` ("Organizations",
 * `company-multi`) under `fields` (v2 "Nested Associations"; the field, its name and its type
 * `list` as in the document's person-list example). Arrays are cut at 100, as documented.
 */
export const PERSON_COMPANIES_FIELD = {
  id: 'companies',
  name: 'Organizations',
  type: 'list',
  enrichmentSource: null,
  valueType: 'company-multi',
} as const;
export const ASSOCIATION_LIMIT = 100;

function renderPersonCompanies(state: AffinityState, personId: number): Json {
  const ids = state.persons.get(personId)?.organizationIds ?? [];
  const data = ids
    .slice(0, ASSOCIATION_LIMIT)
    .map((id) => companyData(state, id))
    .filter((x) => x !== null);
  return { ...PERSON_COMPANIES_FIELD, value: { type: 'company-multi', data: data.length ? data : null } };
}

/** Which fields a request selected: by id (`fieldIds`) or by type (`fieldTypes`). */
export type FieldSelection = { ids: string[]; types: string[] };

export function selects(sel: FieldSelection, id: string, type: string): boolean {
  return sel.ids.includes(id) || sel.types.includes(type);
}

/** The fields (global and enriched) readable on persons or companies, in v2 metadata form. */
export function entityFieldMetadata(state: AffinityState, entityType: EntityType): Json[] {
  const global = [...state.fields.values()]
    .filter((f) => f.listId === null && f.entityType === entityType)
    .map((f) => ({
      id: v2FieldId(f),
      name: f.name,
      type: 'global',
      enrichmentSource: null,
      valueType: v2ValueType(f),
    }));
  const enriched = state.enrichedFields
    .filter((f) => f.entityType === entityType)
    .map((f) => ({
      id: f.id,
      name: f.name,
      type: 'enriched',
      enrichmentSource: 'affinity-data',
      valueType: f.valueType,
    }));
  return entityType === ENTITY_PERSON
    ? [...enriched, { ...PERSON_COMPANIES_FIELD }, ...global]
    : [...enriched, ...global];
}

export function listFieldMetadata(state: AffinityState, list: AffinityList): Json[] {
  const listFields = [...state.fields.values()]
    .filter((f) => f.listId === list.id)
    .map((f) => ({
      id: v2FieldId(f),
      name: f.name,
      type: 'list',
      enrichmentSource: null,
      valueType: v2ValueType(f),
    }));
  return list.type === ENTITY_OPPORTUNITY
    ? listFields
    : [...entityFieldMetadata(state, list.type), ...listFields];
}

/** Rejects a `fieldIds` entry that is not a field of this resource (400 validation). */
export function checkFieldIds(known: Json[], sel: FieldSelection): void {
  const ids = new Set(known.map((k) => k.id as string));
  for (const id of sel.ids) {
    if (!ids.has(id))
      throw new AffinityApiError(
        400,
        `Field ${id} does not exist or cannot be requested here.`,
        'validation',
        'fieldIds',
      );
  }
}

/** The `fields` array of a person or company (global and enriched), or of a list entry. */
export function renderFields(
  state: AffinityState,
  entityType: EntityType,
  entityId: number,
  sel: FieldSelection,
  entry?: ListEntry,
): Json[] {
  const out: Json[] = [];
  if (entityType !== ENTITY_OPPORTUNITY) {
    for (const f of state.enrichedFields) {
      if (f.entityType === entityType && selects(sel, f.id, 'enriched'))
        out.push(renderEnriched(state, f, entityType, entityId));
    }
    if (entityType === ENTITY_PERSON && selects(sel, PERSON_COMPANIES_FIELD.id, PERSON_COMPANIES_FIELD.type))
      out.push(renderPersonCompanies(state, entityId));
    for (const f of state.fields.values()) {
      if (f.listId !== null || f.entityType !== entityType || !selects(sel, v2FieldId(f), 'global')) continue;
      out.push({
        id: v2FieldId(f),
        name: f.name,
        type: 'global',
        enrichmentSource: null,
        value: fieldValueOf(state, f, state.cellValues(f.id, entityId, null)),
      });
    }
  }
  if (entry) {
    for (const f of state.fields.values()) {
      if (f.listId !== entry.listId || !selects(sel, v2FieldId(f), 'list')) continue;
      out.push({
        id: v2FieldId(f),
        name: f.name,
        type: 'list',
        enrichmentSource: null,
        value: fieldValueOf(state, f, state.cellValues(f.id, entityId, entry.id)),
      });
    }
  }
  return out;
}

const noFields: FieldSelection = { ids: [], types: [] };
const wantsFields = (sel: FieldSelection) => sel.ids.length > 0 || sel.types.length > 0;

export function renderPerson(state: AffinityState, p: Person, sel: FieldSelection = noFields): Json {
  return {
    id: p.id,
    firstName: p.firstName,
    lastName: p.lastName,
    primaryEmailAddress: state.primaryEmail(p),
    emailAddresses: [...p.emails],
    type: p.type === 1 ? 'internal' : 'external',
    ...(wantsFields(sel) ? { fields: renderFields(state, ENTITY_PERSON, p.id, sel) } : {}),
  };
}

export function renderCompany(state: AffinityState, o: Organization, sel: FieldSelection = noFields): Json {
  return {
    id: o.id,
    name: o.name,
    domain: o.domain,
    domains: [...o.domains],
    isGlobal: o.global,
    ...(wantsFields(sel) ? { fields: renderFields(state, ENTITY_ORGANIZATION, o.id, sel) } : {}),
  };
}

export function renderOpportunity(o: Opportunity): Json {
  return { id: o.id, name: o.name, listId: o.listId };
}

export function renderList(l: AffinityList): Json {
  return {
    id: l.id,
    name: l.name,
    type: listType(l.type),
    isPublic: l.isPublic,
    ownerId: l.ownerId,
    creatorId: l.creatorId,
  };
}

export function renderListEntry(state: AffinityState, e: ListEntry, sel: FieldSelection): Json {
  const fields = wantsFields(sel) ? { fields: renderFields(state, e.entityType, e.entityId, sel, e) } : {};
  let entity: Json;
  if (e.entityType === ENTITY_PERSON)
    entity = { ...renderPerson(state, state.person(e.entityId)), ...fields };
  else if (e.entityType === ENTITY_ORGANIZATION)
    entity = { ...renderCompany(state, state.organization(e.entityId)), ...fields };
  else entity = { ...renderOpportunity(state.opportunity(e.entityId)), ...fields };
  return {
    id: e.id,
    type: listType(e.entityType),
    listId: e.listId,
    createdAt: iso(e.createdAt),
    creatorId: e.creatorId,
    entity,
  };
}

// ---------------------------------------------------------------------------------------------
// Pagination

export type PageQuery = { limit: number; after?: number; before?: number; params: [string, string][] };

export function encodeCursor(c: { after?: number; before?: number; params: [string, string][] }): string {
  return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { after?: number; before?: number; params: [string, string][] } {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof c !== 'object' || c === null || !Array.isArray(c.params)) throw new Error('bad');
    return {
      ...(typeof c.after === 'number' ? { after: c.after } : {}),
      ...(typeof c.before === 'number' ? { before: c.before } : {}),
      params: c.params as [string, string][],
    };
  } catch {
    throw new AffinityApiError(400, 'Invalid cursor.', 'validation', 'cursor');
  }
}

/**
 * Reads `cursor` and `limit`. With a cursor, the query it was made for (field selection, ids)
 * replaces the request's own; `limit` may still be given.
 */
export function pageQuery(query: URLSearchParams, pageParams: string[]): PageQuery {
  const rawLimit = query.get('limit');
  let limit = V2_MAX_LIMIT;
  if (rawLimit !== null) {
    const n = Number(rawLimit);
    if (!Number.isInteger(n) || n < 1 || n > V2_MAX_LIMIT)
      throw new AffinityApiError(
        400,
        `limit must be an integer between 1 and ${V2_MAX_LIMIT}.`,
        'validation',
        'limit',
      );
    limit = n;
  }
  const cursor = query.get('cursor');
  if (cursor !== null) {
    const c = decodeCursor(cursor);
    const carried = c.params.find(([k]) => k === 'limit')?.[1];
    return { limit: rawLimit === null && carried !== undefined ? Number(carried) : limit, ...c };
  }
  const params: [string, string][] = [];
  for (const [k, v] of query) if (pageParams.includes(k)) params.push([k, v]);
  if (rawLimit !== null) params.push(['limit', rawLimit]);
  return { limit, params };
}

/** Cuts a page out of rows sorted by id and builds `pagination`. */
export function paginate<T extends { id: number }>(
  rows: T[],
  q: PageQuery,
  baseUrl: string,
): { page: T[]; pagination: { nextUrl: string | null; prevUrl: string | null } } {
  const sorted = [...rows].sort((a, b) => a.id - b.id);
  let page: T[];
  if (q.before !== undefined) {
    const earlier = sorted.filter((r) => r.id < (q.before as number));
    page = earlier.slice(Math.max(0, earlier.length - q.limit));
  } else {
    page = sorted.filter((r) => q.after === undefined || r.id > q.after).slice(0, q.limit);
  }
  const first = page[0];
  const last = page[page.length - 1];
  const url = (c: { after?: number; before?: number }) =>
    `${baseUrl}?cursor=${encodeCursor({ ...c, params: q.params })}`;
  const hasNext = last !== undefined && sorted.some((r) => r.id > last.id);
  const hasPrev = first !== undefined && sorted.some((r) => r.id < first.id);
  return {
    page,
    pagination: {
      nextUrl: hasNext && last ? url({ after: last.id }) : null,
      prevUrl: hasPrev && first ? url({ before: first.id }) : null,
    },
  };
}

/** Parses `fieldIds`/`fieldTypes` (repeated parameters) from the page query's params. */
export function fieldSelection(params: [string, string][], allowedTypes: string[]): FieldSelection {
  const ids = params.filter(([k]) => k === 'fieldIds').map(([, v]) => v);
  const types = params.filter(([k]) => k === 'fieldTypes').map(([, v]) => v);
  for (const t of types) {
    if (!allowedTypes.includes(t))
      throw new AffinityApiError(
        400,
        `fieldTypes must be one of ${allowedTypes.join(', ')}.`,
        'validation',
        'fieldTypes',
      );
  }
  return { ids, types };
}

export function idsFilter(params: [string, string][]): number[] | undefined {
  const ids = params.filter(([k]) => k === 'ids').map(([, v]) => v);
  if (ids.length === 0) return undefined;
  return ids.map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new AffinityApiError(400, 'ids must be positive integers.', 'validation', 'ids');
    return n;
  });
}
