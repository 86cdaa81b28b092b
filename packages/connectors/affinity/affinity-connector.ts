/**
 * Affinity as a sync side (a TableConnector). Tables, each with its remote id:
 * - `persons`: people (first and last name, primary email, the other emails) and the account's
 *   global person fields;
 * - `companies`: organizations (name, domain) and the global organization fields;
 * - `opportunities`: opportunities (name, their list);
 * - `list-<id>`: the entries of one list (its entity, the entity's name, when it was added) and the
 *   list's fields (list-specific and global).
 * Reads are v2 (cursor pagination, field data by `fieldIds`), but for opportunities, which v2 gives
 * without their links: they are read from v1 (`GET /opportunities`, `GET /opportunities/{id}`).
 * Writes are v1 (v2 writes nothing of these): `POST/PUT/DELETE /persons`, `/organizations`,
 * `/opportunities`, list entries `POST/DELETE /lists/{id}/list-entries`, and field values
 * `POST/PUT/DELETE /field-values`.
 * - links: a person's Organizations (v2's `companies` association) and an opportunity's People and
 *   Organizations are linked records (`references` names the table), written as the v1 id lists
 *   (`organization_ids`, `person_ids`), each replaced whole. An organization's persons are the same
 *   links and are not a field of their own.
 *
 * - read: Affinity has no modified-since filter on persons, companies, opportunities or list entries
 *   (v2 lists them by cursor only; v1's field value changes cover only fields that track changes, and
 *   no built-in property). Changes are therefore found by a full pass compared with the last read:
 *   every pass pages the table, hashes each record's canonical fields and compares the hash with the
 *   one the cursor keeps for that id; new or changed records are returned, unchanged ones are not.
 *   An edit is never missed: any change of any value changes the hash, and a record changed after
 *   its page was read differs at the next pass.
 * - deletes: each cursor entry carries the parity of the pass that last saw it. At the end of a pass
 *   the ids it did not see are read by id: still there (a record the paging skipped) they are
 *   returned, gone they are `deletedIds`. No false delete.
 * - the cursor is committed by the runtime only after a page is applied; it holds Affinity's page
 *   cursor in the pass, the pass's parity and the packed id -> hash map (deflated).
 * - write: one record per request (v1 has no batch write). Field values are written per value:
 *   the record's current values are read first (`GET /field-values?person_id=`...), then values are
 *   updated, added or removed so the field holds exactly what is written.
 * - conflicts: Affinity has no conditional update. Right before an update or delete batch, the
 *   records are read by id (v2 `ids=`, 100 a request; list entries one by one) and compared with
 *   `expected`; a record changed since Lockstep read it (or gone) answers `version_conflict` with its
 *   current values and is not written. That read also gives the emails an update keeps.
 * - creates: a person create whose email another person holds answers `existingId` (that person,
 *   found by the email) so the runtime links the two; creates are remembered per idempotency key by
 *   the connector process, so a retried chunk does not create twice.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type CanonicalValue,
  type FieldType,
  hashRecord,
  normalizeValue,
  type RecordData,
  valuesEqual,
} from '@lockstep/engine';
import {
  type Capabilities,
  ConnectorError,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';
import { fullNameId, joinName, splitFullName } from '../sdk/full-name';
import {
  AFFINITY_RATE_LIMIT,
  type AffinityClient,
  type AffinityClientOptions,
  affinityUserMessage,
  createAffinityClient,
} from './affinity-api';
import {
  type AffinityField,
  type AffinityFieldMeta,
  type AffinityFieldValue,
  affinityFields,
  fromCanonical,
  isMulti,
  toCanonical,
  v1FieldId,
  v1ValueKey,
} from './affinity-values';

/** v2 pages hold at most 100 items. */
export const AFFINITY_MAX_PAGE_SIZE = 100;
export const AFFINITY_BATCH_SIZE = 100;
/** Page requests one read() makes at most while a pass finds few changes (then it returns). */
export const AFFINITY_MAX_REQUESTS_PER_READ = 20;
const SCHEMA_MAX_AGE_MS = 60_000;

export const AFFINITY_CAPABILITIES: Capabilities = {
  batchSize: AFFINITY_BATCH_SIZE,
  incrementalRead: true,
  // Deletes are reported as events: ids known to the cursor that Affinity no longer has.
  deleteDetection: 'events',
  // v1 webhook subscriptions wake a read (webhooks.ts); reads still find the changes.
  webhooks: true,
  rateLimit: AFFINITY_RATE_LIMIT,
  // Every synced field of the table is a field of every record read (empty ones as null).
  recordsCarryEveryField: true,
};

export type AffinityTableKind = 'persons' | 'companies' | 'opportunities' | 'list';
export type AffinityTableRef = { kind: AffinityTableKind; listId?: number };

/** `persons`, `companies`, `opportunities`, `list-<id>`; anything else is not an Affinity table. */
export function parseTable(tableRemoteId: string): AffinityTableRef {
  const t = tableRemoteId.trim();
  if (t === 'persons' || t === 'companies' || t === 'opportunities') return { kind: t };
  const m = /^list-(\d+)$/.exec(t);
  if (m) return { kind: 'list', listId: Number(m[1]) };
  throw new ConnectorError(
    'not_found',
    `no Affinity table ${tableRemoteId}`,
    affinityUserMessage('not_found'),
  );
}

export type AffinityList = { id: number; name: string; type: 'person' | 'company' | 'opportunity' | string };

