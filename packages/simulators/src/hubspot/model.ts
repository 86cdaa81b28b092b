/**
 * The in-memory CRM behind the HubSpot simulator: objects (contacts, companies, deals) with
 * string property values, custom properties, associations, merges, and the versions the search
 * index sees (it lags writes by `searchLagMs`). Routes (routes.ts) turn HTTP into calls here;
 * tests call the same methods to edit "in HubSpot" (change source CRM_UI).
 */
import { randomUUID } from 'node:crypto';
import { type Clock, seededRandom, systemClock, TokenRegistry } from '../http.ts';
import {
  defaultProperties,
  LAST_MODIFIED,
  normalizeValue,
  OBJECT_TYPES,
  type ObjectType,
  type PropertyDef,
  type PropertyValueError,
  SINGULAR,
} from './properties.ts';

// ---------------------------------------------------------------------------------------------
// Errors: HubSpot's body is {status: "error", message, correlationId, category, ...}

export class HubSpotApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message));
  }
}

export function apiError(
  status: number,
  category: string,
  message: string,
  extra: Record<string, unknown> = {},
): HubSpotApiError {
  return new HubSpotApiError(status, {
    status: 'error',
    message,
    correlationId: randomUUID(),
    category,
    ...extra,
  });
}

export const notFound = () => apiError(404, 'OBJECT_NOT_FOUND', 'resource not found');

/** HubSpot lists every bad value in one VALIDATION_ERROR whose message embeds a JSON array. */
export function propertyValuesError(errors: PropertyValueError[], portalId: number): HubSpotApiError {
  const detail = errors.map((e) => ({
    isValid: false,
    message: e.message,
    error: e.error,
    name: e.name,
    localizedErrorMessage: e.message,
    portalId,
  }));
  return apiError(400, 'VALIDATION_ERROR', `Property values were not valid: ${JSON.stringify(detail)}`);
}

// ---------------------------------------------------------------------------------------------
// State types

export type ChangeSource = 'INTEGRATION' | 'CRM_UI';

/** A snapshot as the search index holds it. */
export type IndexedVersion = {
  at: number;
  properties: Map<string, string>;
  updatedAt: number;
  archived: boolean;
};

export type CrmObject = {
  id: string;
  type: ObjectType;
  /** Stored values; an absent key means no value (HubSpot reads it as null). */
  properties: Map<string, string>;
  createdAt: number;
  updatedAt: number;
  archived: boolean;
  archivedAt?: number;
  /** Versions for the lagging search index, oldest first. */
  versions: IndexedVersion[];
};

export type ChangeEvent =
  | { kind: 'creation' | 'deletion'; type: ObjectType; objectId: string; source: ChangeSource; at: number }
  | {
      kind: 'propertyChange';
      type: ObjectType;
      objectId: string;
      propertyName: string;
      propertyValue: string;
      source: ChangeSource;
      at: number;
    }
  | {
      kind: 'merge';
      type: ObjectType;
      objectId: string;
      primaryObjectId: string;
      mergedObjectIds: string[];
      newObjectId: string;
      source: ChangeSource;
      at: number;
    };

export type AssociationInput = {
  to: { id: string };
  types: { associationCategory: string; associationTypeId: number }[];
};

// ---------------------------------------------------------------------------------------------
// Associations: HubSpot-defined type ids (unlabeled and primary) between the three objects.

type AssociationTypeDef = {
  from: ObjectType;
  to: ObjectType;
  typeId: number;
  name: string;
  primary: boolean;
};

export const ASSOCIATION_TYPES: AssociationTypeDef[] = [
  { from: 'contacts', to: 'companies', typeId: 279, name: 'contact_to_company_unlabeled', primary: false },
  { from: 'contacts', to: 'companies', typeId: 1, name: 'contact_to_company', primary: true },
  { from: 'companies', to: 'contacts', typeId: 280, name: 'company_to_contact_unlabeled', primary: false },
  { from: 'companies', to: 'contacts', typeId: 2, name: 'company_to_contact', primary: true },
  { from: 'deals', to: 'contacts', typeId: 3, name: 'deal_to_contact', primary: false },
  { from: 'contacts', to: 'deals', typeId: 4, name: 'contact_to_deal', primary: false },
  { from: 'deals', to: 'companies', typeId: 341, name: 'deal_to_company_unlabeled', primary: false },
  { from: 'deals', to: 'companies', typeId: 5, name: 'deal_to_company', primary: true },
  { from: 'companies', to: 'deals', typeId: 342, name: 'company_to_deal_unlabeled', primary: false },
  { from: 'companies', to: 'deals', typeId: 6, name: 'company_to_deal', primary: true },
];

