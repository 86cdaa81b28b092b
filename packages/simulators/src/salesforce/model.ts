/**
 * The in-memory org behind the Salesforce simulator: records of the schema's objects, the
 * recycle bin, validation as Salesforce applies it on insert and update, "after write" rules
 * (stand-ins for Apex triggers, workflow field updates and flows), derived and formula fields,
 * and the replication windows (`updated`, `deleted`). Routes turn HTTP into calls here; tests
 * call the same methods to edit "in Salesforce" (source `ui`).
 */
import { type Clock, seededRandom, systemClock, TokenRegistry } from '../http.ts';
import {
  type FieldDef,
  fieldDef,
  OBJECTS,
  type ObjectDef,
  OPPORTUNITY_STAGES,
  objectDef,
  objectForId,
} from './schema.ts';

// ---------------------------------------------------------------------------------------------
// Errors: Salesforce answers a JSON array of {message, errorCode, fields?}.

export type SfError = { message: string; errorCode: string; fields?: string[] };

export class SalesforceApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: SfError[],
  ) {
    super(errors.map((e) => `${e.errorCode}: ${e.message}`).join('; '));
  }
}

export const sfError = (status: number, errorCode: string, message: string, fields?: string[]) =>
  new SalesforceApiError(status, [{ message, errorCode, ...(fields ? { fields } : {}) }]);

export const notFound = () => sfError(404, 'NOT_FOUND', 'The requested resource does not exist');
export const entityDeleted = () => sfError(404, 'ENTITY_IS_DELETED', 'entity is deleted', []);

// ---------------------------------------------------------------------------------------------
// Ids: 15 case-sensitive characters (3 key prefix, 2 pod, 1 reserved, 9 unique) plus a
// 3-character suffix that encodes the case of the first 15, as Salesforce's 18-character ids do.

const SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function idSuffix(id15: string): string {
  let out = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15.charCodeAt(chunk * 5 + i);
      if (c >= 65 && c <= 90) bits |= 1 << i;
    }
    out += SUFFIX_ALPHABET[bits];
  }
  return out;
}

/** A well-formed 15 or 18 character id, as its 18 character form; undefined if malformed. */
export function normalizeId(id: string): string | undefined {
  if (!/^[a-zA-Z0-9]{15}([a-zA-Z0-9]{3})?$/.test(id)) return undefined;
  const id15 = id.slice(0, 15);
  const expected = id15 + idSuffix(id15);
  if (id.length === 18 && id.toUpperCase() !== expected.toUpperCase()) return undefined;
  return expected;
}