/** A v2 person, company or opportunity, or a list entry with its entity. */
export type AffinityEntity = {
  id: number;
  firstName?: string | null;
  lastName?: string | null;
  primaryEmailAddress?: string | null;
  emailAddresses?: string[] | null;
  type?: string;
  name?: string | null;
  domain?: string | null;
  domains?: string[] | null;
  isGlobal?: boolean;
  listId?: number;
  fields?: AffinityFieldValue[] | null;
  /** An opportunity's persons and organizations (v1 `person_ids`, `organization_ids`). */
  personIds?: number[] | null;
  organizationIds?: number[] | null;
};

/** A v1 opportunity (`GET /opportunities`, `GET /opportunities/{id}`). */
export type V1Opportunity = {
  id: number;
  name?: string | null;
  person_ids?: number[] | null;
  organization_ids?: number[] | null;
  list_entries?: { id?: number; list_id?: number }[] | null;
};

/** A v1 opportunity in the shape the opportunities table reads (its list from its one list entry). */
export function fromV1Opportunity(o: V1Opportunity): AffinityEntity {
  const listId = o.list_entries?.[0]?.list_id;
  return {
    id: o.id,
    name: o.name ?? null,
    ...(listId !== undefined ? { listId } : {}),
    personIds: o.person_ids ?? [],
    organizationIds: o.organization_ids ?? [],
  };
}
export type AffinityListEntry = {
  id: number;
  type?: string;
  createdAt?: string;
  listId?: number;
  entity?: AffinityEntity | null;
  fields?: AffinityFieldValue[] | null;
};
type Raw = AffinityEntity | AffinityListEntry;

type Paged<T> = { data: T[] | null; pagination?: { nextUrl?: string | null } | null };

/** A built-in property of the entity: how it reads from v2 and its name in v1 writes. */
type Builtin = AffinityField & { read: (r: Raw) => unknown };

const builtin = (
  remoteId: string,
  name: string,
  fieldType: FieldType,
  readOnly: boolean,
  read: (r: Raw) => unknown,
  options: Record<string, unknown> = {},
): Builtin => ({ remoteId, name, fieldType, readOnly, options: { builtin: true, ...options }, read });

const ent = (r: Raw): AffinityEntity => r as AffinityEntity;
const entry = (r: Raw): AffinityListEntry => r as AffinityListEntry;

/**
 * A person's "Full name", made of the first and last name (sdk/full-name.ts): read as "first last",
 * written as both (split at the last space; one word is a first name, which Affinity requires).
 */
export const FULL_NAME = fullNameId('firstName', 'lastName');

export const PERSON_BUILTINS: Builtin[] = [
  builtin('firstName', 'First name', 'text', false, (r) => ent(r).firstName),
  builtin('lastName', 'Last name', 'text', false, (r) => ent(r).lastName),
  builtin(FULL_NAME, 'Full name', 'text', false, (r) => joinName(ent(r).firstName, ent(r).lastName), {
    madeOf: ['firstName', 'lastName'],
  }),
  builtin('primaryEmailAddress', 'Primary email', 'email', false, (r) => ent(r).primaryEmailAddress, {
    unique: true,
  }),
  builtin('emailAddresses', 'Email addresses', 'multi_select', true, (r) => ent(r).emailAddresses ?? []),
  builtin('type', 'Type', 'single_select', true, (r) => ent(r).type, {
    choices: ['external', 'internal', 'collaborator'],
  }),
];
/**
 * A person's organizations: v2 reads give them as the association field `companies` (a
 * company-multi under `fields`, requested by id, cut at 100 by Affinity); v1 writes them as the
 * person's `organization_ids` (the whole list). A linked record of Companies. An organization's
 * persons are the same links seen from the other side: they are not a second field (v2 does not
 * read them, and two fields for one link would write each other's changes back).
 */
export const PERSON_ORGANIZATIONS: Builtin = builtin(
  'companies',
  'Organizations',
  'relations',
  false,
  (r) => toCanonical({ fieldType: 'relations' }, ent(r).fields?.find((f) => f.id === 'companies')?.value),
  { references: 'companies', relationTarget: 'companies', multiple: true, v2FieldId: 'companies' },
);

/** The person built-ins, with Organizations when the account's person fields offer the association. */
export function personBuiltins(metas: AffinityFieldMeta[]): Builtin[] {
  return metas.some((m) => m.id === 'companies')
    ? [...PERSON_BUILTINS, PERSON_ORGANIZATIONS]
    : PERSON_BUILTINS;
}

