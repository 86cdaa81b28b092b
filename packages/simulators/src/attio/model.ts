/**
 * The in-memory Attio workspace behind the simulator: objects with typed attributes, records
 * whose values keep their history (an overwritten value stays with `active_until` set), lists
 * with entries, webhooks and tokens. Routes (routes.ts) turn HTTP into calls here; tests call the
 * same methods (through the simulator's helpers) to edit "in the app" as a workspace member.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, seededRandom, systemClock, TokenRegistry } from '../http.ts';
import {
  type AttributeDef,
  type AttributeType,
  attioTimestamp,
  isUuid,
  normalizeValue,
  type Payload,
  type SelectOptionDef,
  type StatusDef,
  type ValueContext,
  ValueError,
  valueKey,
} from './values.ts';

// ---------------------------------------------------------------------------------------------
// Errors: Attio's body is {status_code, type, code, message}

export class AttioApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { status_code: number; type: string; code: string; message: string },
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

export function apiError(status: number, type: string, code: string, message: string): AttioApiError {
  return new AttioApiError(status, { status_code: status, type, code, message });
}

export const invalidRequest = (status: number, code: string, message: string) =>
  apiError(status, 'invalid_request_error', code, message);

export const notFound = (message: string) => invalidRequest(404, 'not_found', message);

// ---------------------------------------------------------------------------------------------
// State types

export type ActorType = 'api-token' | 'workspace-member' | 'system' | 'app';
export type Actor = { type: ActorType; id?: string };

export type StoredValue = {
  payload: Payload;
  activeFrom: number;
  activeUntil: number | null;
  actor: Actor;
};

export type ObjectDef = {
  id: string;
  api_slug: string;
  singular_noun: string;
  plural_noun: string;
  created_at: number;
};

export type ListDef = {
  id: string;
  api_slug: string;
  name: string;
  parentObject: string;
  createdBy: string;
  created_at: number;
};

export type RecordRow = {
  id: string;
  object: string;
  createdAt: number;
  values: Map<string, StoredValue[]>;
};

export type EntryRow = {
  id: string;
  list: string;
  parentObject: string;
  parentRecordId: string;
  createdAt: number;
  values: Map<string, StoredValue[]>;
};

export type Member = { id: string; first_name: string; last_name: string; email: string; createdAt: number };

export type WebhookFilterCondition = { field: string; operator: 'equals' | 'not_equals'; value: string };
export type WebhookSubscription = {
  event_type: string;
  filter: { $and: WebhookFilterCondition[] } | { $or: WebhookFilterCondition[] } | null;
};
export type Webhook = {
  id: string;
  target_url: string;
  subscriptions: WebhookSubscription[];
  status: 'active' | 'degraded' | 'inactive';
  created_at: number;
  secret: string;
};

/** One webhook event as Attio sends it (inside `{webhook_id, events: [...]}`). */
export type ChangeEvent = {
  event_type: string;
  id: Record<string, string>;
  actor: Actor;
  parent_object_id?: string;
  parent_record_id?: string;
};

export type WriteMode = 'create' | 'append' | 'overwrite';

export type AttioStateOptions = {
  clock?: Clock;
  /** Seed for reproducible ids (default: random). */
  idSeed?: number;
  workspace?: { name?: string; slug?: string };
};

type Container = { values: Map<string, StoredValue[]> };

export const DEFAULT_RECORD_LIMIT = 500;

const iso = attioTimestamp;

