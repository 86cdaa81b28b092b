/**
 * Pipedrive as a sync side (a TableConnector), one table per entity type (`persons`,
 * `organizations`, `deals`; the table's remote id is the type), on Pipedrive's v2 API through the
 * SDK's HttpClient and RateLimiter (pipedrive-api.ts):
 * - schema: the standard attributes the connector knows (named as the account names them in
 *   `/api/v1/personFields` etc.) and the account's custom fields, whose keys are 40-character hashes
 *   (`custom_fields[hash]` in v2) shown under their names. Option fields (enum, set) store option
 *   ids: read as the options' labels and written back as ids. Emails and phones are lists of
 *   `{value, primary, label}`: the primary one is the canonical `email` / `phone` field (writing it
 *   replaces the primary and keeps the others). A record's owner and a deal's pipeline and stage are
 *   selects of the names of the company's users, pipelines and stages (pipedrive-choices.ts), read
 *   from the ids and written back as them.
 * - read: a full scan pages `GET /api/v2/{type}?limit=&cursor=` (<= 500); afterwards incremental reads
 *   page `updated_since` (>=, whole seconds) sorted by `update_time` ascending, from the previous
 *   read's start (Pipedrive's clock, the Date header) minus an overlap: the change signal is a
 *   second-granular time stamped when the write happens, so a write committed a little after its
 *   time stamp is still read (the engine drops the re-read echoes). An edit during the read moves
 *   its record further on in the same order, where the read still finds it.
 * - deletes: an entity read with `is_deleted` (a deal's `status=deleted` listing, which Pipedrive
 *   keeps 30 days) is reported as deleted. Persons and organizations leave the v2 listing when
 *   deleted, so the ids the connector has seen are kept (packed) in the cursor and, at the end of an
 *   incremental read, an id sweep lists the type's ids: the known ids no longer there are reported
 *   deleted. Small tables are swept on every read, large ones at most every `deleteSweepIntervalMs`.
 * - write: one entity per call (Pipedrive has no batch endpoints); each item gets its own result,
 *   so one refused value fails alone. Pipedrive has no conditional update: right before updates and
 *   deletes the records are read by id (`ids=`, 100 per call) and compared with `expected`; a record
 *   changed since Lockstep read it answers `version_conflict` with its current values and is not
 *   written (a delete spares it). What is left is the time between that read and the write. Creates
 *   are idempotent within the process (a map of idempotency keys): Pipedrive has no idempotency key.
 */

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
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
import {
  createPipedriveClient,
  PIPEDRIVE_RATE_LIMIT,
  type PipedriveClient,
  type PipedriveClientOptions,
  pipedriveUserMessage,
} from './pipedrive-api';
import {
  choiceOptions,
  fetchPipedriveChoices,
  type PipedriveChoiceKind,
  type PipedriveChoices,
} from './pipedrive-choices';

export const PIPEDRIVE_ENTITY_TYPES = ['persons', 'organizations', 'deals'] as const;
export type PipedriveEntityType = (typeof PIPEDRIVE_ENTITY_TYPES)[number];
/** Pipedrive's largest page (v2 list endpoints). */
export const PIPEDRIVE_MAX_PAGE_SIZE = 500;
/** Ids per `ids=` filter. */
export const PIPEDRIVE_IDS_PER_CALL = 100;
/** How far each incremental read reaches back before the previous read's start. */
export const PIPEDRIVE_READ_OVERLAP_MS = 10_000;
/** Tables up to this many ids are swept for deletes on every read (one request). */
const SMALL_TABLE = PIPEDRIVE_MAX_PAGE_SIZE;
const SCHEMA_MAX_AGE_MS = 60_000;

const FIELDS_PATH: Record<PipedriveEntityType, string> = {
  persons: 'personFields',
  organizations: 'organizationFields',
  deals: 'dealFields',
};

/** A field definition from `/api/v1/{entity}Fields`. */
export type PipedriveFieldDef = {
  id?: number | null;
  key: string;
  name: string;
  field_type: string;
  edit_flag?: boolean;
  active_flag?: boolean;
  mandatory_flag?: boolean;
  options?: { id: number | string; label: string }[] | null;
};

type Kind = 'plain' | 'int' | 'link' | 'named' | 'primary_email' | 'primary_phone' | 'address' | 'custom';

/** A synced field: a standard v2 attribute or a custom field. */
export type PipedriveField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  kind: Kind;
  /** Pipedrive's field_type (custom fields) or the attribute's. */
  pipedriveType: string;
  /** Option fields: id <-> label. */
  options?: { id: number | string; label: string }[];
  required?: boolean;
  /** A link to one entity (an organization, a person): the type it links to (its table's remote id). */
  references?: PipedriveEntityType;
};

