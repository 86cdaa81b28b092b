/**
 * The in-memory Pipedrive company: persons, organizations and deals (with custom fields),
 * pipelines and stages, users, tokens. Writes are validated as Pipedrive's v2 API does and
 * produce change events (for webhooks) whether they come from the API or from the simulator's
 * "in Pipedrive" helpers.
 */
import { randomUUID } from 'node:crypto';
import { type Clock, systemClock, TokenRegistry } from '../http.ts';
import {
  CUSTOM_FIELD_TYPES,
  customFieldKey,
  ENTITY_KINDS,
  type EntityKind,
  type FieldDef,
  type FieldType,
  SINGULAR,
  systemFields,
  v2Time,
} from './fields.ts';

export const ERROR_INFO = 'Please check developers.pipedrive.com for more information about Pipedrive API.';

/** An error answered in Pipedrive's body shape: {success:false, error, error_info, data, additional_data}. */
export class PipedriveApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
  get body(): Record<string, unknown> {
    return {
      success: false,
      error: this.message,
      ...this.extra,
      error_info: ERROR_INFO,
      data: null,
      additional_data: null,
    };
  }
}

export const badRequest = (message: string) => new PipedriveApiError(400, message);
export const notFound = (kind: EntityKind) =>
  new PipedriveApiError(404, `${SINGULAR[kind][0]?.toUpperCase()}${SINGULAR[kind].slice(1)} not found`);

export type ChangeSource = 'api' | 'app';

export type Entity = {
  kind: EntityKind;
  id: number;
  /** System field values in the v2 shape (emails as [{value, primary, label}], ...). */
  values: Record<string, unknown>;
  /** Custom field values by hash key: strings, numbers, option ids, arrays of option ids. */
  custom: Record<string, unknown>;
  addTime: number;
  updateTime: number;
  deleted: boolean;
  deletedAt?: number;
};

export type ChangeEvent = {
  action: 'create' | 'change' | 'delete';
  kind: EntityKind;
  id: number;
  source: ChangeSource;
  userId: number;
  at: number;
  correlationId: string;
  /** The entity after the change (null for delete). */
  data: Record<string, unknown> | null;
  /** For change: the previous values of the changed fields; for delete: the last state. */
  previous: Record<string, unknown> | null;
};

export type Stage = {
  id: number;
  name: string;
  pipeline_id: number;
  order_nr: number;
  deal_probability: number;
};
export type Pipeline = { id: number; name: string };
export type User = { id: number; name: string; email: string; active?: boolean };

export type CustomFieldInput = {
  name: string;
  field_type: FieldType;
  /** Labels of the options, for enum and set fields. */
  options?: string[];
};

export type PipedriveStateOptions = {
  clock?: Clock;
  companyId?: number;
  /** The company's Pipedrive domain name (`{companyDomain}.pipedrive.com`), for webhooks. */
  companyDomain?: string;
};

const VISIBLE_TO = [1, 3, 5, 7];

/** The writable system fields of each kind (the v2 request bodies' properties). */
const WRITABLE: Record<EntityKind, string[]> = {
  persons: [
    'name',
    'first_name',
    'last_name',
    'owner_id',
    'org_id',
    'emails',
    'phones',
    'visible_to',
    'label_ids',
    'job_title',
  ],
  organizations: ['name', 'owner_id', 'address', 'website', 'visible_to', 'label_ids'],
  deals: [
    'title',
    'owner_id',
    'person_id',
    'org_id',
    'pipeline_id',
    'stage_id',
    'value',
    'currency',
    'status',
    'probability',
    'lost_reason',
    'visible_to',
    'expected_close_date',
    'label_ids',
  ],
};