export class AttioState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly workspace: { id: string; name: string; slug: string };
  readonly members: Member[] = [];
  readonly objects: ObjectDef[] = [];
  readonly lists: ListDef[] = [];
  /** Attributes by parent (object or list) id. */
  readonly attributes = new Map<string, AttributeDef[]>();
  readonly records = new Map<string, RecordRow>();
  readonly entries = new Map<string, EntryRow>();
  readonly webhooks = new Map<string, Webhook>();
  /** Token -> the token's own id (actor id of API writes) and OAuth client id. */
  readonly tokenMeta = new Map<string, { tokenId: string; clientId: string; issuedAt: number }>();
  private readonly random: () => number;
  private readonly listeners: ((e: ChangeEvent) => void)[] = [];

  constructor(options: AttioStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random =
      options.idSeed !== undefined
        ? seededRandom(options.idSeed)
        : () => randomBytes(4).readUInt32BE(0) / 2 ** 32;
    this.tokens = new TokenRegistry(this.clock);
    this.workspace = {
      id: this.uuid(),
      name: options.workspace?.name ?? 'Lockstep Demo',
      slug: options.workspace?.slug ?? 'lockstep-demo',
    };
  }

  /** A version-4 UUID from the (seedable) generator. */
  uuid(): string {
    const hex: string[] = [];
    for (let i = 0; i < 32; i++) hex.push(Math.floor(this.random() * 16).toString(16));
    hex[12] = '4';
    hex[16] = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
    const h = hex.join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  secret(): string {
    let s = '';
    for (let i = 0; i < 64; i++) s += Math.floor(this.random() * 16).toString(16);
    return s;
  }

  onChange(listener: (e: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }

  // -------------------------------------------------------------------------------------------
  // Schema

  addMember(first: string, last: string, email: string): Member {
    const m = {
      id: this.uuid(),
      first_name: first,
      last_name: last,
      email: email.toLowerCase(),
      createdAt: this.clock.now(),
    };
    this.members.push(m);
    return m;
  }

  addObject(api_slug: string, singular: string, plural: string): ObjectDef {
    const o = {
      id: this.uuid(),
      api_slug,
      singular_noun: singular,
      plural_noun: plural,
      created_at: this.clock.now(),
    };
    this.objects.push(o);
    this.attributes.set(o.id, []);
    this.addSystemAttributes({ kind: 'object', id: o.id });
    return o;
  }

  addList(api_slug: string, name: string, parentObject: string, createdBy: string): ListDef {
    const l = { id: this.uuid(), api_slug, name, parentObject, createdBy, created_at: this.clock.now() };
    this.lists.push(l);
    this.attributes.set(l.id, []);
    this.addSystemAttributes({ kind: 'list', id: l.id });
    return l;
  }

  private addSystemAttributes(parent: AttributeDef['parent']): void {
    if (parent.kind === 'object') {
      this.addAttribute(parent, 'record_id', 'Record ID', 'text', {
        system: true,
        writable: false,
        unique: true,
      });
    } else {
      this.addAttribute(parent, 'entry_id', 'Entry ID', 'text', {
        system: true,
        writable: false,
        unique: true,
      });
    }
    this.addAttribute(parent, 'created_at', 'Created at', 'timestamp', { system: true, writable: false });
    this.addAttribute(parent, 'created_by', 'Created by', 'actor-reference', {
      system: true,
      writable: false,
    });
  }

  addAttribute(
    parent: AttributeDef['parent'],
    api_slug: string,
    title: string,
    type: AttributeType,
    o: {
      system?: boolean;
      writable?: boolean;
      required?: boolean;
      unique?: boolean;
      multiselect?: boolean;
      options?: string[];
      statuses?: string[];
      allowedObjects?: string[];
      defaultCurrency?: string;
      description?: string;
    } = {},
  ): AttributeDef {
    const options: SelectOptionDef[] = (o.options ?? []).map((title) => ({
      id: this.uuid(),
      title,
      is_archived: false,
    }));
    const statuses: StatusDef[] = (o.statuses ?? []).map((title, i, all) => ({
      id: this.uuid(),
      title,
      is_archived: false,
      celebration_enabled: i === all.length - 2,
      target_time_in_status: null,
    }));
    const writable = o.writable ?? type !== 'interaction';
    const attr: AttributeDef = {
      id: this.uuid(),
      parent,
      title,
      description: o.description ?? null,
      api_slug,
      type,
      is_system_attribute: o.system ?? false,
      is_writable: writable,
      is_required: o.required ?? false,
      is_unique: o.unique ?? false,
      is_multiselect: o.multiselect ?? false,
      // Attio keeps history for written attributes; system and enriched ones have none.
      historic: writable,
      options,
      statuses,
      ...(o.allowedObjects ? { allowedObjects: o.allowedObjects } : {}),
      ...(type === 'currency' ? { defaultCurrency: o.defaultCurrency ?? 'USD' } : {}),
      created_at: this.clock.now(),
    };
    this.attributes.get(parent.id)?.push(attr);
    return attr;
  }

  object(slugOrId: string): ObjectDef {
    const o = this.objects.find((x) => x.api_slug === slugOrId || x.id === slugOrId);
    if (!o) throw notFound(`Object with slug/ID "${slugOrId}" not found.`);
    return o;
  }

  list(slugOrId: string): ListDef {
    const l = this.lists.find((x) => x.api_slug === slugOrId || x.id === slugOrId);
    if (!l) throw notFound(`List with slug/ID "${slugOrId}" not found.`);
    return l;
  }

  attributesOf(parentId: string): AttributeDef[] {
    return this.attributes.get(parentId) ?? [];
  }

  attribute(parentId: string, slugOrId: string): AttributeDef | undefined {
    return this.attributesOf(parentId).find((a) => a.api_slug === slugOrId || a.id === slugOrId);
  }

  private valueContext(): ValueContext {
    return {
      recordExists: (objectSlug, id) => this.records.get(id)?.object === objectSlug,
      objectSlugOf: (s) => this.objects.find((o) => o.api_slug === s || o.id === s)?.api_slug,
      memberIdByEmail: (email) => this.members.find((m) => m.email === email.toLowerCase())?.id,
      memberExists: (id) => this.members.some((m) => m.id === id),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Value writes (records and entries share them)

  /**
   * Validate every input value first (nothing is written when one is bad), then apply them:
   * `create` and `overwrite` make the active values exactly the given ones (a replaced value
   * keeps its row with `active_until`), `append` adds to multiselect attributes (prepended, as
   * Attio does) and replaces single-value ones. Returns the ids of the attributes that changed.
   */
  private writeValues(
    parentId: string,
    target: Container,
    siblings: () => Iterable<Container & { id: string }>,
    input: unknown,
    mode: WriteMode,
    actor: Actor,
    ownId: string,
  ): string[] {
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw invalidRequest(
        400,
        'validation_type',
        'Body payload validation error: values must be an object.',
      );
    const ctx = this.valueContext();
    const planned: { attr: AttributeDef; payloads: Payload[]; appendOnly: boolean }[] = [];
    for (const [key, raw] of Object.entries(input as Record<string, unknown>)) {
      const attr = this.attribute(parentId, key);
      if (!attr) throw invalidRequest(400, 'value_not_found', `Cannot find attribute with slug/ID "${key}".`);
      if (!attr.is_writable)
        throw invalidRequest(
          400,
          'validation_type',
          `Cannot write to attribute with slug "${attr.api_slug}": it is a read-only ${attr.is_system_attribute ? 'system ' : ''}attribute.`,
        );
      const items = raw === null ? [] : Array.isArray(raw) ? raw : [raw];
      if (!attr.is_multiselect && items.length > 1)
        throw invalidRequest(
          400,
          'validation_type',
          `Attribute with slug "${attr.api_slug}" is not multiselect: give at most one value.`,
        );
      let payloads: Payload[];
      try {
        payloads = items.map((item) => normalizeValue(attr, item, ctx));
      } catch (err) {
        if (err instanceof ValueError) throw invalidRequest(400, err.code, err.message);
        throw err;
      }
      const seen = new Set<string>();
      payloads = payloads.filter((p) => {
        const k = valueKey(attr, p);
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
      planned.push({ attr, payloads, appendOnly: mode === 'append' && attr.is_multiselect });
    }

    // Required attributes: given on create, never cleared afterwards.
    for (const attr of this.attributesOf(parentId)) {
      if (!attr.is_required) continue;
      const p = planned.find((x) => x.attr.id === attr.id);
      const missing =
        mode === 'create'
          ? !p || p.payloads.length === 0
          : p !== undefined && p.payloads.length === 0 && !p.appendOnly;
      if (missing)
        throw invalidRequest(
          400,
          'missing_value',
          `Required value for attribute with ID "${attr.id}" was not provided.`,
        );
    }

    // Unique attributes: no other record may hold one of the values.
    for (const { attr, payloads } of planned) {
      if (!attr.is_unique) continue;
      for (const p of payloads) {
        const k = valueKey(attr, p);
        for (const other of siblings()) {
          if (other.id === ownId) continue;
          const taken = (other.values.get(attr.id) ?? []).some(
            (v) => v.activeUntil === null && valueKey(attr, v.payload) === k,
          );
          if (taken)
            throw invalidRequest(
              400,
              'uniqueness_conflict',
              `The value "${k}" provided for attribute with slug "${attr.api_slug}" is already in use by record "${other.id}".`,
            );
        }
      }
    }

    const now = this.clock.now();
    const changed: string[] = [];
    for (const { attr, payloads, appendOnly } of planned) {
      const all = target.values.get(attr.id) ?? [];
      const active = all.filter((v) => v.activeUntil === null);
      const inactive = all.filter((v) => v.activeUntil !== null);
      const activeKeys = new Map(active.map((v) => [valueKey(attr, v.payload), v]));
      let nextActive: StoredValue[];
      let ended: StoredValue[] = [];
      if (appendOnly) {
        const added = payloads
          .filter((p) => !activeKeys.has(valueKey(attr, p)))
          .map((payload) => ({ payload, activeFrom: now, activeUntil: null, actor }));
        nextActive = [...added, ...active];
      } else {
        const wanted = new Set(payloads.map((p) => valueKey(attr, p)));
        ended = active.filter((v) => !wanted.has(valueKey(attr, v.payload)));
        nextActive = payloads.map(
          (payload) =>
            activeKeys.get(valueKey(attr, payload)) ?? { payload, activeFrom: now, activeUntil: null, actor },
        );
      }
      const isChange = ended.length > 0 || nextActive.some((v) => !active.includes(v));
      if (!isChange) continue;
      for (const v of ended) v.activeUntil = now;
      target.values.set(attr.id, [...nextActive, ...(attr.historic ? [...ended, ...inactive] : [])]);
      changed.push(attr.id);
    }
    return changed;
  }

  private setSystemValues(parentId: string, target: Container, id: string, actor: Actor, now: number): void {
    const sys = (slug: string, payload: Payload) => {
      const attr = this.attribute(parentId, slug);
      if (attr) target.values.set(attr.id, [{ payload, activeFrom: now, activeUntil: null, actor }]);
    };
    sys(this.lists.some((l) => l.id === parentId) ? 'entry_id' : 'record_id', { value: id });
    sys('created_at', { value: iso(now) });
    sys('created_by', { referenced_actor_type: actor.type, referenced_actor_id: actor.id ?? null });
  }

  // -------------------------------------------------------------------------------------------
  // Records

  private recordsOf(objectSlug: string): RecordRow[] {
    return [...this.records.values()].filter((r) => r.object === objectSlug);
  }

  record(objectSlugOrId: string, recordId: string): RecordRow {
    const o = this.object(objectSlugOrId);
    const r = this.records.get(recordId);
    if (!r || r.object !== o.api_slug) throw notFound(`Record with ID "${recordId}" not found.`);
    return r;
  }

  queryableRecords(objectSlugOrId: string): RecordRow[] {
    return this.recordsOf(this.object(objectSlugOrId).api_slug);
  }

  createRecord(objectSlugOrId: string, values: unknown, actor: Actor): RecordRow {
    const o = this.object(objectSlugOrId);
    const now = this.clock.now();
    const row: RecordRow = { id: this.uuid(), object: o.api_slug, createdAt: now, values: new Map() };
    this.writeValues(o.id, row, () => this.recordsOf(o.api_slug), values, 'create', actor, row.id);
    this.setSystemValues(o.id, row, row.id, actor, now);
    this.records.set(row.id, row);
    this.emit({ event_type: 'record.created', id: this.recordEventId(o, row.id), actor });
    return row;
  }

  updateRecord(
    objectSlugOrId: string,
    recordId: string,
    values: unknown,
    mode: 'append' | 'overwrite',
    actor: Actor,
  ): RecordRow {
    const o = this.object(objectSlugOrId);
    const row = this.record(o.api_slug, recordId);
    const changed = this.writeValues(
      o.id,
      row,
      () => this.recordsOf(o.api_slug),
      values,
      mode,
      actor,
      row.id,
    );
    for (const attributeId of changed) {
      this.emit({
        event_type: 'record.updated',
        id: { ...this.recordEventId(o, row.id), attribute_id: attributeId },
        actor,
      });
    }
    return row;
  }

  /**
   * Assert (upsert) on a unique attribute: the record holding one of the given values is
   * updated (multiselect values of the matching attribute are added, other multiselects
   * overwritten), or a new record is created.
   */
  assertRecord(
    objectSlugOrId: string,
    matching: string,
    values: unknown,
    actor: Actor,
  ): { row: RecordRow; created: boolean } {
    const o = this.object(objectSlugOrId);
    const attr = this.attribute(o.id, matching);
    if (!attr)
      throw invalidRequest(
        400,
        'value_not_found',
        `No attribute was found for matching_attribute slug/ID "${matching}".`,
      );
    if (!attr.is_unique)
      throw invalidRequest(
        400,
        'validation_type',
        `The matching_attribute "${matching}" must be a unique attribute.`,
      );
    const input = (typeof values === 'object' && values !== null ? values : {}) as Record<string, unknown>;
    const rawKey = Object.keys(input).find((k) => k === attr.api_slug || k === attr.id);
    const raw = rawKey === undefined ? undefined : input[rawKey];
    const items = raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : [raw];
    if (items.length === 0)
      throw invalidRequest(
        400,
        'missing_value',
        `Required value for matching attribute with slug "${attr.api_slug}" was not provided.`,
      );
    let keys: string[];
    try {
      keys = items.map((i) => valueKey(attr, normalizeValue(attr, i, this.valueContext())));
    } catch (err) {
      if (err instanceof ValueError) throw invalidRequest(400, err.code, err.message);
      throw err;
    }
    const found = this.recordsOf(o.api_slug).filter((r) =>
      (r.values.get(attr.id) ?? []).some(
        (v) => v.activeUntil === null && keys.includes(valueKey(attr, v.payload)),
      ),
    );
    if (found.length > 1)
      throw invalidRequest(
        400,
        'multiple_match_results',
        `Multiple records match the given value for "${attr.api_slug}".`,
      );
    const existing = found[0];
    if (!existing) return { row: this.createRecord(o.api_slug, values, actor), created: true };
    // The matching attribute itself is only added to; everything else is overwritten.
    const { [rawKey as string]: matchValue, ...rest } = input;
    if (attr.is_multiselect)
      this.updateRecord(o.api_slug, existing.id, { [attr.api_slug]: matchValue }, 'append', actor);
    this.updateRecord(o.api_slug, existing.id, attr.is_multiselect ? rest : input, 'overwrite', actor);
    return { row: existing, created: false };
  }

  deleteRecord(objectSlugOrId: string, recordId: string, actor: Actor): void {
    const o = this.object(objectSlugOrId);
    const row = this.record(o.api_slug, recordId);
    this.records.delete(row.id);
    // A record's list entries go with it.
    for (const e of [...this.entries.values()]) {
      if (e.parentRecordId === row.id) this.deleteEntry(e.list, e.id, actor);
    }
    this.emit({ event_type: 'record.deleted', id: this.recordEventId(o, row.id), actor });
  }

  private recordEventId(o: ObjectDef, recordId: string): Record<string, string> {
    return { workspace_id: this.workspace.id, object_id: o.id, record_id: recordId };
  }

  // -------------------------------------------------------------------------------------------
  // List entries

  private entriesOf(listId: string): EntryRow[] {
    return [...this.entries.values()].filter((e) => e.list === listId);
  }

  queryableEntries(listSlugOrId: string): EntryRow[] {
    return this.entriesOf(this.list(listSlugOrId).id);
  }

  entry(listSlugOrId: string, entryId: string): EntryRow {
    const l = this.list(listSlugOrId);
    const e = this.entries.get(entryId);
    if (!e || e.list !== l.id) throw notFound(`List entry with ID "${entryId}" not found.`);
    return e;
  }

  createEntry(
    listSlugOrId: string,
    parentObject: string,
    parentRecordId: string,
    values: unknown,
    actor: Actor,
  ): EntryRow {
    const l = this.list(listSlugOrId);
    const parentSlug = this.objects.find(
      (o) => o.api_slug === parentObject || o.id === parentObject,
    )?.api_slug;
    if (!parentSlug || parentSlug !== l.parentObject)
      throw notFound(`Parent object with slug/ID "${parentObject}" not found.`);
    if (this.records.get(parentRecordId)?.object !== parentSlug)
      throw notFound(`Parent record with slug/ID "${parentRecordId}" not found.`);
    const now = this.clock.now();
    const row: EntryRow = {
      id: this.uuid(),
      list: l.id,
      parentObject: parentSlug,
      parentRecordId,
      createdAt: now,
      values: new Map(),
    };
    this.writeValues(l.id, row, () => this.entriesOf(l.id), values ?? {}, 'create', actor, row.id);
    this.setSystemValues(l.id, row, row.id, actor, now);
    this.entries.set(row.id, row);
    this.emit({ event_type: 'list-entry.created', ...this.entryEvent(l, row), actor });
    return row;
  }

  updateEntry(
    listSlugOrId: string,
    entryId: string,
    values: unknown,
    mode: 'append' | 'overwrite',
    actor: Actor,
  ): EntryRow {
    const l = this.list(listSlugOrId);
    const row = this.entry(l.id, entryId);
    const changed = this.writeValues(l.id, row, () => this.entriesOf(l.id), values, mode, actor, row.id);
    for (const attributeId of changed) {
      const ev = this.entryEvent(l, row);
      this.emit({
        event_type: 'list-entry.updated',
        ...ev,
        id: { ...ev.id, attribute_id: attributeId },
        actor,
      });
    }
    return row;
  }

  /** PUT /lists/{list}/entries: update the parent record's one entry, or create it. */
  assertEntry(
    listSlugOrId: string,
    parentObject: string,
    parentRecordId: string,
    values: unknown,
    actor: Actor,
  ): EntryRow {
    const l = this.list(listSlugOrId);
    const found = this.entriesOf(l.id).filter((e) => e.parentRecordId === parentRecordId);
    if (found.length > 1)
      throw invalidRequest(
        400,
        'multiple_match_results',
        'Multiple entries were founds for the given parent record. Please remove duplicates or use the update or create entry endpoints instead.',
      );
    const existing = found[0];
    if (!existing) return this.createEntry(l.id, parentObject, parentRecordId, values, actor);
    return this.updateEntry(l.id, existing.id, values, 'append', actor);
  }

  deleteEntry(listSlugOrId: string, entryId: string, actor: Actor): void {
    const l = this.list(listSlugOrId);
    const row = this.entry(l.id, entryId);
    this.entries.delete(row.id);
    this.emit({ event_type: 'list-entry.deleted', ...this.entryEvent(l, row), actor });
  }

  private entryEvent(
    l: ListDef,
    e: EntryRow,
  ): Pick<ChangeEvent, 'id' | 'parent_object_id' | 'parent_record_id'> {
    return {
      id: { workspace_id: this.workspace.id, list_id: l.id, entry_id: e.id },
      parent_object_id: this.object(e.parentObject).id,
      parent_record_id: e.parentRecordId,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Rendering (the shapes of Attio's OpenAPI document)

  private parentIdOf(attr: AttributeDef): Record<string, string> {
    // The OpenAPI schemas name the parent `object_id` for list attributes too.
    return { workspace_id: this.workspace.id, object_id: attr.parent.id };
  }

  renderAttribute(attr: AttributeDef): Record<string, unknown> {
    return {
      id: { ...this.parentIdOf(attr), attribute_id: attr.id },
      title: attr.title,
      description: attr.description,
      api_slug: attr.api_slug,
      type: attr.type,
      is_system_attribute: attr.is_system_attribute,
      is_writable: attr.is_writable,
      is_required: attr.is_required,
      is_unique: attr.is_unique,
      is_multiselect: attr.is_multiselect,
      is_default_value_enabled: false,
      is_archived: false,
      default_value: null,
      relationship: null,
      created_at: iso(attr.created_at),
      config: {
        currency: { default_currency_code: attr.defaultCurrency ?? 'USD', display_type: 'symbol' },
        record_reference: {
          allowed_object_ids: attr.allowedObjects ? attr.allowedObjects.map((s) => this.object(s).id) : null,
        },
      },
    };
  }

  renderOption(attr: AttributeDef, o: SelectOptionDef): Record<string, unknown> {
    return {
      id: { ...this.parentIdOf(attr), attribute_id: attr.id, option_id: o.id },
      title: o.title,
      is_archived: o.is_archived,
    };
  }

  renderStatus(attr: AttributeDef, s: StatusDef): Record<string, unknown> {
    return {
      id: { ...this.parentIdOf(attr), attribute_id: attr.id, status_id: s.id },
      title: s.title,
      is_archived: s.is_archived,
      celebration_enabled: s.celebration_enabled,
      target_time_in_status: s.target_time_in_status,
    };
  }

  renderValue(attr: AttributeDef, v: StoredValue): Record<string, unknown> {
    let payload: Record<string, unknown> = v.payload;
    if (attr.type === 'select') {
      const o = attr.options.find((x) => x.id === v.payload.option);
      payload = { option: o ? this.renderOption(attr, o) : v.payload.option };
    } else if (attr.type === 'status') {
      const s = attr.statuses.find((x) => x.id === v.payload.status);
      payload = { status: s ? this.renderStatus(attr, s) : v.payload.status };
    }
    return {
      active_from: iso(v.activeFrom),
      active_until: v.activeUntil === null ? null : iso(v.activeUntil),
      created_by_actor: { ...(v.actor.id !== undefined ? { id: v.actor.id } : {}), type: v.actor.type },
      ...payload,
      attribute_type: attr.type,
    };
  }

  /** Every attribute's active values (an empty array when it has none), keyed by api_slug. */
  renderValues(parentId: string, c: Container): Record<string, unknown[]> {
    const out: Record<string, unknown[]> = {};
    for (const attr of this.attributesOf(parentId)) {
      out[attr.api_slug] = (c.values.get(attr.id) ?? [])
        .filter((v) => v.activeUntil === null)
        .map((v) => this.renderValue(attr, v));
    }
    return out;
  }

  renderRecord(r: RecordRow): Record<string, unknown> {
    const o = this.object(r.object);
    return {
      id: { workspace_id: this.workspace.id, object_id: o.id, record_id: r.id },
      created_at: iso(r.createdAt),
      web_url: `https://app.attio.com/${this.workspace.slug}/${o.singular_noun.toLowerCase()}/${r.id}/overview`,
      values: this.renderValues(o.id, r),
    };
  }

  renderEntry(e: EntryRow): Record<string, unknown> {
    return {
      id: { workspace_id: this.workspace.id, list_id: e.list, entry_id: e.id },
      parent_record_id: e.parentRecordId,
      parent_object: e.parentObject,
      created_at: iso(e.createdAt),
      entry_values: this.renderValues(e.list, e),
    };
  }

  renderObject(o: ObjectDef): Record<string, unknown> {
    return {
      id: { workspace_id: this.workspace.id, object_id: o.id },
      api_slug: o.api_slug,
      singular_noun: o.singular_noun,
      plural_noun: o.plural_noun,
      created_at: iso(o.created_at),
    };
  }

  renderList(l: ListDef): Record<string, unknown> {
    return {
      id: { workspace_id: this.workspace.id, list_id: l.id },
      api_slug: l.api_slug,
      name: l.name,
      parent_object: [l.parentObject],
      workspace_access: 'full-access',
      workspace_member_access: [],
      created_by_actor: { id: l.createdBy, type: 'workspace-member' },
      created_at: iso(l.created_at),
    };
  }

  renderWebhook(w: Webhook, withSecret = false): Record<string, unknown> {
    return {
      target_url: w.target_url,
      subscriptions: w.subscriptions,
      id: { workspace_id: this.workspace.id, webhook_id: w.id },
      status: w.status,
      created_at: iso(w.created_at),
      ...(withSecret ? { secret: w.secret } : {}),
    };
  }
}

export { isUuid };