type Standard = {
  key: string;
  /** The keys the same field may have in the v1 fields listing (its name as the account shows it). */
  v1Key?: string | string[];
  label: string;
  type: CanonicalFieldType;
  kind: Kind;
  readOnly?: boolean;
  choices?: string[];
  references?: PipedriveEntityType;
  /** An id attribute synced as the name it stands for (a user, a pipeline, a stage). */
  named?: PipedriveChoiceKind;
};

const ID: Standard = { key: 'id', label: 'ID', type: 'number', kind: 'int', readOnly: true };
const TIMES: Standard[] = [
  { key: 'add_time', label: 'Created', type: 'datetime', kind: 'plain', readOnly: true },
  { key: 'update_time', label: 'Updated', type: 'datetime', kind: 'plain', readOnly: true },
];
/** A person's or deal's organization: a linked record of Organizations. */
const ORGANIZATION: Standard = {
  key: 'org_id',
  v1Key: 'org_id',
  label: 'Organization',
  type: 'relations',
  kind: 'link',
  references: 'organizations',
};
/** A record's owner: one of the company's users, by name (written back as the user's id). */
const OWNER: Standard = {
  key: 'owner_id',
  v1Key: 'owner_id',
  label: 'Owner',
  type: 'number',
  kind: 'int',
  named: 'users',
};

/** The v2 attributes synced per type (others, e.g. label_ids and visible_to, are left alone). */
const STANDARD: Record<PipedriveEntityType, Standard[]> = {
  persons: [
    ID,
    { key: 'name', v1Key: 'name', label: 'Name', type: 'text', kind: 'plain' },
    { key: 'first_name', v1Key: 'first_name', label: 'First name', type: 'text', kind: 'plain' },
    { key: 'last_name', v1Key: 'last_name', label: 'Last name', type: 'text', kind: 'plain' },
    { key: 'email', v1Key: ['email', 'emails'], label: 'Email', type: 'email', kind: 'primary_email' },
    { key: 'phone', v1Key: ['phone', 'phones'], label: 'Phone', type: 'phone', kind: 'primary_phone' },
    ORGANIZATION,
    // Only given when the company has contact sync enabled (otherwise read as empty).
    { key: 'job_title', v1Key: 'job_title', label: 'Job title', type: 'text', kind: 'plain' },
    OWNER,
    ...TIMES,
  ],
  organizations: [
    ID,
    { key: 'name', v1Key: 'name', label: 'Name', type: 'text', kind: 'plain' },
    { key: 'address', v1Key: 'address', label: 'Address', type: 'text', kind: 'address' },
    OWNER,
    ...TIMES,
  ],
  deals: [
    ID,
    { key: 'title', v1Key: 'title', label: 'Title', type: 'text', kind: 'plain' },
    { key: 'value', v1Key: 'value', label: 'Value', type: 'number', kind: 'plain' },
    { key: 'currency', v1Key: 'currency', label: 'Currency', type: 'text', kind: 'plain' },
    {
      key: 'status',
      v1Key: 'status',
      label: 'Status',
      type: 'single_select',
      kind: 'plain',
      choices: ['open', 'won', 'lost'],
    },
    {
      key: 'pipeline_id',
      v1Key: ['pipeline_id', 'pipeline'],
      label: 'Pipeline',
      type: 'number',
      kind: 'int',
      named: 'pipelines',
    },
    { key: 'stage_id', v1Key: 'stage_id', label: 'Stage', type: 'number', kind: 'int', named: 'stages' },
    {
      key: 'person_id',
      v1Key: 'person_id',
      label: 'Contact person',
      type: 'relations',
      kind: 'link',
      references: 'persons',
    },
    ORGANIZATION,
    { ...OWNER, v1Key: ['user_id', 'owner_id'] },
    {
      key: 'expected_close_date',
      v1Key: 'expected_close_date',
      label: 'Expected close date',
      type: 'date',
      kind: 'plain',
    },
    { key: 'probability', v1Key: 'probability', label: 'Probability', type: 'number', kind: 'plain' },
    { key: 'lost_reason', v1Key: 'lost_reason', label: 'Lost reason', type: 'text', kind: 'plain' },
    { key: 'won_time', label: 'Won time', type: 'datetime', kind: 'plain', readOnly: true },
    { key: 'lost_time', label: 'Lost time', type: 'datetime', kind: 'plain', readOnly: true },
    { key: 'close_time', label: 'Closed time', type: 'datetime', kind: 'plain', readOnly: true },
    ...TIMES,
  ],
};

/** Pipedrive's custom field keys: 40 hex characters. */
export const isCustomKey = (key: string) => /^[0-9a-f]{40}$/i.test(key);