export const COMPANY_BUILTINS: Builtin[] = [
  builtin('name', 'Name', 'text', false, (r) => ent(r).name),
  builtin('domain', 'Domain', 'text', false, (r) => ent(r).domain),
  builtin('domains', 'Domains', 'multi_select', true, (r) => ent(r).domains ?? []),
  builtin('isGlobal', 'Global (from Affinity data)', 'boolean', true, (r) => ent(r).isGlobal ?? false),
];
export const OPPORTUNITY_BUILTINS: Builtin[] = [
  builtin('name', 'Name', 'text', false, (r) => ent(r).name),
  // Set when the opportunity is made (its list); not moved afterwards.
  builtin(
    'listId',
    'List',
    'text',
    false,
    (r) => (ent(r).listId === undefined ? null : String(ent(r).listId)),
    {
      createOnly: true,
    },
  ),
  // Read from v1 (v2 gives an opportunity's id, name and list only), written as v1 `person_ids` and
  // `organization_ids` (each the whole list).
  builtin('persons', 'People', 'relations', false, (r) => (ent(r).personIds ?? []).map(String), {
    references: 'persons',
    relationTarget: 'persons',
    multiple: true,
  }),
  builtin(
    'companies',
    'Organizations',
    'relations',
    false,
    (r) => (ent(r).organizationIds ?? []).map(String),
    {
      references: 'companies',
      relationTarget: 'companies',
      multiple: true,
    },
  ),
];
const ENTITY_TARGET: Record<string, string> = {
  person: 'persons',
  company: 'companies',
  opportunity: 'opportunities',
};
export function listBuiltins(list: AffinityList): Builtin[] {
  return [
    // The entity an entry is for: given when it is added, not changed afterwards.
    builtin(
      'entity',
      list.type === 'person' ? 'Person' : list.type === 'company' ? 'Company' : 'Opportunity',
      'relations',
      list.type === 'opportunity',
      (r) => (entry(r).entity?.id === undefined ? null : [String(entry(r).entity?.id)]),
      { relationTarget: ENTITY_TARGET[list.type] ?? 'persons', createOnly: true },
    ),
    builtin(
      'entityName',
      'Name',
      'text',
      // An opportunity's name is its own; a person's or company's is written on its own table.
      list.type !== 'opportunity',
      (r) => {
        const e = entry(r).entity;
        if (!e) return null;
        if (e.name !== undefined) return e.name;
        return [e.firstName, e.lastName].filter(Boolean).join(' ') || null;
      },
    ),
    builtin('createdAt', 'Added', 'datetime', true, (r) => entry(r).createdAt ?? null),
  ];
}

export type AffinityTableSchema = {
  ref: AffinityTableRef;
  list?: AffinityList;
  builtins: Builtin[];
  fields: AffinityField[];
  /** Every synced field: built-ins first. */
  all: AffinityField[];
};

// ---------------------------------------------------------------------------------------------
// Cursor: the position in a pass and what the last pass saw (id -> hash, pass parity).

type Known = Map<string, { h: string; p: 0 | 1 }>;
type ReadCursor = {
  v: 1;
  /** The parity of the pass under way. */
  p: 0 | 1;
  /** Affinity's page cursor within the pass (null: from the start). */
  c: string | null;
  /** The first pass: every record is returned. */
  s?: true;
  /** Packed known ids, hashes and parities. */
  k: string;
};

export function packKnown(known: Known): string {
  const lines = [...known].map(([id, e]) => `${id} ${e.h} ${e.p}`).join('\n');
  return deflateRawSync(Buffer.from(lines)).toString('base64url');
}
export function unpackKnown(packed: string | undefined): Known {
  const out: Known = new Map();
  if (!packed) return out;
  for (const line of inflateRawSync(Buffer.from(packed, 'base64url')).toString('utf8').split('\n')) {
    const [id, h, p] = line.split(' ');
    if (id && h) out.set(id, { h, p: p === '1' ? 1 : 0 });
  }
  return out;
}
const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
/** An unreadable cursor means a full rescan. */
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.p === 0 || c.p === 1) && typeof c.k === 'string') return c;
  } catch {
    // fall through
  }
  return null;
}

/** A record's fingerprint: its canonical fields' hash (what a change of any value changes). */
export function fingerprint(record: RecordData): string {
  return hashRecord(record.fields).slice(0, 16);
}

/** Affinity's page cursor from a response's `nextUrl`; null at the end. */
export function nextCursorOf(nextUrl: string | null | undefined): string | null {
  if (!nextUrl) return null;
  try {
    return new URL(nextUrl, 'https://api.affinity.co').searchParams.get('cursor');
  } catch {
    return null;
  }
}

/** A path with a query string; arrays become repeated parameters (`ids=1&ids=2`), as v2 takes them. */
export function withQuery(
  path: string,
  query: Record<string, string | number | (string | number)[] | null | undefined>,
) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === null || v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) params.append(k, String(x));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

// ---------------------------------------------------------------------------------------------
// Connector

export type AffinityConnectorOptions = AffinityClientOptions & {
  /** v2 page size (Affinity's 100; lower in tests). */
  queryPageSize?: number;
  now?: () => number;
};

export type AffinityConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  /** A table's synced fields (cached for a minute). */
  describe(tableRemoteId: string, refresh?: boolean): Promise<AffinityTableSchema>;
  client: AffinityClient;
};

type Update = Extract<WriteRequest, { kind: 'update' }>;
type Create = Extract<WriteRequest, { kind: 'create' }>;
type Delete = Extract<WriteRequest, { kind: 'delete' }>;

/** v1 field option (`GET /fields`): the ids ranked dropdowns are written with. */
type V1Field = {
  id: number;
  name?: string;
  list_id?: number | null;
  dropdown_options?: { id: number; text: string }[];
};
/** v1 field value (`GET /field-values`). */
type V1FieldValue = {
  id: number;
  field_id: number;
  entity_id?: number;
  list_entry_id?: number | null;
  value: unknown;
};

/** Fetches every page of a v2 listing. */
export async function allPages<T>(client: AffinityClient, path: string): Promise<T[]> {
  const out: T[] = [];
  let next: string | null = path;
  for (let i = 0; next && i < 1000; i++) {
    const res: { body: Paged<T> } = await client.request<Paged<T>>({ method: 'GET', path: next });
    out.push(...(res.body.data ?? []));
    next = res.body.pagination?.nextUrl ?? null;
  }
  return out;
}