export function associationType(
  from: ObjectType,
  to: ObjectType,
  typeId: number,
): AssociationTypeDef | undefined {
  return ASSOCIATION_TYPES.find((t) => t.from === from && t.to === to && t.typeId === typeId);
}

export function defaultAssociationType(from: ObjectType, to: ObjectType): AssociationTypeDef | undefined {
  return ASSOCIATION_TYPES.find((t) => t.from === from && t.to === to && !t.primary);
}

/** The same association seen from the other side (primary stays primary). */
function inverseType(def: AssociationTypeDef): AssociationTypeDef | undefined {
  return ASSOCIATION_TYPES.find((t) => t.from === def.to && t.to === def.from && t.primary === def.primary);
}

// ---------------------------------------------------------------------------------------------

export type HubSpotStateOptions = {
  clock?: Clock;
  /** Seed for reproducible object ids. */
  idSeed?: number;
  /** How long a write takes to reach search (on the simulator's clock); 0 = at once. Default 2000. */
  searchLagMs?: number;
  portalId?: number;
};

export const DEFAULT_SEARCH_LAG_MS = 2000;

export class HubSpotState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly portalId: number;
  searchLagMs: number;
  readonly objects: Record<ObjectType, Map<string, CrmObject>>;
  readonly properties: Record<ObjectType, PropertyDef[]>;
  /** Merged-away ids -> the id of the record they became (reads of the old id resolve there). */
  readonly mergedInto: Record<ObjectType, Map<string, string>>;
  /**
   * Contact ids by every email they were written with (kept by `touch`, which every write passes
   * through): a lookup checks them against the current values, so finding a contact by email does
   * not scan every contact (a 40,000-contact bench spent minutes in that scan).
   */
  private readonly contactsByEmail = new Map<string, Set<string>>();
  /** `${fromType}|${fromId}|${toType}|${toId}` -> association type ids. */
  private readonly associations = new Map<string, Set<number>>();
  private readonly nextIds: Record<ObjectType, number>;
  private readonly random: () => number;
  private readonly listeners: ((e: ChangeEvent) => void)[] = [];

  constructor(options: HubSpotStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.tokens = new TokenRegistry(this.clock);
    this.searchLagMs = options.searchLagMs ?? DEFAULT_SEARCH_LAG_MS;
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.portalId = options.portalId ?? 40_000_000 + Math.floor(this.random() * 9_000_000);
    const now = this.clock.now();
    const start = () => 10_000 + Math.floor(this.random() * 90_000) * 100;
    this.nextIds = { contacts: start(), companies: start(), deals: start() };
    this.objects = { contacts: new Map(), companies: new Map(), deals: new Map() };
    this.mergedInto = { contacts: new Map(), companies: new Map(), deals: new Map() };
    this.properties = {
      contacts: defaultProperties('contacts', now),
      companies: defaultProperties('companies', now),
      deals: defaultProperties('deals', now),
    };
  }

  onChange(listener: (e: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Numeric ids that grow with small random gaps, as HubSpot's do. */
  private newId(type: ObjectType): string {
    this.nextIds[type] += 1 + Math.floor(this.random() * 50);
    return String(this.nextIds[type]);
  }

  // -------------------------------------------------------------------------------------------
  // Properties

  property(type: ObjectType, name: string): PropertyDef | undefined {
    return this.properties[type].find((p) => p.name === name && !p.archived);
  }

  addProperty(type: ObjectType, def: PropertyDef): PropertyDef {
    if (this.properties[type].some((p) => p.name === def.name)) {
      throw apiError(409, 'OBJECT_ALREADY_EXISTS', `Property named '${def.name}' already exists.`);
    }
    this.properties[type].push(def);
    return def;
  }

  /** Validate and normalize written values; every bad value is reported together. */
  private validate(type: ObjectType, input: Record<string, unknown>): Map<string, string> {
    const out = new Map<string, string>();
    const errors: PropertyValueError[] = [];
    for (const [name, raw] of Object.entries(input)) {
      const def = this.property(type, name);
      if (!def) {
        errors.push({ name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` });
        continue;
      }
      const r = normalizeValue(def, raw, type);
      if (r.ok) out.set(name, r.value);
      else errors.push(r.error);
    }
    if (errors.length > 0) throw propertyValuesError(errors, this.portalId);
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Objects

  /** Follow merges: the id a read of `id` lands on, if any. */
  resolveId(type: ObjectType, id: string): string {
    let current = id;
    for (let i = 0; i < 10; i++) {
      const next = this.mergedInto[type].get(current);
      if (next === undefined) break;
      current = next;
    }
    return current;
  }

  get(type: ObjectType, id: string, options: { archived?: boolean } = {}): CrmObject | undefined {
    const obj = this.objects[type].get(this.resolveId(type, id));
    if (!obj || obj.archived !== (options.archived ?? false)) return undefined;
    return obj;
  }

  /** A live object whose unique property (`email`, `hs_object_id` or a unique custom one) has this value. */
  findByUnique(type: ObjectType, property: string, value: string): CrmObject | undefined {
    if (property === 'hs_object_id') return this.get(type, value);
    const needle = type === 'contacts' && property === 'email' ? value.trim().toLowerCase() : value;
    if (type === 'contacts' && property === 'email') {
      for (const id of this.contactsByEmail.get(needle) ?? []) {
        const obj = this.objects.contacts.get(id);
        if (obj && !obj.archived && obj.properties.get('email') === needle) return obj;
      }
      return undefined;
    }
    for (const obj of this.objects[type].values()) {
      if (!obj.archived && obj.properties.get(property) === needle) return obj;
    }
    return undefined;
  }

  /** Checks a create would pass (values, unique email) without storing anything. */
  prepareCreate(type: ObjectType, input: Record<string, unknown>): Map<string, string> {
    const values = this.validate(type, input);
    const email = values.get('email');
    if (type === 'contacts' && email) {
      const existing = this.findByUnique('contacts', 'email', email);
      if (existing) throw apiError(409, 'CONFLICT', `Contact already exists. Existing ID: ${existing.id}`);
    }
    return values;
  }

  create(
    type: ObjectType,
    input: Record<string, unknown>,
    source: ChangeSource = 'CRM_UI',
    associations: AssociationInput[] = [],
  ): CrmObject {
    const values = this.prepareCreate(type, input);
    this.checkAssociationInputs(type, associations);
    return this.insert(type, values, source, associations);
  }

  /** Store already validated values (batch create validates every input first). */
  insert(
    type: ObjectType,
    values: Map<string, string>,
    source: ChangeSource,
    associations: AssociationInput[] = [],
  ): CrmObject {
    const now = this.clock.now();
    const id = this.newId(type);
    const obj: CrmObject = {
      id,
      type,
      properties: new Map(),
      createdAt: now,
      updatedAt: now,
      archived: false,
      versions: [],
    };
    for (const [k, v] of values) if (v !== '') obj.properties.set(k, v);
    obj.properties.set('hs_object_id', id);
    obj.properties.set('createdate', new Date(now).toISOString());
    this.touch(obj, now);
    this.objects[type].set(id, obj);
    for (const a of associations) {
      for (const t of a.types) {
        const to = this.toTypeOf(type, t.associationTypeId);
        if (to) this.associate(type, id, to, String(a.to.id), t.associationTypeId);
      }
    }
    this.emit({ kind: 'creation', type, objectId: id, source, at: now });
    for (const [k, v] of values) {
      if (v !== '')
        this.emit({
          kind: 'propertyChange',
          type,
          objectId: id,
          propertyName: k,
          propertyValue: v,
          source,
          at: now,
        });
    }
    return obj;
  }

  /** Checks an update would pass (values, email not taken by another contact). */
  prepareUpdate(obj: CrmObject, input: Record<string, unknown>): Map<string, string> {
    const values = this.validate(obj.type, input);
    const email = values.get('email');
    if (obj.type === 'contacts' && email) {
      const other = this.findByUnique('contacts', 'email', email);
      if (other && other.id !== obj.id) {
        throw apiError(409, 'CONFLICT', `Contact already exists. Existing ID: ${other.id}`);
      }
    }
    return values;
  }

  update(
    type: ObjectType,
    id: string,
    input: Record<string, unknown>,
    source: ChangeSource = 'CRM_UI',
  ): CrmObject {
    const obj = this.get(type, id);
    if (!obj) throw notFound();
    return this.apply(obj, this.prepareUpdate(obj, input), source);
  }

  /** Write validated values; the modified time moves only when a value really changes. */
  apply(obj: CrmObject, values: Map<string, string>, source: ChangeSource): CrmObject {
    const now = this.clock.now();
    const changed: [string, string][] = [];
    for (const [k, v] of values) {
      if ((obj.properties.get(k) ?? '') === v) continue;
      if (v === '') obj.properties.delete(k);
      else obj.properties.set(k, v);
      changed.push([k, v]);
    }
    if (changed.length === 0) return obj;
    this.touch(obj, now);
    for (const [k, v] of changed) {
      this.emit({
        kind: 'propertyChange',
        type: obj.type,
        objectId: obj.id,
        propertyName: k,
        propertyValue: v,
        source,
        at: now,
      });
    }
    return obj;
  }

  archive(type: ObjectType, id: string, source: ChangeSource = 'CRM_UI'): boolean {
    const obj = this.get(type, id);
    if (!obj) return false;
    const now = this.clock.now();
    obj.archived = true;
    obj.archivedAt = now;
    this.touch(obj, now);
    this.emit({ kind: 'deletion', type, objectId: obj.id, source, at: now });
    return true;
  }

  /**
   * Merge two records into a new one (HubSpot gives the merged record a new id): the primary's
   * values win, the other's fill its gaps; both old ids disappear from lists and search and
   * their reads resolve to the new record; associations move over.
   */
  merge(type: ObjectType, primaryId: string, mergeId: string, source: ChangeSource = 'CRM_UI'): CrmObject {
    const primary = this.get(type, primaryId);
    const other = this.get(type, mergeId);
    if (!primary || !other) throw notFound();
    if (primary.id === other.id)
      throw apiError(400, 'VALIDATION_ERROR', 'Cannot merge an object with itself.');
    const now = this.clock.now();
    const id = this.newId(type);
    const values = new Map(other.properties);
    for (const [k, v] of primary.properties) values.set(k, v);
    const mergedIds = [
      ...(primary.properties.get('hs_merged_object_ids') ?? '').split(';'),
      ...(other.properties.get('hs_merged_object_ids') ?? '').split(';'),
      primary.id,
      other.id,
    ].filter((x) => x !== '');
    values.set('hs_merged_object_ids', mergedIds.join(';'));
    values.set('hs_object_id', id);
    const obj: CrmObject = {
      id,
      type,
      properties: values,
      createdAt: Math.min(primary.createdAt, other.createdAt),
      updatedAt: now,
      archived: false,
      versions: [],
    };
    obj.properties.set('createdate', new Date(obj.createdAt).toISOString());
    this.touch(obj, now);
    this.objects[type].set(id, obj);
    for (const old of [primary, other]) {
      this.moveAssociations(type, old.id, id);
      this.objects[type].delete(old.id);
      this.mergedInto[type].set(old.id, id);
    }
    this.emit({
      kind: 'merge',
      type,
      objectId: id,
      primaryObjectId: primary.id,
      mergedObjectIds: [other.id],
      newObjectId: id,
      source,
      at: now,
    });
    return obj;
  }

  private touch(obj: CrmObject, now: number): void {
    const email = obj.type === 'contacts' ? obj.properties.get('email') : undefined;
    if (email !== undefined) {
      const ids = this.contactsByEmail.get(email) ?? new Set<string>();
      ids.add(obj.id);
      this.contactsByEmail.set(email, ids);
    }
    obj.updatedAt = now;
    obj.properties.set(LAST_MODIFIED[obj.type], new Date(now).toISOString());
    obj.versions.push({
      at: now,
      properties: new Map(obj.properties),
      updatedAt: now,
      archived: obj.archived,
    });
    // Keep the newest version the index already has, and the ones still on their way.
    const horizon = now - this.searchLagMs;
    while (obj.versions.length > 1 && (obj.versions[1]?.at ?? Infinity) <= horizon) obj.versions.shift();
  }

  /** The version search sees now: the newest written at least `searchLagMs` ago. */
  indexed(obj: CrmObject): IndexedVersion | undefined {
    const horizon = this.clock.now() - this.searchLagMs;
    for (let i = obj.versions.length - 1; i >= 0; i--) {
      const v = obj.versions[i];
      if (v && v.at <= horizon) return v;
    }
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Associations

  private toTypeOf(from: ObjectType, typeId: number): ObjectType | undefined {
    return ASSOCIATION_TYPES.find((t) => t.from === from && t.typeId === typeId)?.to;
  }

  checkAssociationInputs(from: ObjectType, inputs: AssociationInput[]): void {
    for (const a of inputs) {
      for (const t of a.types ?? []) {
        const to = this.toTypeOf(from, t.associationTypeId);
        if (!to) {
          throw apiError(
            400,
            'VALIDATION_ERROR',
            `${t.associationTypeId} is not a valid association type id from ${SINGULAR[from]}`,
          );
        }
        if (!this.get(to, String(a.to?.id))) {
          throw apiError(
            400,
            'VALIDATION_ERROR',
            `One or more associations are invalid: ${SINGULAR[to]} ${a.to?.id} does not exist`,
          );
        }
      }
    }
  }

  /** Associate two live records (both directions are stored, as HubSpot shows them from either side). */
  associate(
    from: ObjectType,
    fromId: string,
    to: ObjectType,
    toId: string,
    typeId?: number,
  ): AssociationTypeDef {
    const def = typeId === undefined ? defaultAssociationType(from, to) : associationType(from, to, typeId);
    if (!def)
      throw apiError(400, 'VALIDATION_ERROR', `No association type ${typeId ?? ''} from ${from} to ${to}.`);
    const a = this.get(from, fromId);
    const b = this.get(to, toId);
    if (!a || !b) throw notFound();
    this.addLink(from, a.id, to, b.id, def.typeId);
    const inverse = inverseType(def);
    if (inverse) this.addLink(to, b.id, from, a.id, inverse.typeId);
    // A primary association also shows as the unlabeled one, as in HubSpot.
    if (def.primary) {
      const unlabeled = defaultAssociationType(from, to);
      const unlabeledInverse = defaultAssociationType(to, from);
      if (unlabeled) this.addLink(from, a.id, to, b.id, unlabeled.typeId);
      if (unlabeledInverse) this.addLink(to, b.id, from, a.id, unlabeledInverse.typeId);
    }
    return def;
  }

  unassociate(from: ObjectType, fromId: string, to: ObjectType, toId: string): void {
    const a = this.resolveId(from, fromId);
    const b = this.resolveId(to, toId);
    this.associations.delete(`${from}|${a}|${to}|${b}`);
    this.associations.delete(`${to}|${b}|${from}|${a}`);
  }

  private addLink(from: ObjectType, fromId: string, to: ObjectType, toId: string, typeId: number): void {
    const key = `${from}|${fromId}|${to}|${toId}`;
    const set = this.associations.get(key) ?? new Set<number>();
    set.add(typeId);
    this.associations.set(key, set);
  }

  /** Associated live records of `to` type, sorted by id, with their type ids. */
  associated(from: ObjectType, fromId: string, to: ObjectType): { id: string; typeIds: number[] }[] {
    const prefix = `${from}|${fromId}|${to}|`;
    const out: { id: string; typeIds: number[] }[] = [];
    for (const [key, types] of this.associations) {
      if (!key.startsWith(prefix)) continue;
      const id = key.slice(prefix.length);
      if (this.get(to, id)) out.push({ id, typeIds: [...types].sort((x, y) => x - y) });
    }
    return out.sort((x, y) => Number(x.id) - Number(y.id));
  }

  private moveAssociations(type: ObjectType, oldId: string, newId: string): void {
    for (const [key, types] of [...this.associations]) {
      const [f, fid, t, tid] = key.split('|') as [ObjectType, string, ObjectType, string];
      if (f === type && fid === oldId) {
        this.associations.delete(key);
        for (const ty of types) this.addLink(f, newId, t, tid, ty);
      } else if (t === type && tid === oldId) {
        this.associations.delete(key);
        for (const ty of types) this.addLink(f, fid, t, newId, ty);
      }
    }
  }

  /** Every object of a type sorted by id (list order). */
  list(type: ObjectType): CrmObject[] {
    return [...this.objects[type].values()].sort((a, b) => Number(a.id) - Number(b.id));
  }

  static isObjectType(value: string): value is ObjectType {
    return (OBJECT_TYPES as readonly string[]).includes(value);
  }
}