/** A custom field's Pipedrive type -> canonical type; undefined: not synced. */
export function customFieldType(fieldType: string): CanonicalFieldType | undefined {
  switch (fieldType) {
    case 'varchar':
    case 'varchar_auto':
    case 'text':
    case 'address':
    case 'time':
      return 'text';
    case 'double':
    case 'monetary':
    case 'user':
      return 'number';
    case 'org':
    case 'people':
      return 'relations';
    case 'enum':
      return 'single_select';
    case 'set':
      return 'multi_select';
    case 'date':
      return 'date';
    case 'phone':
      return 'phone';
    default:
      // daterange, timerange, visible_to and anything new: not synced.
      return undefined;
  }
}

/** The entity type a linking custom field points at (`org`, `people`). */
const CUSTOM_REFERENCES: Record<string, PipedriveEntityType> = { org: 'organizations', people: 'persons' };

/**
 * A standard attribute as a synced field. Given the company's users, pipelines and stages, an id
 * attribute that names one of them (owner, pipeline, stage) is a select of their names; without
 * them it stays the bare number.
 */
function standardField(
  s: Standard,
  def: PipedriveFieldDef | undefined,
  choices?: PipedriveChoices,
): PipedriveField {
  const field: PipedriveField = {
    remoteId: s.key,
    name: def?.name?.trim() || s.label,
    fieldType: s.type,
    readOnly: s.readOnly === true,
    kind: s.kind,
    pipedriveType: def?.field_type ?? s.type,
    ...(s.choices ? { options: s.choices.map((c) => ({ id: c, label: c })) } : {}),
    ...(s.references ? { references: s.references } : {}),
  };
  if (s.named && choices)
    return { ...field, fieldType: 'single_select', kind: 'named', options: choiceOptions(choices, s.named) };
  return field;
}

/**
 * The fields of a type: the standard attributes (named by the account) and its custom fields; with
 * `choices`, owners, pipelines and stages are selects of names (pipedrive-choices.ts).
 */
export function pipedriveFields(
  type: PipedriveEntityType,
  defs: PipedriveFieldDef[],
  choices?: PipedriveChoices,
): PipedriveField[] {
  const byKey = new Map(defs.map((d) => [d.key, d]));
  const out: PipedriveField[] = STANDARD[type].map((s) => {
    const keys = s.v1Key === undefined ? [] : Array.isArray(s.v1Key) ? s.v1Key : [s.v1Key];
    const def = keys.map((k) => byKey.get(k)).find((d) => d !== undefined);
    return standardField(s, def, choices);
  });
  const taken = new Set(out.map((f) => f.name.toLowerCase()));
  for (const d of defs) {
    if (!isCustomKey(d.key) || d.active_flag === false) continue;
    const fieldType = customFieldType(d.field_type);
    if (!fieldType) continue;
    // Two fields of one name stay apart (the second shows its key's start).
    let name = d.name?.trim() || d.key;
    if (taken.has(name.toLowerCase())) name = `${name} (${d.key.slice(0, 6)})`;
    taken.add(name.toLowerCase());
    out.push({
      remoteId: d.key,
      name,
      fieldType,
      readOnly: d.edit_flag === false,
      kind: 'custom',
      pipedriveType: d.field_type,
      ...(d.options ? { options: d.options } : {}),
      ...(d.mandatory_flag ? { required: true } : {}),
      ...(CUSTOM_REFERENCES[d.field_type] ? { references: CUSTOM_REFERENCES[d.field_type] } : {}),
    });
  }
  return out;
}

type Entity = Record<string, unknown> & {
  id: number;
  update_time?: string | null;
  is_deleted?: boolean;
  status?: string;
  custom_fields?: Record<string, unknown> | null;
};

type Contact = { value?: string | null; primary?: boolean; label?: string | null };

const primaryOf = (list: unknown): Contact | undefined => {
  if (!Array.isArray(list)) return undefined;
  const items = list as Contact[];
  return items.find((x) => x?.primary && x.value) ?? items.find((x) => x?.value);
};

/** A raw value (the attribute or the custom field's value) of an entity. */
function rawOf(field: PipedriveField, e: Entity): unknown {
  switch (field.kind) {
    case 'primary_email':
      return primaryOf(e.emails)?.value ?? null;
    case 'primary_phone':
      return primaryOf(e.phones)?.value ?? null;
    case 'address': {
      const a = e.address;
      return a && typeof a === 'object' ? ((a as { value?: string }).value ?? null) : (a ?? null);
    }
    case 'custom':
      return e.custom_fields?.[field.remoteId] ?? null;
    default: {
      const v = e[field.remoteId];
      // An id attribute may come as {id, name} (older shapes): the id.
      if (v && typeof v === 'object' && 'id' in (v as object)) return (v as { id: unknown }).id;
      return v ?? null;
    }
  }
}