export function createAffinityConnector(options: AffinityConnectorOptions): AffinityConnector {
  const client = createAffinityClient(options);
  const now = options.now ?? Date.now;
  const pageLimit = Math.max(
    1,
    Math.min(options.queryPageSize ?? AFFINITY_MAX_PAGE_SIZE, AFFINITY_MAX_PAGE_SIZE),
  );
  const idempotent = new Map<string, string>();
  const schemas = new Map<string, { at: number; schema: AffinityTableSchema }>();
  const v1Fields = new Map<string, { at: number; fields: V1Field[] }>();

  async function describe(tableId: string, refresh = false): Promise<AffinityTableSchema> {
    const known = schemas.get(tableId);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.schema;
    const ref = parseTable(tableId);
    let list: AffinityList | undefined;
    let builtins: Builtin[];
    let metas: AffinityFieldMeta[] = [];
    if (ref.kind === 'persons') {
      metas = await allPages<AffinityFieldMeta>(client, '/v2/persons/fields');
      builtins = personBuiltins(metas);
    } else if (ref.kind === 'companies') {
      builtins = COMPANY_BUILTINS;
      metas = await allPages<AffinityFieldMeta>(client, '/v2/companies/fields');
    } else if (ref.kind === 'opportunities') {
      builtins = OPPORTUNITY_BUILTINS;
    } else {
      const res = await client.request<AffinityList>({ method: 'GET', path: `/v2/lists/${ref.listId}` });
      list = res.body;
      builtins = listBuiltins(list);
      metas = await allPages<AffinityFieldMeta>(client, `/v2/lists/${ref.listId}/fields`);
    }
    const taken = new Set(builtins.map((b) => b.remoteId));
    const fields = affinityFields(metas).filter((f) => !taken.has(f.remoteId));
    const schema: AffinityTableSchema = {
      ref,
      builtins,
      fields,
      all: [...builtins, ...fields],
      ...(list ? { list } : {}),
    };
    schemas.set(tableId, { at: now(), schema });
    return schema;
  }

  /** v1 fields (for ranked dropdown option ids) of a table: its list's, or its entity type's. */
  async function v1FieldsOf(schema: AffinityTableSchema): Promise<V1Field[]> {
    const key = schema.ref.kind === 'list' ? `list-${schema.ref.listId}` : schema.ref.kind;
    const cached = v1Fields.get(key);
    if (cached && now() - cached.at <= SCHEMA_MAX_AGE_MS) return cached.fields;
    const query =
      schema.ref.kind === 'list'
        ? { list_id: schema.ref.listId }
        : { entity_type: schema.ref.kind === 'persons' ? 0 : schema.ref.kind === 'companies' ? 1 : 8 };
    const res = await client.request<V1Field[]>({ method: 'GET', path: withQuery('/fields', query) });
    const fields = Array.isArray(res.body) ? res.body : [];
    v1Fields.set(key, { at: now(), fields });
    return fields;
  }

  function toRecord(schema: AffinityTableSchema, r: Raw): RecordData {
    const fields: Record<string, CanonicalValue> = {};
    for (const b of schema.builtins) {
      const n = normalizeValue(b.fieldType, b.read(r) ?? null);
      fields[b.remoteId] = n.ok ? n.value : null;
    }
    const values = (r as AffinityListEntry).fields ?? (r as AffinityListEntry).entity?.fields ?? [];
    const byId = new Map((values ?? []).map((v) => [v.id, v.value]));
    for (const f of schema.fields) fields[f.remoteId] = toCanonical(f, byId.get(f.remoteId) ?? null);
    return { id: String(r.id), fields };
  }

  /** The v2 fields a read asks for: the table's fields and the associations built-ins read. */
  const fieldIdsQuery = (schema: AffinityTableSchema) => ({
    fieldIds: [
      ...schema.builtins.flatMap((b) =>
        typeof b.options.v2FieldId === 'string' ? [b.options.v2FieldId] : [],
      ),
      ...schema.fields.map((f) => f.remoteId),
    ],
  });

  function listingPath(schema: AffinityTableSchema): string {
    switch (schema.ref.kind) {
      case 'persons':
        return '/v2/persons';
      case 'companies':
        return '/v2/companies';
      case 'opportunities':
        return '/v2/opportunities';
      default:
        return `/v2/lists/${schema.ref.listId}/list-entries`;
    }
  }

  async function page(
    schema: AffinityTableSchema,
    cursor: string | null,
    limit: number,
  ): Promise<{ items: Raw[]; next: string | null }> {
    if (schema.ref.kind === 'opportunities') {
      // v1: the only listing with an opportunity's persons and organizations. Its page token holds
      // the query, so every page of a pass asks for the same page size.
      const res = await client.request<{ opportunities?: V1Opportunity[]; next_page_token?: string | null }>({
        method: 'GET',
        path: withQuery('/opportunities', { page_size: pageLimit, page_token: cursor }),
      });
      return {
        items: (res.body?.opportunities ?? []).map(fromV1Opportunity),
        next: res.body?.next_page_token ?? null,
      };
    }
    const query = {
      limit,
      ...(cursor ? { cursor } : {}),
      ...fieldIdsQuery(schema),
    };
    const res = await client.request<Paged<Raw>>({
      method: 'GET',
      path: withQuery(listingPath(schema), query),
    });
    return { items: res.body.data ?? [], next: nextCursorOf(res.body.pagination?.nextUrl) };
  }

  /** The records with these ids as Affinity has them now (ids not found left out). */
  async function fetchByIds(schema: AffinityTableSchema, ids: string[]): Promise<Raw[]> {
    const unique = [...new Set(ids)].filter((id) => /^\d+$/.test(id));
    const out: Raw[] = [];
    if (schema.ref.kind === 'opportunities') {
      // Neither version reads opportunities by ids with their links (v2 has no links, v1 no ids
      // filter): one v1 read per opportunity.
      for (const id of unique) {
        try {
          const res = await client.request<V1Opportunity>({ method: 'GET', path: `/opportunities/${id}` });
          out.push(fromV1Opportunity(res.body));
        } catch (e) {
          if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
        }
      }
      return out;
    }
    if (schema.ref.kind === 'list') {
      for (const id of unique) {
        try {
          const res = await client.request<AffinityListEntry>({
            method: 'GET',
            path: withQuery(`/v2/lists/${schema.ref.listId}/list-entries/${id}`, fieldIdsQuery(schema)),
          });
          out.push(res.body);
        } catch (e) {
          if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
        }
      }
      return out;
    }
    for (let i = 0; i < unique.length; i += AFFINITY_MAX_PAGE_SIZE) {
      const chunk = unique.slice(i, i + AFFINITY_MAX_PAGE_SIZE);
      const query = {
        ids: chunk,
        limit: AFFINITY_MAX_PAGE_SIZE,
        ...fieldIdsQuery(schema),
      };
      out.push(...(await allPages<Raw>(client, withQuery(listingPath(schema), query))));
    }
    const wanted = new Set(unique);
    return out.filter((r) => wanted.has(String(r.id)));
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const schema = await describe(tableId);
    const want = Math.max(1, opts.pageSize);
    const given = decode(cursor);
    const c: ReadCursor = given ?? { v: 1, p: 1, c: null, s: true, k: '' };
    const known = unpackKnown(c.k);
    const records: RecordData[] = [];
    let apiCursor = c.c;
    let ended = false;
    let requests = 0;
    while (records.length < want && requests < AFFINITY_MAX_REQUESTS_PER_READ) {
      const limit = Math.min(pageLimit, want - records.length);
      let got: { items: Raw[]; next: string | null };
      try {
        got = await page(schema, apiCursor, limit);
      } catch (error) {
        // Affinity's page cursor expired or was refused: the pass goes on from the start (records
        // seen already are compared again and not returned unless changed).
        if (apiCursor && error instanceof ConnectorError && error.code === 'validation') {
          apiCursor = null;
          requests++;
          continue;
        }
        throw error;
      }
      requests++;
      for (const r of got.items) {
        const record = toRecord(schema, r);
        const h = fingerprint(record);
        const before = known.get(record.id);
        if (c.s || !before || before.h !== h) records.push(record);
        known.set(record.id, { h, p: c.p });
      }
      apiCursor = got.next;
      if (!apiCursor) {
        ended = true;
        break;
      }
    }
    const deletedIds: string[] = [];
    if (ended) {
      // Ids the pass did not see: still in Affinity (returned now if changed) or gone.
      const missing = [...known].filter(([, e]) => e.p !== c.p).map(([id]) => id);
      if (missing.length > 0) {
        const present = new Set<string>();
        for (const r of await fetchByIds(schema, missing)) {
          const record = toRecord(schema, r);
          present.add(record.id);
          const h = fingerprint(record);
          const before = known.get(record.id);
          if (!before || before.h !== h) records.push(record);
          known.set(record.id, { h, p: c.p });
        }
        for (const id of missing) {
          if (present.has(id)) continue;
          known.delete(id);
          deletedIds.push(id);
        }
      }
    }
    const next: ReadCursor = ended
      ? { v: 1, p: c.p === 1 ? 0 : 1, c: null, k: packKnown(known) }
      : { ...c, c: apiCursor, k: packKnown(known) };
    return {
      records,
      deletedIds,
      nextCursor: encode(next),
      hasMore: !ended,
      // Absence is evidence only when this one page holds the whole table (a first scan in one page).
      scanComplete: given === null && ended && requests === 1,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  function failure(err: unknown): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), affinityUserMessage('transient'));
    return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
  }
  const invalid = (message: string) =>
    new ConnectorError('validation', message, affinityUserMessage('validation', message));
  const notFound = (tableId: string, id: string) =>
    new ConnectorError('not_found', `Affinity ${tableId} ${id} not found`, affinityUserMessage('not_found'));

  function conflict(tableId: string, id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `Affinity ${tableId} ${id} changed since it was read`,
        userFacingMessage: 'The Affinity record changed at the same time; Lockstep compares it again.',
      },
      current,
    };
  }

  /** Whether the record no longer holds what Lockstep read in an expected field. */
  function changed(
    schema: AffinityTableSchema,
    record: RecordData,
    expected: Record<string, CanonicalValue> | undefined,
  ): boolean {
    for (const [name, want] of Object.entries(expected ?? {})) {
      const f = schema.all.find((x) => x.remoteId === name);
      if (!f) continue;
      const norm = normalizeValue(f.fieldType, want ?? null);
      if (!norm.ok || !valuesEqual(norm.value, record.fields[name] ?? null)) return true;
    }
    return false;
  }

  /** Runs one item; an error of that item alone (a bad value, a missing record) is its result. */
  async function item(run: () => Promise<WriteResult>): Promise<WriteResult> {
    try {
      return await run();
    } catch (err) {
      // Rate limits past the retries, outages and refused credentials concern the whole run.
      if (err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found'))
        return failure(err);
      throw err;
    }
  }

  /** The written fields, normalised, split into built-ins and fields; unknown and read-only ones dropped. */
  function split(
    schema: AffinityTableSchema,
    fields: Record<string, CanonicalValue>,
    forCreate: boolean,
  ): { builtins: Map<string, CanonicalValue>; custom: Map<AffinityField, CanonicalValue> } {
    const builtins = new Map<string, CanonicalValue>();
    const custom = new Map<AffinityField, CanonicalValue>();
    for (const [name, raw] of Object.entries(fields)) {
      const f = schema.all.find((x) => x.remoteId === name);
      if (!f || f.readOnly) continue;
      if (f.options.createOnly && !forCreate) continue;
      const norm = normalizeValue(f.fieldType, raw ?? null);
      if (!norm.ok) throw invalid(`${f.name}: ${norm.problem.message}`);
      if (f.meta) custom.set(f, norm.value);
      else builtins.set(name, norm.value);
    }
    return { builtins, custom };
  }

  const str = (v: CanonicalValue | undefined) => (v === null || v === undefined ? null : String(v));

  /** A linked-record value as the v1 id list that replaces the link (none: an empty list). */
  function idList(name: string, v: CanonicalValue | undefined): number[] {
    const raw = Array.isArray(v) ? v : v === null || v === undefined ? [] : [v];
    const ids = raw.map((x) => Number(x));
    if (ids.some((n) => !Number.isInteger(n) || n <= 0))
      throw invalid(`${name}: ${JSON.stringify(v)} is not a list of Affinity ids`);
    return [...new Set(ids)];
  }

  /** The v1 link lists (`organization_ids`, `person_ids`) among the written built-ins. */
  function links(schema: AffinityTableSchema, b: Map<string, CanonicalValue>): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    if (schema.ref.kind === 'persons' && b.has('companies'))
      out.organization_ids = idList('Organizations', b.get('companies'));
    if (schema.ref.kind === 'opportunities') {
      if (b.has('persons')) out.person_ids = idList('People', b.get('persons'));
      if (b.has('companies')) out.organization_ids = idList('Organizations', b.get('companies'));
    }
    return out;
  }

  /**
   * A person's v1 `first_name` and `last_name` from the written built-ins: the full name's parts,
   * then a first or last name written in the same request, which wins over its part. Only the
   * names written are given (an update keeps the others).
   */
  function personName(b: Map<string, CanonicalValue>): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    if (b.has(FULL_NAME)) {
      const { first, last } = splitFullName(b.get(FULL_NAME) ?? null, 'first');
      out.first_name = first === '' ? null : first;
      out.last_name = last === '' ? null : last;
    }
    if (b.has('firstName')) out.first_name = str(b.get('firstName'));
    if (b.has('lastName')) out.last_name = str(b.get('lastName'));
    return out;
  }

  /** The v1 entity path and field-values query key of a table's records. */
  function v1Entity(schema: AffinityTableSchema): { path: string; param: string } {
    switch (schema.ref.kind) {
      case 'persons':
        return { path: '/persons', param: 'person_id' };
      case 'companies':
        return { path: '/organizations', param: 'organization_id' };
      default:
        return { path: '/opportunities', param: 'opportunity_id' };
    }
  }

  type FieldPlan = { fieldId: number; valueType: string; listSpecific: boolean; values: unknown[] }[];

  /**
   * The v1 values each written field is to hold, prepared before anything is written: a value
   * Affinity would refuse fails the item while the record is untouched.
   */
  async function planFieldValues(
    schema: AffinityTableSchema,
    custom: Map<AffinityField, CanonicalValue>,
  ): Promise<FieldPlan> {
    const plan: FieldPlan = [];
    let options: V1Field[] | null = null;
    for (const [f, value] of custom) {
      const meta = f.meta as AffinityFieldMeta;
      const fieldId = v1FieldId(meta.id);
      if (fieldId === null) continue;
      if (meta.valueType === 'ranked-dropdown' && value !== null && options === null)
        options = await v1FieldsOf(schema);
      const opts = options?.find((o) => o.id === fieldId)?.dropdown_options ?? [];
      const out = fromCanonical(meta.valueType, value, (text) => opts.find((o) => o.text === text)?.id);
      if (out.problem) throw invalid(`${f.name}: ${out.problem}`);
      plan.push({
        fieldId,
        valueType: meta.valueType,
        listSpecific: meta.type === 'list',
        values: out.values,
      });
    }
    return plan;
  }

  /**
   * Makes the record's field values hold exactly the planned values: the current v1 values are
   * read, then each field is updated, completed or emptied.
   */
  async function writeFieldValues(
    schema: AffinityTableSchema,
    entityId: number,
    listEntryId: number | null,
    plan: FieldPlan,
  ): Promise<void> {
    if (plan.length === 0) return;
    const query =
      schema.ref.kind === 'list'
        ? { list_entry_id: listEntryId ?? undefined }
        : { [v1Entity(schema).param]: entityId };
    const res = await client.request<V1FieldValue[]>({
      method: 'GET',
      path: withQuery('/field-values', query),
    });
    const existing = Array.isArray(res.body) ? res.body : [];
    for (const p of plan) {
      const mine = existing.filter(
        (v) =>
          v.field_id === p.fieldId && (p.listSpecific ? v.list_entry_id === listEntryId : !v.list_entry_id),
      );
      const wanted = p.values.map((v) => ({ v, key: v1ValueKey(p.valueType, v) }));
      // Values already held stay; the others are removed or, for a single value, replaced.
      const keep = new Set<number>();
      const missing: unknown[] = [];
      for (const w of wanted) {
        const hit = mine.find((m) => !keep.has(m.id) && v1ValueKey(p.valueType, m.value) === w.key);
        if (hit) keep.add(hit.id);
        else missing.push(w.v);
      }
      const stale = mine.filter((m) => !keep.has(m.id));
      if (!isMulti(p.valueType) && stale.length > 0 && missing.length === 1) {
        const [first, ...rest] = stale as [V1FieldValue, ...V1FieldValue[]];
        await client.request({
          method: 'PUT',
          path: `/field-values/${first.id}`,
          body: { value: missing[0] },
        });
        missing.length = 0;
        stale.splice(0, stale.length, ...rest);
      }
      for (const s of stale) {
        try {
          await client.request({ method: 'DELETE', path: `/field-values/${s.id}` });
        } catch (e) {
          if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
        }
      }
      for (const value of missing) {
        await client.request({
          method: 'POST',
          path: '/field-values',
          body: {
            field_id: p.fieldId,
            entity_id: entityId,
            value,
            ...(p.listSpecific && listEntryId !== null ? { list_entry_id: listEntryId } : {}),
          },
        });
      }
    }
  }

  /** A person create refused because another person holds the email: that person's id. */
  async function personWithEmail(email: string): Promise<string | undefined> {
    const res = await client.request<{
      persons?: { id: number; emails?: string[]; primary_email?: string }[];
    }>({
      method: 'GET',
      path: withQuery('/persons', { term: email }),
    });
    const lower = email.toLowerCase();
    const hit = (res.body?.persons ?? []).find(
      (p) =>
        p.primary_email?.toLowerCase() === lower || (p.emails ?? []).some((e) => e.toLowerCase() === lower),
    );
    return hit ? String(hit.id) : undefined;
  }

  /** Creates one record; returns its id (a list entry's id for list tables). */
  async function create(
    schema: AffinityTableSchema,
    r: Create,
  ): Promise<{ id: string } | { existingId: string; error: ConnectorError }> {
    const { builtins: b, custom } = split(schema, r.fields, true);
    const plan = await planFieldValues(schema, custom);
    let entityId: number;
    let listEntryId: number | null = null;
    let id: string;
    if (schema.ref.kind === 'persons') {
      const email = str(b.get('primaryEmailAddress'));
      try {
        const res = await client.request<{ id: number }>({
          method: 'POST',
          path: '/persons',
          body: {
            first_name: null,
            last_name: null,
            ...personName(b),
            emails: email ? [email] : [],
            ...links(schema, b),
          },
        });
        entityId = res.body.id;
      } catch (error) {
        if (
          email &&
          error instanceof ConnectorError &&
          error.code === 'validation' &&
          /email/i.test(error.message)
        ) {
          const existing = await personWithEmail(email);
          if (existing) return { existingId: existing, error };
        }
        throw error;
      }
      id = String(entityId);
    } else if (schema.ref.kind === 'companies') {
      const res = await client.request<{ id: number }>({
        method: 'POST',
        path: '/organizations',
        body: { name: str(b.get('name')), ...(b.get('domain') ? { domain: str(b.get('domain')) } : {}) },
      });
      entityId = res.body.id;
      id = String(entityId);
    } else if (schema.ref.kind === 'opportunities' || schema.list?.type === 'opportunity') {
      const listId = schema.ref.kind === 'list' ? schema.ref.listId : Number(str(b.get('listId')));
      if (!listId || !Number.isInteger(listId))
        throw invalid('an opportunity needs its list (the List field)');
      const name = str(b.get(schema.ref.kind === 'list' ? 'entityName' : 'name'));
      const res = await client.request<{ id: number; list_entries?: { id: number; list_id?: number }[] }>({
        method: 'POST',
        path: '/opportunities',
        body: { name, list_id: listId, ...links(schema, b) },
      });
      entityId = res.body.id;
      if (schema.ref.kind === 'list') {
        const le = res.body.list_entries?.find((x) => x.list_id === undefined || x.list_id === listId);
        if (!le)
          throw new ConnectorError('transient', 'Affinity made the opportunity without its list entry');
        listEntryId = le.id;
        id = String(le.id);
      } else id = String(entityId);
    } else {
      const target = b.get('entity');
      const ids = Array.isArray(target) ? target : [];
      if (ids.length !== 1)
        throw invalid(`a list entry needs exactly one ${schema.builtins[0]?.name ?? 'entity'}`);
      entityId = Number(ids[0]);
      const res = await client.request<{ id: number }>({
        method: 'POST',
        path: `/lists/${schema.ref.listId}/list-entries`,
        body: { entity_id: entityId },
      });
      listEntryId = res.body.id;
      id = String(listEntryId);
    }
    // Remembered before the field values: a retry of this create updates the record it made.
    idempotent.set(r.idempotencyKey, id);
    await writeFieldValues(schema, entityId, listEntryId, plan);
    return { id };
  }

  async function update(schema: AffinityTableSchema, r: Update, before: Raw): Promise<void> {
    const { builtins: b, custom } = split(schema, r.fields, false);
    const plan = await planFieldValues(schema, custom);
    const e = before as AffinityEntity;
    if (schema.ref.kind === 'persons' && b.size > 0) {
      const body: Record<string, unknown> = { ...personName(b), ...links(schema, b) };
      if (b.has('primaryEmailAddress')) {
        const email = str(b.get('primaryEmailAddress'));
        const old = e.primaryEmailAddress?.toLowerCase();
        // The new primary replaces the old one; the person's other emails stay.
        const others = (e.emailAddresses ?? []).filter(
          (x) => x.toLowerCase() !== old && x.toLowerCase() !== email?.toLowerCase(),
        );
        body.emails = email ? [email, ...others] : others;
      }
      await client.request({ method: 'PUT', path: `/persons/${e.id}`, body });
    } else if (schema.ref.kind === 'companies' && b.size > 0) {
      const body: Record<string, unknown> = {};
      if (b.has('name')) body.name = str(b.get('name'));
      if (b.has('domain')) body.domain = str(b.get('domain'));
      await client.request({ method: 'PUT', path: `/organizations/${e.id}`, body });
    } else if (schema.ref.kind === 'opportunities' && b.size > 0) {
      const body: Record<string, unknown> = links(schema, b);
      if (b.has('name')) body.name = str(b.get('name'));
      if (Object.keys(body).length > 0)
        await client.request({ method: 'PUT', path: `/opportunities/${e.id}`, body });
    } else if (schema.ref.kind === 'list' && b.has('entityName')) {
      const entityId = (before as AffinityListEntry).entity?.id;
      await client.request({
        method: 'PUT',
        path: `/opportunities/${entityId}`,
        body: { name: str(b.get('entityName')) },
      });
    }
    if (schema.ref.kind === 'list') {
      const le = before as AffinityListEntry;
      await writeFieldValues(schema, le.entity?.id as number, le.id, plan);
    } else await writeFieldValues(schema, e.id, null, plan);
  }

  async function remove(schema: AffinityTableSchema, id: string): Promise<void> {
    const path =
      schema.ref.kind === 'list'
        ? `/lists/${schema.ref.listId}/list-entries/${id}`
        : `${v1Entity(schema).path}/${id}`;
    try {
      await client.request({ method: 'DELETE', path });
    } catch (e) {
      // Already gone: the delete has happened (a replay, or deleted in Affinity meanwhile).
      if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
    }
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const schema = await describe(tableId);
    const results: WriteResult[] = new Array(requests.length);
    // Updates, deletes with expected values and retried creates are read first (one read for the batch).
    const toCheck = requests.filter(
      (r): r is Update | Delete =>
        r.kind === 'update' ||
        (r.kind === 'delete' && r.expected !== undefined && Object.keys(r.expected).length > 0),
    );
    const retried = requests.flatMap((r) =>
      r.kind === 'create' && idempotent.has(r.idempotencyKey)
        ? [idempotent.get(r.idempotencyKey) as string]
        : [],
    );
    const current = new Map<string, Raw>();
    const ids = [...toCheck.map((r) => r.remoteId), ...retried];
    if (ids.length > 0) for (const r of await fetchByIds(schema, ids)) current.set(String(r.id), r);

    const written: { index: number; id: string }[] = [];
    for (const [index, r] of requests.entries()) {
      if (r.kind === 'create') {
        const known = idempotent.get(r.idempotencyKey);
        if (known !== undefined) {
          const before = current.get(known);
          if (!before) {
            results[index] = failure(notFound(tableId, known));
            continue;
          }
          // A create sent again (its answer lost, or its field values failed): the record it made
          // gets the fields.
          results[index] = await item(async () => {
            await update(
              schema,
              { kind: 'update', remoteId: known, fields: r.fields, idempotencyKey: r.idempotencyKey },
              before,
            );
            written.push({ index, id: known });
            return { ok: true, remoteId: known, postImage: null };
          });
          continue;
        }
        results[index] = await item(async () => {
          const made = await create(schema, r);
          if ('existingId' in made) {
            return { ...failure(made.error), existingId: made.existingId } as WriteResult;
          }
          written.push({ index, id: made.id });
          return { ok: true, remoteId: made.id, postImage: null };
        });
      } else if (r.kind === 'update') {
        const before = current.get(r.remoteId);
        if (!before) {
          results[index] = r.expected
            ? conflict(tableId, r.remoteId, null)
            : failure(notFound(tableId, r.remoteId));
          continue;
        }
        const live = toRecord(schema, before);
        if (changed(schema, live, r.expected)) {
          results[index] = conflict(tableId, r.remoteId, live);
          continue;
        }
        results[index] = await item(async () => {
          await update(schema, r, before);
          written.push({ index, id: r.remoteId });
          return { ok: true, remoteId: r.remoteId, postImage: live };
        });
      } else {
        if (r.expected && Object.keys(r.expected).length > 0) {
          const before = current.get(r.remoteId);
          if (!before) {
            results[index] = { ok: true, remoteId: r.remoteId, postImage: null };
            continue;
          }
          const live = toRecord(schema, before);
          if (changed(schema, live, r.expected)) {
            results[index] = conflict(tableId, r.remoteId, live);
            continue;
          }
        }
        results[index] = await item(async () => {
          await remove(schema, r.remoteId);
          return { ok: true, remoteId: r.remoteId, postImage: null };
        });
      }
    }
    // Post-images: what Affinity stored, read back in one request per 100 records.
    if (written.length > 0) {
      const after = new Map<string, Raw>();
      for (const r of await fetchByIds(
        schema,
        written.map((w) => w.id),
      ))
        after.set(String(r.id), r);
      for (const w of written) {
        const raw = after.get(w.id);
        const res = results[w.index];
        if (res?.ok)
          results[w.index] = { ok: true, remoteId: w.id, postImage: raw ? toRecord(schema, raw) : null };
      }
    }
    return results;
  }

  return {
    capabilities: AFFINITY_CAPABILITIES,
    client,
    describe,
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const schema = await describe(tableId);
      return (await fetchByIds(schema, ids)).map((r) => toRecord(schema, r));
    },
  };
}