function base62(n: number, width: number): string {
  let out = '';
  let v = n;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Values and dates

/** Stored values: text as strings, numbers, booleans; dates `YYYY-MM-DD`; datetimes epoch ms. */
export type Value = string | number | boolean | null;

export type SfRecord = {
  id: string;
  object: ObjectDef;
  values: Map<string, Value>;
  deleted: boolean;
  deletedAt?: number;
};

/** `2026-01-15T09:00:00.000+0000`, the format Salesforce renders datetimes in. */
export function formatDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses the datetime forms Salesforce accepts (`Z`, `+00:00`, `+0000`); NaN when invalid. */
export function parseDateTime(s: string): number {
  const m = DATETIME_RE.exec(s.trim());
  if (!m) return Number.NaN;
  const [, date, hh, mm, ss = '00', frac = '', zone = 'Z'] = m;
  const z = zone === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  return Date.parse(`${date}T${hh}:${mm}:${ss}${frac || '.000'}${z}`);
}

export function isValidDate(s: string): boolean {
  if (!DATE_RE.test(s)) return false;
  const t = Date.parse(`${s}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === s;
}

// ---------------------------------------------------------------------------------------------
// Change events and triggers

export type ChangeSource = 'api' | 'ui';

export type ChangeEvent = {
  kind: 'created' | 'updated' | 'deleted';
  object: string;
  id: string;
  source: ChangeSource;
  at: number;
};

/** A record as triggers see it: field name -> value (dates as strings, datetimes as ISO). */
export type RecordImage = Record<string, Value>;

export type TriggerContext = {
  operation: 'insert' | 'update';
  /** The record after the write (including earlier triggers' changes). */
  record: Readonly<RecordImage>;
  /** The record before an update. */
  old?: Readonly<RecordImage>;
  source: ChangeSource;
};

/**
 * An "after write" rule: returns field values to set on the record (like a workflow field
 * update, a before-save flow or an Apex trigger). Values are normalized but not validated
 * against field-level security, as system-mode automation is not.
 */
export type Trigger = (ctx: TriggerContext) => Record<string, unknown> | undefined;

// ---------------------------------------------------------------------------------------------

export type SalesforceStateOptions = {
  clock?: Clock;
  /** Seed for reproducible record ids. */
  idSeed?: number;
  /** Days the recycle bin keeps deleted records visible to `deleted` and queryAll (default 15). */
  recycleBinDays?: number;
};

export const DAY_MS = 86_400_000;

export class SalesforceState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly orgId: string;
  readonly userId: string;
  readonly username = 'integration.user@lockstep-sim.example';
  recycleBinDays: number;
  /** Records by 18-character id (live and in the recycle bin). */
  readonly records = new Map<string, SfRecord>();
  private readonly triggers = new Map<string, Trigger[]>();
  private readonly listeners: ((e: ChangeEvent) => void)[] = [];
  private readonly random: () => number;
  private counter: number;
  private readonly pod: string;
  /** Events held back until the current transaction commits. */
  private pending: ChangeEvent[] | undefined;
  private readonly journals: Map<string, SfRecord | null>[] = [];

  constructor(options: SalesforceStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.tokens = new TokenRegistry(this.clock);
    this.recycleBinDays = options.recycleBinDays ?? 15;
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.pod =
      `${Math.floor(this.random() * 9) + 1}${BASE62[10 + Math.floor(this.random() * 26)]}`.toLowerCase();
    this.counter = 1_000_000 + Math.floor(this.random() * 1_000_000);
    this.orgId = this.makeId('00D');
    this.userId = this.makeId('005');
  }

  /** A new 18-character id with this key prefix; the unique part grows with small gaps. */
  makeId(prefix: string): string {
    this.counter += 1 + Math.floor(this.random() * 40);
    const id15 = `${prefix}${this.pod}0${base62(this.counter, 9)}`;
    return id15 + idSuffix(id15);
  }

  onChange(listener: (e: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(e: ChangeEvent): void {
    if (this.pending) this.pending.push(e);
    else for (const l of this.listeners) l(e);
  }

  /** Register an "after write" rule for an object (see Trigger). */
  addTrigger(object: string, trigger: Trigger): void {
    const obj = this.object(object);
    const list = this.triggers.get(obj.name) ?? [];
    list.push(trigger);
    this.triggers.set(obj.name, list);
  }

  object(name: string): ObjectDef {
    const obj = objectDef(name);
    if (!obj) throw notFound();
    return obj;
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  /** A record by id (15 or 18 characters), live or deleted. */
  find(id: string): SfRecord | undefined {
    const norm = normalizeId(id);
    return norm ? this.records.get(norm) : undefined;
  }

  /** A live record of this object, or the 404 Salesforce answers. */
  getLive(object: string, id: string): SfRecord {
    const obj = this.object(object);
    const rec = this.find(id);
    if (!rec || rec.object !== obj) throw notFound();
    if (rec.deleted) throw entityDeleted();
    return rec;
  }

  list(object: string, options: { includeDeleted?: boolean } = {}): SfRecord[] {
    const obj = this.object(object);
    const out: SfRecord[] = [];
    for (const r of this.records.values()) {
      if (r.object !== obj) continue;
      if (r.deleted && !(options.includeDeleted && this.inRecycleBin(r))) continue;
      out.push(r);
    }
    return out;
  }

  private inRecycleBin(r: SfRecord): boolean {
    return r.deleted && (r.deletedAt ?? 0) > this.clock.now() - this.recycleBinDays * DAY_MS;
  }

  /** A field's value, computing formula fields (they are evaluated at read time). */
  value(rec: SfRecord, field: FieldDef): Value {
    if (rec.object.name === 'Opportunity' && field.name === 'ExpectedRevenue') {
      const amount = rec.values.get('Amount');
      const p = rec.values.get('Probability');
      return typeof amount === 'number' && typeof p === 'number' ? (amount * p) / 100 : null;
    }
    if (rec.object.name === 'Project__c' && field.name === 'Is_Over_Budget__c') {
      const spent = rec.values.get('Spent__c');
      const budget = rec.values.get('Budget__c');
      return typeof spent === 'number' && typeof budget === 'number' && spent > budget;
    }
    if (field.name === 'IsDeleted') return rec.deleted;
    return rec.values.get(field.name) ?? null;
  }

  /** The record as plain values (datetimes as Salesforce strings). */
  image(rec: SfRecord): RecordImage {
    const out: RecordImage = {};
    for (const fd of rec.object.fields) {
      const v = this.value(rec, fd);
      out[fd.name] = fd.type === 'datetime' && typeof v === 'number' ? formatDateTime(v) : v;
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Validation

  /**
   * Checks written values as Salesforce does and normalizes them. Throws one
   * SalesforceApiError listing every problem found (unknown fields fail first, alone).
   */
  validate(obj: ObjectDef, input: Record<string, unknown>, existing?: SfRecord): Map<string, Value> {
    const out = new Map<string, Value>();
    const errors: SfError[] = [];
    const readOnly: string[] = [];
    /** Fields given with a bad value: reported once, not also as missing. */
    const given = new Set<string>();
    for (const [key, raw] of Object.entries(input)) {
      if (key === 'attributes') continue;
      const fd = fieldDef(obj, key);
      if (!fd) {
        throw sfError(400, 'INVALID_FIELD', `No such column '${key}' on sobject of type ${obj.name}`);
      }
      if (fd.name === 'Id' && existing && typeof raw === 'string' && normalizeId(raw) === existing.id)
        continue;
      const allowed = existing ? fd.updateable : fd.createable;
      if (!allowed) {
        readOnly.push(fd.name);
        continue;
      }
      const r = this.normalize(fd, raw);
      if ('error' in r) {
        errors.push(r.error);
        given.add(fd.name);
      } else out.set(fd.name, r.value);
    }
    if (readOnly.length > 0) {
      errors.unshift({
        message: `Unable to create/update fields: ${readOnly.join(', ')}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
        errorCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
        fields: readOnly,
      });
    }
    // Required: non-nillable, createable fields without a default, on insert and when cleared.
    const missing = obj.fields.filter((fd) => {
      if (
        fd.nillable ||
        !fd.createable ||
        fd.defaultedOnCreate ||
        fd.type === 'boolean' ||
        given.has(fd.name)
      ) {
        return false;
      }
      if (out.has(fd.name)) return out.get(fd.name) === null;
      return existing === undefined;
    });
    if (missing.length > 0) {
      errors.push({
        message: `Required fields are missing: [${missing.map((fd) => fd.name).join(', ')}]`,
        errorCode: 'REQUIRED_FIELD_MISSING',
        fields: missing.map((fd) => fd.name),
      });
    }
    for (const fd of obj.fields) {
      if (!fd.unique) continue;
      const v = out.get(fd.name);
      if (typeof v !== 'string') continue;
      const other = this.findByUnique(obj, fd, v);
      if (other && other.id !== existing?.id) {
        errors.push({
          message: `duplicate value found: ${fd.name} duplicates value on record with id: ${other.id}`,
          errorCode: 'DUPLICATE_VALUE',
          fields: [],
        });
      }
    }
    if (errors.length > 0) throw new SalesforceApiError(400, errors);
    return out;
  }

  findByUnique(obj: ObjectDef, fd: FieldDef, value: string): SfRecord | undefined {
    const needle = value.toLowerCase();
    for (const r of this.records.values()) {
      if (r.object !== obj || r.deleted) continue;
      const v = r.values.get(fd.name);
      if (typeof v === 'string' && v.toLowerCase() === needle) return r;
    }
    return undefined;
  }

  /** One value, checked against its field's type. */
  normalize(fd: FieldDef, raw: unknown): { value: Value } | { error: SfError } {
    const err = (errorCode: string, message: string, withField = true): { error: SfError } => ({
      error: { message, errorCode, fields: withField ? [fd.name] : [] },
    });
    const parseError = (kind: string) =>
      err(
        'JSON_PARSER_ERROR',
        `Cannot deserialize instance of ${kind} from VALUE_STRING value ${String(raw)} or request may be missing a required field`,
        false,
      );
    if (raw === null || raw === undefined || raw === '') {
      return { value: fd.type === 'boolean' ? false : null };
    }
    switch (fd.type) {
      case 'boolean':
        if (typeof raw === 'boolean') return { value: raw };
        if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
        return parseError('boolean');
      case 'int':
      case 'double':
      case 'currency':
      case 'percent': {
        const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
        if (!Number.isFinite(n)) return parseError(fd.type === 'int' ? 'int' : 'double');
        if (fd.type === 'int' && !Number.isInteger(n)) return parseError('int');
        const scale = fd.scale ?? 0;
        const rounded = fd.type === 'int' ? n : Math.round(n * 10 ** scale) / 10 ** scale;
        const digits = (fd.precision ?? 18) - scale;
        if (Math.abs(Math.trunc(rounded)) >= 10 ** digits) {
          return err(
            'NUMBER_OUTSIDE_VALID_RANGE',
            `${fd.label}: value outside of valid range on numeric field: ${n}`,
          );
        }
        return { value: rounded };
      }
      case 'date':
        if (typeof raw === 'string' && isValidDate(raw)) return { value: raw };
        return parseError('date');
      case 'datetime': {
        const t = typeof raw === 'string' ? parseDateTime(raw) : Number.NaN;
        if (Number.isNaN(t)) return parseError('datetime');
        return { value: t };
      }
      case 'reference': {
        if (typeof raw !== 'string') return parseError('id');
        const id = normalizeId(raw);
        if (!id) return err('MALFORMED_ID', `${fd.label}: id value of incorrect type: ${raw}`);
        const to = fd.referenceTo ?? [];
        if (to.includes('User')) {
          if (id !== this.userId) return err('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id');
          return { value: id };
        }
        const target = objectForId(id);
        if (!target || !to.includes(target.name)) {
          return err(
            'FIELD_INTEGRITY_EXCEPTION',
            `field integrity exception: ${fd.name} (id value of incorrect type: ${raw})`,
          );
        }
        const rec = this.records.get(id);
        if (!rec) return err('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id');
        if (rec.deleted) return err('ENTITY_IS_DELETED', 'entity is deleted');
        return { value: id };
      }
      default: {
        if (typeof raw === 'object') return parseError('String');
        const s = String(raw);
        if (fd.length !== undefined && s.length > fd.length) {
          return err(
            'STRING_TOO_LONG',
            `${fd.label}: data value too large: ${s.slice(0, 40)} (max length=${fd.length})`,
          );
        }
        if (fd.type === 'email' && !/^[^@\s]+@[^@\s]+\.[a-zA-Z0-9-]{2,}$/.test(s)) {
          return err('INVALID_EMAIL_ADDRESS', `${fd.label}: invalid email address: ${s}`);
        }
        if (fd.type === 'picklist' && fd.restrictedPicklist && !fd.picklistValues?.includes(s)) {
          return err(
            'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
            `${fd.label}: bad value for restricted picklist field: ${s}`,
          );
        }
        if (fd.type === 'multipicklist') {
          const parts = [...new Set(s.split(';').map((p) => p.trim()))].filter((p) => p !== '');
          const bad = parts.find((p) => fd.restrictedPicklist && !fd.picklistValues?.includes(p));
          if (bad !== undefined) {
            return err(
              'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
              `${fd.label}: bad value for restricted picklist field: ${bad}`,
            );
          }
          return { value: parts.join(';') };
        }
        return { value: s };
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /**
   * Run `fn` as one transaction: if it throws, every record it touched is restored and its
   * events are dropped (allOrNone, and a failed single write leaves nothing behind).
   * Transactions nest; a failed inner one undoes only its own changes.
   */
  transaction<T>(fn: () => T): T {
    const journal = new Map<string, SfRecord | null>();
    this.journals.push(journal);
    const outer = this.pending === undefined;
    if (outer) this.pending = [];
    const events = this.pending as ChangeEvent[];
    const before = events.length;
    try {
      const result = fn();
      this.journals.pop();
      if (outer) {
        this.pending = undefined;
        for (const e of events) for (const l of this.listeners) l(e);
      }
      return result;
    } catch (err) {
      this.journals.pop();
      for (const [id, original] of journal) {
        if (original) this.records.set(id, original);
        else this.records.delete(id);
      }
      events.length = before;
      if (outer) this.pending = undefined;
      throw err;
    }
  }

  /** Keep a record's state before the first change in each open transaction. */
  private remember(id: string): void {
    for (const journal of this.journals) {
      if (journal.has(id)) continue;
      const r = this.records.get(id);
      journal.set(id, r ? { ...r, values: new Map(r.values) } : null);
    }
  }

  create(object: string, input: Record<string, unknown>, source: ChangeSource = 'ui'): SfRecord {
    const obj = this.object(object);
    return this.transaction(() => {
      const values = this.validate(obj, input);
      const now = this.clock.now();
      const id = this.makeId(obj.keyPrefix);
      const rec: SfRecord = { id, object: obj, values: new Map(), deleted: false };
      for (const fd of obj.fields) {
        if (fd.defaultPicklistValue !== undefined) rec.values.set(fd.name, fd.defaultPicklistValue);
        if (fd.type === 'boolean' && fd.createable) rec.values.set(fd.name, false);
      }
      for (const [k, v] of values) rec.values.set(k, v);
      rec.values.set('Id', id);
      rec.values.set('OwnerId', (values.get('OwnerId') as string | undefined) ?? this.userId);
      rec.values.set('CreatedDate', now);
      rec.values.set('CreatedById', this.userId);
      this.derive(rec, values, true);
      this.stamp(rec, now);
      this.remember(id);
      this.records.set(id, rec);
      this.runTriggers(rec, 'insert', undefined, source);
      this.emit({ kind: 'created', object: obj.name, id, source, at: now });
      return rec;
    });
  }

  update(object: string, id: string, input: Record<string, unknown>, source: ChangeSource = 'ui'): SfRecord {
    const rec = this.getLive(object, id);
    return this.transaction(() => {
      const values = this.validate(rec.object, input, rec);
      this.remember(rec.id);
      const old = this.image(rec);
      for (const [k, v] of values) rec.values.set(k, v);
      this.derive(rec, values, false);
      // Every update moves LastModifiedDate and SystemModstamp, even when no value changed.
      const now = this.clock.now();
      this.stamp(rec, now);
      this.runTriggers(rec, 'update', old, source);
      this.emit({ kind: 'updated', object: rec.object.name, id: rec.id, source, at: now });
      return rec;
    });
  }

  /** Delete to the recycle bin (queryAll and `deleted` still see it). */
  remove(object: string, id: string, source: ChangeSource = 'ui'): SfRecord {
    const rec = this.getLive(object, id);
    return this.transaction(() => {
      this.remember(rec.id);
      const now = this.clock.now();
      rec.deleted = true;
      rec.deletedAt = now;
      this.stamp(rec, now);
      this.emit({ kind: 'deleted', object: rec.object.name, id: rec.id, source, at: now });
      return rec;
    });
  }

  /** Empty the recycle bin of records deleted before `before` (default: all). */
  purgeRecycleBin(before = Number.POSITIVE_INFINITY): number {
    let n = 0;
    for (const [id, r] of this.records) {
      if (r.deleted && (r.deletedAt ?? 0) < before) {
        this.records.delete(id);
        n++;
      }
    }
    return n;
  }

  private stamp(rec: SfRecord, now: number): void {
    rec.values.set('LastModifiedDate', now);
    rec.values.set('LastModifiedById', this.userId);
    rec.values.set('SystemModstamp', now);
  }

  /** Fields Salesforce computes on save: full names, opportunity probability and flags. */
  private derive(rec: SfRecord, written: Map<string, Value>, insert: boolean): void {
    const name = rec.object.name;
    if (name === 'Contact' || name === 'Lead') {
      const parts = [rec.values.get('FirstName'), rec.values.get('LastName')].filter(
        (p) => typeof p === 'string' && p !== '',
      );
      rec.values.set('Name', parts.join(' '));
    }
    if (name === 'Opportunity') {
      const stage = OPPORTUNITY_STAGES.find((s) => s.value === rec.values.get('StageName'));
      if (stage) {
        if ((insert || written.has('StageName')) && !written.has('Probability')) {
          rec.values.set('Probability', stage.probability);
        }
        rec.values.set('IsClosed', stage.closed);
        rec.values.set('IsWon', stage.won);
      }
    }
  }

  private runTriggers(
    rec: SfRecord,
    operation: 'insert' | 'update',
    old: RecordImage | undefined,
    source: ChangeSource,
  ): void {
    for (const trigger of this.triggers.get(rec.object.name) ?? []) {
      const changes = trigger({ operation, record: this.image(rec), ...(old ? { old } : {}), source });
      if (!changes) continue;
      const written = new Map<string, Value>();
      for (const [key, raw] of Object.entries(changes)) {
        const fd = fieldDef(rec.object, key);
        if (!fd) throw new Error(`Trigger on ${rec.object.name} set unknown field ${key}`);
        const r = this.normalize(fd, raw);
        if ('error' in r) throw new SalesforceApiError(400, [r.error]);
        rec.values.set(fd.name, r.value);
        written.set(fd.name, r.value);
      }
      this.derive(rec, written, false);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Replication windows (sObject Get Updated / Get Deleted)

  /** Ids whose SystemModstamp falls in [start, end) and are still live. */
  updatedIds(object: string, start: number, end: number): string[] {
    return this.list(object)
      .filter((r) => {
        const t = r.values.get('SystemModstamp') as number;
        return t >= start && t < end;
      })
      .sort((a, b) => (a.values.get('SystemModstamp') as number) - (b.values.get('SystemModstamp') as number))
      .map((r) => r.id);
  }

  deletedRecords(object: string, start: number, end: number): { id: string; deletedDate: number }[] {
    return this.list(object, { includeDeleted: true })
      .filter((r) => r.deleted && (r.deletedAt as number) >= start && (r.deletedAt as number) < end)
      .sort((a, b) => (a.deletedAt as number) - (b.deletedAt as number))
      .map((r) => ({ id: r.id, deletedDate: r.deletedAt as number }));
  }

  /** The oldest deletion still in the recycle bin, or the start of its window. */
  earliestDeletedAvailable(object: string): number {
    const obj = this.object(object);
    let earliest = Number.POSITIVE_INFINITY;
    for (const r of this.records.values()) {
      if (r.object === obj && r.deleted && this.inRecycleBin(r))
        earliest = Math.min(earliest, r.deletedAt as number);
    }
    return Number.isFinite(earliest) ? earliest : this.clock.now() - this.recycleBinDays * DAY_MS;
  }

  objects(): ObjectDef[] {
    return OBJECTS;
  }
}