const labelOf = (field: PipedriveField, id: unknown): string | null => {
  if (id === null || id === undefined || id === '') return null;
  const o = field.options?.find((x) => String(x.id) === String(id));
  // An option deleted since discovery reads as its id (not lost, not mistaken for another).
  return o ? o.label : String(id);
};

/** A Pipedrive value as a canonical value. */
export function toCanonical(field: PipedriveField, raw: unknown): CanonicalValue {
  let value: unknown = raw ?? null;
  if (
    (field.kind === 'custom' || field.fieldType === 'relations') &&
    value &&
    typeof value === 'object' &&
    !Array.isArray(value)
  ) {
    // monetary {value, currency}, address {value, ...parts}, a linked entity {id, name}.
    const o = value as Record<string, unknown>;
    value = 'value' in o ? o.value : 'id' in o ? o.id : null;
  }
  if (field.fieldType === 'single_select' && (field.kind === 'custom' || field.kind === 'named'))
    value = labelOf(field, value);
  // A link holds one entity's id: the list of that one id (a linked record), or none.
  if (field.fieldType === 'relations')
    value = value === null || value === undefined || value === '' || value === 0 ? null : [String(value)];
  if (field.fieldType === 'multi_select') {
    const list = Array.isArray(value)
      ? value
      : typeof value === 'string' && value !== ''
        ? value.split(',')
        : value === null
          ? null
          : [value];
    value = list ? list.map((id) => labelOf(field, id)).filter((x) => x !== null) : null;
    if (Array.isArray(value) && value.length === 0) value = null;
  }
  if (field.fieldType === 'datetime' && typeof value === 'string' && / /.test(value)) {
    // v1-style "YYYY-MM-DD HH:MM:SS" (UTC).
    value = `${value.replace(' ', 'T')}Z`;
  }
  const result = normalizeValue(field.fieldType, value);
  return result.ok ? result.value : null;
}

/** A value Pipedrive refuses before it is sent: the item fails alone with this text. */
function refused(field: PipedriveField, detail: string): ConnectorError {
  return new ConnectorError(
    'validation',
    `Pipedrive field ${field.remoteId}: ${detail}`,
    pipedriveUserMessage('validation', `${field.name}: ${detail}`),
  );
}

const optionIdFor = (field: PipedriveField, label: string): number | string => {
  const t = label.trim().toLowerCase();
  const o =
    field.options?.find((x) => x.label.trim().toLowerCase() === t) ??
    field.options?.find((x) => String(x.id) === label.trim());
  if (!o) {
    const known = (field.options ?? []).map((x) => x.label).join(', ');
    throw refused(field, `"${label}" is not one of its options${known ? ` (${known})` : ''}`);
  }
  return o.id;
};

/** A canonical value as the value Pipedrive takes for the field (custom field or attribute). */
export function fromCanonical(field: PipedriveField, value: CanonicalValue): unknown {
  if (value === null || value === undefined) return null;
  const asNumber = () => {
    const n = Number(value);
    if (!Number.isFinite(n)) throw refused(field, `"${String(value)}" is not a number`);
    return n;
  };
  switch (field.fieldType) {
    case 'number':
      return field.kind === 'int' || field.pipedriveType === 'user' ? Math.trunc(asNumber()) : asNumber();
    case 'relations': {
      // Pipedrive links one entity: the id as a number, none as null.
      const ids = (Array.isArray(value) ? value : [value]).map(String).filter((id) => id !== '');
      if (ids.length === 0) return null;
      if (ids.length > 1)
        throw refused(
          field,
          `links one ${field.references === 'persons' ? 'person' : 'organization'}, not ${ids.length}`,
        );
      const id = Number(ids[0]);
      if (!Number.isInteger(id) || id <= 0) throw refused(field, `"${ids[0]}" is not an id`);
      return id;
    }
    case 'single_select':
      // An owner, pipeline or stage is written as the id its name stands for (a number).
      if (field.kind === 'named') return Number(optionIdFor(field, String(value)));
      return field.kind === 'custom' ? optionIdFor(field, String(value)) : String(value);
    case 'multi_select': {
      const list = Array.isArray(value) ? value.map(String) : [String(value)];
      return list.map((label) => optionIdFor(field, label));
    }
    case 'date': {
      const r = normalizeValue('date', value);
      if (!r.ok) throw refused(field, `"${String(value)}" is not a date`);
      return r.value;
    }
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** The new list of emails / phones: the primary replaced (or added), the others kept. */
export function withPrimary(list: unknown, value: string | null, defaultLabel: string): Contact[] {
  const items = (Array.isArray(list) ? (list as Contact[]) : []).filter((x) => x?.value);
  const at = items.findIndex((x) => x.primary);
  const index = at >= 0 ? at : items.length > 0 ? 0 : -1;
  if (value === null) {
    const rest = items.filter((_, i) => i !== index).map((x) => ({ ...x, primary: false }));
    if (rest[0]) rest[0] = { ...rest[0], primary: true };
    return rest;
  }
  if (index < 0) return [{ value, primary: true, label: defaultLabel }];
  return items.map((x, i) =>
    i === index ? { ...x, value, primary: true } : { ...x, primary: false },
  ) as Contact[];
}

// --- cursors -----------------------------------------------------------------------------------

type ScanCursor = { v: 1; mode: 'scan'; page?: string; since: number; known: string };
type ChangesCursor = {
  v: 1;
  mode: 'changes';
  /** This read's lower bound (ms, Pipedrive's clock): `updated_since`. */
  since: number;
  /** The next read's lower bound: this read's start minus the overlap. */
  next: number;
  /** A read is under way (its listing or sweep continues on the next page). */
  active?: true;
  stage: 'changes' | 'sweep';
  /** Pipedrive's cursor into the current listing. */
  page?: string;
  /** Ids seen (packed): what a sweep compares against. */
  known: string;
  /** When the last sweep ran (ms). */
  sweptAt: number;
  /** Ids a sweep under way found so far (packed). */
  present?: string;
};
type ReadCursor = ScanCursor | ChangesCursor;

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.mode === 'scan' || c.mode === 'changes') && typeof c.since === 'number') return c;
  } catch {
    // fall through: an unreadable cursor means a full rescan
  }
  return null;
}