const REQUIRED: Record<EntityKind, string> = { persons: 'name', organizations: 'name', deals: 'title' };

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Parse an RFC 3339 timestamp (`2025-01-01T10:20:00Z`); undefined when it is not one. */
export function parseRfc3339(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

export class PipedriveState {
  readonly clock: Clock;
  readonly companyId: number;
  readonly companyDomain: string;
  readonly tokens: TokenRegistry;
  readonly entities: Record<EntityKind, Map<number, Entity>> = {
    persons: new Map(),
    organizations: new Map(),
    deals: new Map(),
  };
  readonly fields: Record<EntityKind, FieldDef[]>;
  readonly users: User[] = [
    { id: 21_000_001, name: 'Alex Admin', email: 'alex@example.com' },
    { id: 21_000_002, name: 'Sam Seller', email: 'sam@example.com' },
  ];
  readonly pipelines: Pipeline[] = [
    { id: 1, name: 'Sales' },
    { id: 2, name: 'Partnerships' },
  ];
  readonly stages: Stage[] = [
    { id: 1, name: 'Qualified', pipeline_id: 1, order_nr: 1, deal_probability: 10 },
    { id: 2, name: 'Contact Made', pipeline_id: 1, order_nr: 2, deal_probability: 20 },
    { id: 3, name: 'Proposal Made', pipeline_id: 1, order_nr: 3, deal_probability: 50 },
    { id: 4, name: 'Negotiations Started', pipeline_id: 1, order_nr: 4, deal_probability: 80 },
    { id: 5, name: 'Intro', pipeline_id: 2, order_nr: 1, deal_probability: 30 },
    { id: 6, name: 'Signed', pipeline_id: 2, order_nr: 2, deal_probability: 90 },
  ];
  private readonly nextId: Record<EntityKind, number> = { persons: 1, organizations: 1, deals: 1 };
  private nextFieldId = 9001;
  private nextOptionId = 1;
  private readonly listeners: ((e: ChangeEvent) => void)[] = [];

  constructor(options: PipedriveStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.companyId = options.companyId ?? 7_000_001;
    this.companyDomain = options.companyDomain ?? 'lockstep-sandbox';
    this.tokens = new TokenRegistry(this.clock);
    const now = this.clock.now();
    this.fields = {
      persons: systemFields('persons', now, 9001 - 300),
      organizations: systemFields('organizations', now, 9001 - 200),
      deals: systemFields('deals', now, 9001 - 100),
    };
  }

  get defaultUserId(): number {
    return this.users[0]?.id ?? 1;
  }

  onChange(listener: (e: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }

  // -------------------------------------------------------------------------------------------
  // Fields

  /** Add a custom field; its key is a 40-character hex hash, its options get numeric ids. */
  addCustomField(kind: EntityKind, input: CustomFieldInput): FieldDef {
    if (!CUSTOM_FIELD_TYPES.includes(input.field_type))
      throw badRequest(`Field type ${input.field_type} is not supported`);
    const hasOptions = input.field_type === 'enum' || input.field_type === 'set';
    if (hasOptions && (!input.options || input.options.length === 0))
      throw badRequest('Options are required for enum and set fields');
    const now = this.clock.now();
    const list = this.fields[kind];
    const def: FieldDef = {
      id: this.nextFieldId++,
      key: customFieldKey(kind, input.name, list.length),
      name: input.name,
      field_type: input.field_type,
      custom: true,
      readOnly: false,
      mandatory: false,
      options: hasOptions
        ? (input.options ?? []).map((label) => ({
            id: this.nextOptionId++,
            label,
            color: null,
            add_time: now,
          }))
        : null,
      order_nr: list.length,
      add_time: now,
      update_time: now,
    };
    list.push(def);
    return def;
  }

  customFields(kind: EntityKind): FieldDef[] {
    return this.fields[kind].filter((f) => f.custom);
  }

  field(kind: EntityKind, key: string): FieldDef | undefined {
    return this.fields[kind].find((f) => f.key === key);
  }

  /** The custom field of this kind with this name (for tests and seeds). */
  fieldByName(kind: EntityKind, name: string): FieldDef | undefined {
    return this.fields[kind].find((f) => f.name === name);
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  get(kind: EntityKind, id: number, { deleted = false } = {}): Entity | undefined {
    const e = this.entities[kind].get(id);
    if (!e || (e.deleted && !deleted)) return undefined;
    return e;
  }

  list(kind: EntityKind): Entity[] {
    return [...this.entities[kind].values()];
  }

  /** The entity in the v2 API's shape. `customKeys` limits `custom_fields` to those keys. */
  render(e: Entity, customKeys?: string[]): Record<string, unknown> {
    const custom: Record<string, unknown> = {};
    for (const f of this.customFields(e.kind)) {
      if (customKeys && !customKeys.includes(f.key)) continue;
      custom[f.key] = e.custom[f.key] ?? null;
    }
    const base = { id: e.id, ...e.values };
    const times = { add_time: v2Time(e.addTime), update_time: v2Time(e.updateTime), is_deleted: e.deleted };
    if (e.kind === 'persons') {
      return {
        id: e.id,
        name: e.values.name,
        first_name: e.values.first_name ?? null,
        last_name: e.values.last_name ?? null,
        owner_id: e.values.owner_id,
        org_id: e.values.org_id ?? null,
        ...times,
        emails: e.values.emails ?? [],
        phones: e.values.phones ?? [],
        visible_to: e.values.visible_to,
        label_ids: e.values.label_ids ?? [],
        picture_id: null,
        job_title: e.values.job_title ?? null,
        custom_fields: custom,
      };
    }
    if (e.kind === 'organizations') {
      return {
        id: e.id,
        name: e.values.name,
        owner_id: e.values.owner_id,
        ...times,
        visible_to: e.values.visible_to,
        address: e.values.address ?? null,
        label_ids: e.values.label_ids ?? [],
        website: e.values.website ?? null,
        custom_fields: custom,
      };
    }
    const t = (k: string) => (typeof e.values[k] === 'number' ? v2Time(e.values[k] as number) : null);
    return {
      ...base,
      person_id: e.values.person_id ?? null,
      org_id: e.values.org_id ?? null,
      probability: e.values.probability ?? null,
      lost_reason: e.values.lost_reason ?? null,
      expected_close_date: e.values.expected_close_date ?? null,
      label_ids: e.values.label_ids ?? [],
      ...times,
      stage_change_time: t('stage_change_time'),
      won_time: t('won_time'),
      lost_time: t('lost_time'),
      close_time: t('close_time'),
      is_archived: false,
      origin: 'API',
      custom_fields: custom,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Validation

  private checkLink(kind: EntityKind, id: unknown, field: string): number | null {
    if (id === null) return null;
    if (typeof id !== 'number' || !Number.isInteger(id)) throw badRequest(`${field} must be an integer`);
    if (!this.get(kind, id)) throw badRequest(`${SINGULAR[kind]} with id ${id} not found (${field})`);
    return id;
  }

  private checkContacts(value: unknown, field: string): { value: string; primary: boolean; label: string }[] {
    if (!Array.isArray(value)) throw badRequest(`${field} must be an array of {value, primary, label}`);
    const out = value.map((v) => {
      if (!isRecord(v) || typeof v.value !== 'string')
        throw badRequest(`${field} must be an array of {value, primary, label}`);
      if (v.primary !== undefined && typeof v.primary !== 'boolean')
        throw badRequest(`${field}.primary must be a boolean`);
      if (v.label !== undefined && typeof v.label !== 'string')
        throw badRequest(`${field}.label must be a string`);
      return {
        value: v.value,
        primary: v.primary === true,
        label: typeof v.label === 'string' ? v.label : 'work',
      };
    });
    if (out.length > 0 && !out.some((c) => c.primary) && out[0]) out[0].primary = true;
    return out;
  }

  private checkSystem(kind: EntityKind, key: string, value: unknown): unknown {
    if (value === null && key !== REQUIRED[kind] && key !== 'owner_id' && key !== 'stage_id') return null;
    switch (key) {
      case 'name':
      case 'title':
        if (typeof value !== 'string' || value.trim() === '')
          throw badRequest(`${key} must be a non-empty string`);
        return value;
      case 'first_name':
      case 'last_name':
      case 'job_title':
      case 'website':
      case 'lost_reason':
        if (typeof value !== 'string') throw badRequest(`${key} must be a string`);
        return value;
      case 'currency':
        if (typeof value !== 'string' || !/^[A-Z]{3}$/.test(value))
          throw badRequest('currency must be a 3-letter currency code');
        return value;
      case 'owner_id':
        if (!this.users.some((u) => u.id === value))
          throw badRequest(`User with id ${String(value)} not found`);
        return value;
      case 'org_id':
        return this.checkLink('organizations', value, key);
      case 'person_id':
        return this.checkLink('persons', value, key);
      case 'emails':
      case 'phones':
        return this.checkContacts(value, key);
      case 'visible_to':
        if (!VISIBLE_TO.includes(value as number)) throw badRequest('visible_to must be one of 1, 3, 5, 7');
        return value;
      case 'label_ids':
        if (!Array.isArray(value) || !value.every((v) => Number.isInteger(v)))
          throw badRequest('label_ids must be an array of integers');
        return value;
      case 'address':
        if (!isRecord(value) || typeof value.value !== 'string')
          throw badRequest('address must be an object with a value');
        return { ...value };
      case 'value':
      case 'probability':
        if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${key} must be a number`);
        return value;
      case 'status':
        if (value !== 'open' && value !== 'won' && value !== 'lost')
          throw badRequest('status must be one of open, won, lost');
        return value;
      case 'expected_close_date':
        if (typeof value !== 'string' || !DATE_RE.test(value))
          throw badRequest('expected_close_date must be a date (YYYY-MM-DD)');
        return value;
      case 'stage_id':
        if (!this.stages.some((s) => s.id === value))
          throw badRequest(`Stage with id ${String(value)} not found`);
        return value;
      case 'pipeline_id':
        if (!this.pipelines.some((p) => p.id === value))
          throw badRequest(`Pipeline with id ${String(value)} not found`);
        return value;
      default:
        throw badRequest(`Unknown field: ${key}`);
    }
  }

  private checkCustom(def: FieldDef, value: unknown): unknown {
    if (value === null) return null;
    const name = `custom field "${def.name}" (${def.key})`;
    switch (def.field_type) {
      case 'double':
        if (typeof value !== 'number' || !Number.isFinite(value))
          throw badRequest(`${name} must be a number`);
        return value;
      case 'monetary':
        if (!isRecord(value) || typeof value.value !== 'number' || typeof value.currency !== 'string')
          throw badRequest(`${name} must be an object {value, currency}`);
        return { value: value.value, currency: value.currency };
      case 'date':
        if (typeof value !== 'string' || !DATE_RE.test(value))
          throw badRequest(`${name} must be a date (YYYY-MM-DD)`);
        return value;
      case 'enum': {
        if (!Number.isInteger(value)) throw badRequest(`${name} takes an option id (integer)`);
        if (!def.options?.some((o) => o.id === value))
          throw badRequest(`Option with id ${String(value)} does not exist in ${name}`);
        return value;
      }
      case 'set': {
        if (!Array.isArray(value) || !value.every((v) => Number.isInteger(v)))
          throw badRequest(`${name} takes an array of option ids`);
        const bad = value.find((v) => !def.options?.some((o) => o.id === v));
        if (bad !== undefined) throw badRequest(`Option with id ${String(bad)} does not exist in ${name}`);
        return [...new Set(value as number[])];
      }
      default:
        if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
        return value;
    }
  }

  /** Validate a v2 request body into system and custom values; nothing is stored. */
  prepare(
    kind: EntityKind,
    input: unknown,
    mode: 'create' | 'update',
  ): { values: Record<string, unknown>; custom: Record<string, unknown>; addTime?: number } {
    if (!isRecord(input)) throw badRequest('The request body must be a JSON object');
    const values: Record<string, unknown> = {};
    const custom: Record<string, unknown> = {};
    let addTime: number | undefined;
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined) continue;
      if (key === 'custom_fields') {
        if (!isRecord(value)) throw badRequest('custom_fields must be an object');
        for (const [k, v] of Object.entries(value)) {
          const def = this.field(kind, k);
          if (!def?.custom) throw badRequest(`Unknown custom field: ${k}`);
          custom[k] = this.checkCustom(def, v);
        }
        continue;
      }
      if (key === 'add_time' && mode === 'create') {
        addTime = typeof value === 'string' ? parseRfc3339(value) : undefined;
        if (addTime === undefined) throw badRequest('add_time must be an RFC 3339 date-time');
        continue;
      }
      if (!WRITABLE[kind].includes(key)) {
        const def = this.field(kind, key);
        if (def?.readOnly) throw badRequest(`${key} is read-only`);
        throw badRequest(`Unknown field: ${key}`);
      }
      values[key] = this.checkSystem(kind, key, value);
    }
    if (mode === 'create' && values[REQUIRED[kind]] === undefined)
      throw badRequest(`${REQUIRED[kind]} is required`);
    return { values, custom, ...(addTime !== undefined ? { addTime } : {}) };
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /** Create an entity; `source` 'app' is an edit made "in Pipedrive" by a user. */
  create(
    kind: EntityKind,
    input: unknown,
    source: ChangeSource = 'app',
    userId = this.defaultUserId,
  ): Entity {
    const { values, custom, addTime } = this.prepare(kind, input, 'create');
    const now = this.clock.now();
    const defaults: Record<string, unknown> = { owner_id: userId, visible_to: 3 };
    if (kind === 'persons' && typeof values.name === 'string') {
      const [first, ...rest] = values.name.trim().split(/\s+/);
      defaults.first_name = first ?? null;
      defaults.last_name = rest.length > 0 ? rest.join(' ') : null;
    }
    if (kind === 'deals') {
      Object.assign(defaults, { value: 0, currency: 'USD', status: 'open' });
      this.placeDeal(values, undefined);
      values.stage_change_time = now;
    }
    const e: Entity = {
      kind,
      id: this.nextId[kind]++,
      values: { ...defaults, ...values },
      custom: Object.fromEntries(Object.entries(custom).filter(([, v]) => v !== null)),
      addTime: addTime ?? now,
      updateTime: now,
      deleted: false,
    };
    if (kind === 'deals') this.closeTimes(e, undefined, now);
    this.entities[kind].set(e.id, e);
    this.emit({
      action: 'create',
      kind,
      id: e.id,
      source,
      userId,
      at: now,
      correlationId: randomUUID(),
      data: this.render(e),
      previous: null,
    });
    return e;
  }

  /** Deals: stage and pipeline agree; a stage alone sets its pipeline, a pipeline alone its first stage. */
  private placeDeal(values: Record<string, unknown>, current: Entity | undefined): void {
    const stageId = values.stage_id as number | undefined;
    const pipelineId = values.pipeline_id as number | undefined;
    if (stageId !== undefined) {
      const stage = this.stages.find((s) => s.id === stageId);
      if (pipelineId !== undefined && stage?.pipeline_id !== pipelineId)
        throw badRequest(`Stage ${stageId} does not belong to pipeline ${pipelineId}`);
      values.pipeline_id = stage?.pipeline_id;
      return;
    }
    if (pipelineId !== undefined || !current) {
      const pid = pipelineId ?? this.pipelines[0]?.id;
      const first = this.stages
        .filter((s) => s.pipeline_id === pid)
        .sort((a, b) => a.order_nr - b.order_nr)[0];
      values.pipeline_id = pid;
      values.stage_id = first?.id;
    }
  }

  private closeTimes(e: Entity, previousStatus: unknown, now: number): void {
    const status = e.values.status;
    if (status === previousStatus) return;
    e.values.won_time = status === 'won' ? now : null;
    e.values.lost_time = status === 'lost' ? now : null;
    e.values.close_time = status === 'won' || status === 'lost' ? now : null;
  }

  update(
    kind: EntityKind,
    id: number,
    input: unknown,
    source: ChangeSource = 'app',
    userId = this.defaultUserId,
  ): Entity {
    const e = this.get(kind, id);
    if (!e) throw notFound(kind);
    const { values, custom } = this.prepare(kind, input, 'update');
    if (kind === 'deals') this.placeDeal(values, e);
    const previous: Record<string, unknown> = {};
    const prevCustom: Record<string, unknown> = {};
    const before = this.render(e);
    for (const [k, v] of Object.entries(values)) {
      if (!sameValue(e.values[k], v)) previous[k] = before[k] ?? null;
    }
    for (const [k, v] of Object.entries(custom)) {
      if (!sameValue(e.custom[k], v)) prevCustom[k] = e.custom[k] ?? null;
    }
    if (Object.keys(prevCustom).length > 0) previous.custom_fields = prevCustom;
    // Nothing really changes: no new update_time, no webhook.
    if (Object.keys(previous).length === 0) return e;
    const now = this.clock.now();
    const previousStatus = e.values.status;
    Object.assign(e.values, values);
    for (const [k, v] of Object.entries(custom)) {
      if (v === null) delete e.custom[k];
      else e.custom[k] = v;
    }
    if (kind === 'deals') {
      if ('stage_id' in previous) e.values.stage_change_time = now;
      this.closeTimes(e, previousStatus, now);
    }
    e.updateTime = now;
    this.emit({
      action: 'change',
      kind,
      id,
      source,
      userId,
      at: now,
      correlationId: randomUUID(),
      data: this.render(e),
      previous,
    });
    return e;
  }

  /** Mark as deleted (Pipedrive keeps deleted items for 30 days). */
  remove(kind: EntityKind, id: number, source: ChangeSource = 'app', userId = this.defaultUserId): Entity {
    const e = this.get(kind, id);
    if (!e) throw notFound(kind);
    const now = this.clock.now();
    const last = this.render(e);
    e.deleted = true;
    e.deletedAt = now;
    e.updateTime = now;
    this.emit({
      action: 'delete',
      kind,
      id,
      source,
      userId,
      at: now,
      correlationId: randomUUID(),
      data: null,
      previous: last,
    });
    return e;
  }
}

export { ENTITY_KINDS, type EntityKind };