/** Numeric ids, sorted, delta-encoded and deflated: thousands of ids in a few kilobytes. */
export function packIds(ids: Iterable<string>): string {
  const list = [...new Set([...ids].map(Number))].filter(Number.isFinite).sort((a, b) => a - b);
  if (list.length === 0) return '';
  const deltas = list.map((n, i) => (i === 0 ? n : n - (list[i - 1] as number)).toString(36));
  return deflateRawSync(Buffer.from(deltas.join(','))).toString('base64url');
}
export function unpackIds(packed: string | undefined): Set<string> {
  if (!packed) return new Set();
  let at = 0;
  const out = new Set<string>();
  for (const d of inflateRawSync(Buffer.from(packed, 'base64url')).toString('utf8').split(',')) {
    if (d === '') continue;
    at += Number.parseInt(d, 36);
    out.add(String(at));
  }
  return out;
}

// --- the connector -----------------------------------------------------------------------------

export type PipedriveConnectorOptions = PipedriveClientOptions & {
  /** The read overlap (10 s). */
  overlapMs?: number;
  /** Large tables are swept for deletes at most this often (15 min). */
  deleteSweepIntervalMs?: number;
};

export type PipedriveConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  /** A type's field definitions from `/api/v1/{entity}Fields` (cached for a minute). */
  describe(type: string, refresh?: boolean): Promise<PipedriveFieldDef[]>;
  /** The synced fields of a type. */
  fieldsOf(type: string, refresh?: boolean): Promise<PipedriveField[]>;
  client: PipedriveClient;
};

export const PIPEDRIVE_CAPABILITIES: Capabilities = {
  batchSize: 50,
  incrementalRead: true,
  deleteDetection: 'events',
  // Webhooks v2 wake a run (webhooks.ts; the server makes them and takes their deliveries).
  webhooks: true,
  rateLimit: PIPEDRIVE_RATE_LIMIT,
  // Every record is given every synced field of its type, unset ones as null.
  recordsCarryEveryField: true,
};

export function entityTypeOf(tableRemoteId: string): PipedriveEntityType {
  const t = tableRemoteId.trim().toLowerCase();
  if ((PIPEDRIVE_ENTITY_TYPES as readonly string[]).includes(t)) return t as PipedriveEntityType;
  throw new ConnectorError(
    'not_found',
    `no Pipedrive entity type ${tableRemoteId}`,
    `Lockstep syncs Pipedrive persons, organizations and deals, not "${tableRemoteId}".`,
  );
}

type ListResponse = {
  success?: boolean;
  data: Entity[] | null;
  additional_data?: { next_cursor?: string | null };
};

export function createPipedriveConnector(options: PipedriveConnectorOptions): PipedriveConnector {
  const client = createPipedriveClient(options);
  const now = options.now ?? Date.now;
  const overlap = options.overlapMs ?? PIPEDRIVE_READ_OVERLAP_MS;
  const sweepEvery = options.deleteSweepIntervalMs ?? 15 * 60_000;
  const idempotent = new Map<string, string>();
  const schemas = new Map<string, { at: number; defs: PipedriveFieldDef[] }>();

  async function describe(table: string, refresh = false): Promise<PipedriveFieldDef[]> {
    const type = entityTypeOf(table);
    const known = schemas.get(type);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.defs;
    const defs: PipedriveFieldDef[] = [];
    for (let start = 0, pages = 0; pages < 50; pages++) {
      const { body } = await client.request<{
        data: PipedriveFieldDef[] | null;
        additional_data?: { pagination?: { more_items_in_collection?: boolean; next_start?: number } };
      }>({ method: 'GET', path: `/api/v1/${FIELDS_PATH[type]}`, query: { start, limit: 500 } });
      defs.push(...(body?.data ?? []));
      const p = body?.additional_data?.pagination;
      if (!p?.more_items_in_collection) break;
      start = p.next_start ?? start + (body?.data?.length ?? 0);
    }
    schemas.set(type, { at: now(), defs });
    return defs;
  }

  const choiceCache = new Map<PipedriveEntityType, { at: number; choices: PipedriveChoices }>();
  /** The company's users (and for deals its pipelines and stages), cached like the field definitions. */
  async function choicesOf(type: PipedriveEntityType, refresh = false): Promise<PipedriveChoices> {
    const known = choiceCache.get(type);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.choices;
    const choices = await fetchPipedriveChoices(client, type);
    choiceCache.set(type, { at: now(), choices });
    return choices;
  }

  async function fieldsOf(table: string, refresh = false): Promise<PipedriveField[]> {
    const type = entityTypeOf(table);
    return pipedriveFields(type, await describe(table, refresh), await choicesOf(type, refresh));
  }

  function toRecord(fields: PipedriveField[], e: Entity): RecordData {
    const out: Record<string, CanonicalValue> = {};
    for (const f of fields) out[f.remoteId] = toCanonical(f, rawOf(f, e));
    return { id: String(e.id), fields: out };
  }

  const isDeleted = (e: Entity) => e.is_deleted === true || e.status === 'deleted';

  function serverTime(headers: Headers): number {
    const t = Date.parse(headers.get('date') ?? '');
    return Number.isNaN(t) ? now() : t;
  }

  async function list(type: PipedriveEntityType, query: Record<string, string | number | undefined>) {
    const res = await client.request<ListResponse>({ method: 'GET', path: `/api/v2/${type}`, query });
    return {
      data: res.body?.data ?? [],
      next: res.body?.additional_data?.next_cursor ?? undefined,
      at: serverTime(res.headers),
    };
  }

  /** The entities with these ids as they are now (deleted and missing ones left out). */
  async function byIds(type: PipedriveEntityType, ids: string[]): Promise<Map<string, Entity>> {
    const out = new Map<string, Entity>();
    const unique = [...new Set(ids)].filter((id) => /^\d+$/.test(id));
    for (let i = 0; i < unique.length; i += PIPEDRIVE_IDS_PER_CALL) {
      const chunk = unique.slice(i, i + PIPEDRIVE_IDS_PER_CALL);
      const { data } = await list(type, {
        ids: chunk.join(','),
        limit: PIPEDRIVE_MAX_PAGE_SIZE,
        ...(type === 'deals' ? { status: 'open,won,lost' } : {}),
      });
      const wanted = new Set(chunk);
      for (const e of data) if (wanted.has(String(e.id)) && !isDeleted(e)) out.set(String(e.id), e);
    }
    return out;
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const type = entityTypeOf(tableId);
    const fields = await fieldsOf(type);
    const want = Math.max(1, opts.pageSize);
    const c = decode(cursor);

    if (!c || c.mode === 'scan') {
      const records: RecordData[] = [];
      const known = unpackIds(c?.known);
      let page = c?.page;
      let since = c?.since;
      do {
        const res = await list(type, {
          limit: Math.min(PIPEDRIVE_MAX_PAGE_SIZE, want - records.length),
          cursor: page,
        });
        since ??= res.at - overlap;
        for (const e of res.data) {
          if (isDeleted(e)) continue;
          known.add(String(e.id));
          records.push(toRecord(fields, e));
        }
        page = res.next ?? undefined;
      } while (page && records.length < want);
      const hasMore = page !== undefined;
      const start = since as number;
      const next: ReadCursor = hasMore
        ? { v: 1, mode: 'scan', page, since: start, known: packIds(known) }
        : {
            v: 1,
            mode: 'changes',
            since: start,
            next: start,
            stage: 'changes',
            known: packIds(known),
            sweptAt: start,
          };
      return {
        records,
        deletedIds: [],
        nextCursor: encode(next),
        hasMore,
        scanComplete: !c && !hasMore,
      };
    }

    // Incremental. An idle cursor starts a new read from where the previous one began (minus the
    // overlap); an active one continues this read's listing or sweep.
    let state: ChangesCursor = c.active
      ? c
      : { ...c, since: c.next, active: true, stage: 'changes', page: undefined, present: undefined };
    const fresh = !c.active;
    const records: RecordData[] = [];
    const deleted = new Set<string>();
    const known = unpackIds(state.known);
    let first = true;
    while (state.stage === 'changes' && records.length + deleted.size < want) {
      const res = await list(type, {
        updated_since: new Date(Math.floor(state.since / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
        sort_by: 'update_time',
        sort_direction: 'asc',
        limit: Math.min(PIPEDRIVE_MAX_PAGE_SIZE, want - records.length - deleted.size),
        cursor: state.page,
        // Deleted deals stay listed for 30 days under status=deleted: their deletes come with the changes.
        ...(type === 'deals' ? { status: 'open,won,lost,deleted' } : {}),
      });
      // The first request of a read fixes (by Pipedrive's clock) where the next read begins.
      if (fresh && first && state.page === undefined) state = { ...state, next: res.at - overlap };
      first = false;
      for (const e of res.data) {
        const id = String(e.id);
        if (isDeleted(e)) {
          deleted.add(id);
          known.delete(id);
          continue;
        }
        known.add(id);
        records.push(toRecord(fields, e));
      }
      if (res.next) state = { ...state, page: res.next };
      else {
        state = { ...state, stage: 'sweep', page: undefined };
        break;
      }
    }

    let finished = false;
    if (state.stage === 'sweep') {
      const due = known.size <= SMALL_TABLE || now() - state.sweptAt >= sweepEvery;
      if (!due) finished = true;
      else {
        // The id sweep: every id there is now; the known ones missing were deleted. Ids made after
        // the sweep passed them come with the next read's changes.
        const present = unpackIds(state.present);
        let page = state.page;
        let pages = 0;
        do {
          const res = await list(type, { limit: PIPEDRIVE_MAX_PAGE_SIZE, cursor: page, sort_by: 'id' });
          for (const e of res.data) if (!isDeleted(e)) present.add(String(e.id));
          page = res.next ?? undefined;
          pages++;
        } while (page && pages < 20);
        if (page) state = { ...state, page, present: packIds(present) };
        else {
          for (const id of known) if (!present.has(id)) deleted.add(id);
          for (const id of deleted) known.delete(id);
          finished = true;
          state = { ...state, sweptAt: now() };
        }
      }
    }
    // A record read in this page is not deleted (a restored id), but it stays known: the listing may
    // have read it just before it was deleted, and the sweep later in the same read found it gone.
    // Dropped from the known ids, that delete was reported by no later read.
    for (const r of records) if (deleted.delete(r.id)) known.add(r.id);
    const next: ChangesCursor = finished
      ? {
          v: 1,
          mode: 'changes',
          since: state.next,
          next: state.next,
          stage: 'changes',
          known: packIds(known),
          sweptAt: state.sweptAt,
        }
      : { ...state, known: packIds(known) };
    return {
      records,
      deletedIds: [...deleted],
      nextCursor: encode(next),
      hasMore: !finished,
      scanComplete: false,
    };
  }

  function failure(err: unknown): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), pipedriveUserMessage('transient'));
    return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
  }

  /** Errors that concern one record (a refused value, a missing id); others stop the write. */
  const itemLevel = (err: unknown) =>
    err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found');

  /** The request body for these canonical values; `current` gives the lists a primary replaces. */
  function bodyFor(
    type: PipedriveEntityType,
    fields: PipedriveField[],
    values: Record<string, CanonicalValue>,
    current: Entity | null,
  ): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    const custom: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(values)) {
      const f = fields.find((x) => x.remoteId === key);
      if (!f || f.readOnly) continue;
      switch (f.kind) {
        case 'primary_email': {
          const v = normalizeValue('email', value);
          if (!v.ok) throw refused(f, `"${String(value)}" is not an email address`);
          body.emails = withPrimary(current?.emails, v.value as string | null, 'work');
          break;
        }
        case 'primary_phone':
          body.phones = withPrimary(current?.phones, value === null ? null : String(value), 'work');
          break;
        case 'address':
          body.address = value === null ? null : { value: String(value) };
          break;
        case 'custom': {
          let v = fromCanonical(f, value);
          if (f.pipedriveType === 'monetary' && v !== null) {
            const was = current?.custom_fields?.[f.remoteId] as { currency?: string } | null | undefined;
            v = { value: v, currency: was?.currency ?? current?.currency ?? 'USD' };
          } else if (f.pipedriveType === 'address' && v !== null) v = { value: v };
          custom[f.remoteId] = v;
          break;
        }
        default:
          body[key] = fromCanonical(f, value);
      }
    }
    if (Object.keys(custom).length > 0) body.custom_fields = custom;
    // A new person needs a name: made from the first and last names when only they are given.
    if (!current && type === 'persons' && !body.name) {
      const name = [body.first_name, body.last_name].filter((x) => typeof x === 'string' && x).join(' ');
      if (name) body.name = name;
    }
    return body;
  }

  /** Whether the record still holds the expected values (compared as canonical values). */
  function holds(fields: PipedriveField[], e: Entity, expected: Record<string, CanonicalValue>): boolean {
    for (const [key, value] of Object.entries(expected)) {
      const f = fields.find((x) => x.remoteId === key);
      if (!f) continue;
      const want = normalizeValue(f.fieldType, value ?? null);
      if (!want.ok || !valuesEqual(want.value, toCanonical(f, rawOf(f, e)))) return false;
    }
    return true;
  }

  function conflict(tableId: string, id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `Pipedrive ${tableId} ${id} changed since it was read`,
        userFacingMessage: 'The Pipedrive record changed at the same time; Lockstep compares it again.',
      },
      current,
    };
  }

  const notFound = (tableId: string, id: string) =>
    failure(
      new ConnectorError(
        'not_found',
        `Pipedrive ${tableId} ${id} not found`,
        pipedriveUserMessage('not_found'),
      ),
    );

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const type = entityTypeOf(tableId);
    const fields = await fieldsOf(type);
    // Updates and deletes: the records as they are right now, read in one go (check-before-write,
    // and the emails / phones a new primary goes into).
    const touched = requests.flatMap((r) => (r.kind === 'create' ? [] : [r.remoteId]));
    const current = touched.length > 0 ? await byIds(type, touched) : new Map<string, Entity>();
    const results: WriteResult[] = [];
    for (const r of requests) {
      try {
        if (r.kind === 'create') {
          const made = idempotent.get(r.idempotencyKey);
          if (made) {
            // A retried create: answered with the record made the first time.
            const again = (await byIds(type, [made])).get(made);
            results.push(
              again
                ? { ok: true, remoteId: made, postImage: toRecord(fields, again) }
                : notFound(tableId, made),
            );
            continue;
          }
          // Not idempotent: sent twice it would create twice (Pipedrive has no idempotency key). A
          // 429 is retried (Pipedrive did not process it); a 5xx is not.
          const res = await client.request<{ data: Entity }>({
            method: 'POST',
            path: `/api/v2/${type}`,
            body: bodyFor(type, fields, r.fields, null),
          });
          const e = res.body.data;
          idempotent.set(r.idempotencyKey, String(e.id));
          results.push({ ok: true, remoteId: String(e.id), postImage: toRecord(fields, e) });
        } else if (r.kind === 'update') {
          const now_ = current.get(r.remoteId);
          if (!now_) {
            results.push(
              r.expected && Object.keys(r.expected).length > 0
                ? conflict(tableId, r.remoteId, null)
                : notFound(tableId, r.remoteId),
            );
            continue;
          }
          if (r.expected && !holds(fields, now_, r.expected)) {
            results.push(conflict(tableId, r.remoteId, toRecord(fields, now_)));
            continue;
          }
          const body = bodyFor(type, fields, r.fields, now_);
          let e: Entity = now_;
          if (Object.keys(body).length > 0) {
            // The same values set twice: safe to retry.
            const res = await client.request<{ data: Entity }>({
              method: 'PATCH',
              path: `/api/v2/${type}/${encodeURIComponent(r.remoteId)}`,
              body,
              idempotent: true,
            });
            e = res.body.data;
          }
          current.set(r.remoteId, e);
          results.push({ ok: true, remoteId: r.remoteId, postImage: toRecord(fields, e) });
        } else {
          const now_ = current.get(r.remoteId);
          // Gone already: done.
          if (!now_) {
            results.push({ ok: true, remoteId: r.remoteId, postImage: null });
            continue;
          }
          // Edited since it was read: spared, and the runtime reconciles it again.
          if (r.expected && !holds(fields, now_, r.expected)) {
            results.push(conflict(tableId, r.remoteId, toRecord(fields, now_)));
            continue;
          }
          try {
            await client.request({
              method: 'DELETE',
              path: `/api/v2/${type}/${encodeURIComponent(r.remoteId)}`,
            });
          } catch (err) {
            // Deleted in between: the outcome asked for.
            if (!(err instanceof ConnectorError && err.code === 'not_found')) throw err;
          }
          current.delete(r.remoteId);
          results.push({ ok: true, remoteId: r.remoteId, postImage: null });
        }
      } catch (err) {
        // Rate limits, outages and refused credentials concern the whole run: the runtime retries it
        // (creates already made are remembered by their idempotency keys).
        if (!itemLevel(err)) throw err;
        results.push(failure(err));
      }
    }
    return results;
  }

  return {
    capabilities: PIPEDRIVE_CAPABILITIES,
    client,
    describe,
    fieldsOf,
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const type = entityTypeOf(tableId);
      const fields = await fieldsOf(type);
      const found = await byIds(type, ids);
      return [...new Set(ids)].flatMap((id) => {
        const e = found.get(id);
        return e ? [toRecord(fields, e)] : [];
      });
    },
  };
}
