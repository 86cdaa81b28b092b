/**
 * The Affinity data model the simulator keeps in memory, written from Affinity's v1 reference
 * (api-docs.affinity.co) and v2 OpenAPI document (developer.affinity.co, version 2024-01-01):
 *
 * - Persons (first/last name, emails, organization ids, type external/internal), organizations
 *   (v2: companies; name, domain(s), global flag, person ids) and opportunities (name, one list,
 *   person and organization ids).
 * - Lists of persons (entity type 0), organizations (1) or opportunities (8); each row is a list
 *   entry. An opportunity lives on exactly one list with exactly one entry.
 * - Fields with v1 value types (0 person, 1 organization, 2 dropdown, 3 number, 4 date,
 *   5 location, 6 text, 7 ranked dropdown), global or list-specific, single or multiple. Enriched
 *   fields (Affinity Data) are read-only and exist only in v2 reads.
 * - Field values: one row per value (a multi-valued cell has several), tied to an entity and,
 *   for list-specific fields, to a list entry.
 *
 * Every write goes through this class, whether it came from the API (v1) or from `sim.*` (an
 * edit "in Affinity"), so both follow the same rules and both emit webhook events.
 */
import { type Clock, systemClock, TokenRegistry } from '../http.ts';

export const ENTITY_PERSON = 0;
export const ENTITY_ORGANIZATION = 1;
export const ENTITY_OPPORTUNITY = 8;
export type EntityType = typeof ENTITY_PERSON | typeof ENTITY_ORGANIZATION | typeof ENTITY_OPPORTUNITY;

export const VALUE_TYPES = {
  person: 0,
  organization: 1,
  dropdown: 2,
  number: 3,
  date: 4,
  location: 5,
  text: 6,
  rankedDropdown: 7,
} as const;
export type ValueType = (typeof VALUE_TYPES)[keyof typeof VALUE_TYPES];

export class AffinityApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** v2 error code (`not-found`, `validation`, ...); v1 bodies carry only the message. */
    readonly code = status === 404 ? 'not-found' : status === 422 ? 'unprocessable-entity' : 'bad-request',
    readonly param?: string,
  ) {
    super(message);
  }
}

export type Person = {
  id: number;
  type: 0 | 1;
  firstName: string;
  lastName: string | null;
  emails: string[];
  organizationIds: number[];
  createdAt: number;
};

export type Organization = {
  id: number;
  name: string;
  domain: string | null;
  domains: string[];
  global: boolean;
  personIds: number[];
  createdAt: number;
};

export type Opportunity = {
  id: number;
  name: string;
  listId: number;
  personIds: number[];
  organizationIds: number[];
  createdAt: number;
};

export type AffinityList = {
  id: number;
  name: string;
  type: EntityType;
  isPublic: boolean;
  ownerId: number;
  creatorId: number;
  createdAt: number;
};

export type ListEntry = {
  id: number;
  listId: number;
  entityId: number;
  entityType: EntityType;
  creatorId: number | null;
  createdAt: number;
};

export type DropdownOption = { id: number; text: string; rank: number; color: number };

export type Field = {
  id: number;
  name: string;
  /** null for a global field. */
  listId: number | null;
  entityType: EntityType;
  valueType: ValueType;
  allowsMultiple: boolean;
  trackChanges: boolean;
  dropdownOptions: DropdownOption[];
};

export type LocationValue = {
  street_address: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  continent: string | null;
};

/** What a field value holds, by value type: ids for persons, organizations and options. */
export type StoredValue = number | string | LocationValue;

export type FieldValue = {
  id: number;
  fieldId: number;
  entityId: number;
  entityType: EntityType;
  listEntryId: number | null;
  value: StoredValue;
  createdAt: number;
  updatedAt: number | null;
};

/** A read-only enriched field (Affinity Data), shown by v2 reads only. */
export type EnrichedField = {
  id: string;
  name: string;
  entityType: typeof ENTITY_PERSON | typeof ENTITY_ORGANIZATION;
  valueType: 'text' | 'location' | 'filterable-text-multi';
};

export type WebhookSubscription = {
  id: number;
  webhookUrl: string;
  subscriptions: string[];
  disabled: boolean;
  createdBy: number;
};

export type ChangeSource = 'api' | 'app';

/** A change as a webhook reports it: `type` is Affinity's event name, `body` the resource. */
export type ChangeEvent = { type: string; body: Record<string, unknown>; at: number; source: ChangeSource };

export type User = { id: number; firstName: string; lastName: string; email: string };

export type AffinityStateOptions = {
  clock?: Clock;
  /** First id of every sequence (default 1000); ids then go up by one per resource kind. */
  idSeed?: number;
  tenant?: { id?: number; name?: string; subdomain?: string };
};

export const WEBHOOK_EVENTS = [
  'list.created',
  'list.updated',
  'list.deleted',
  'list_entry.created',
  'list_entry.deleted',
  'note.created',
  'note.updated',
  'note.deleted',
  'field.created',
  'field.updated',
  'field.deleted',
  'field_value.created',
  'field_value.updated',
  'field_value.deleted',
  'person.created',
  'person.updated',
  'person.deleted',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.merged',
  'opportunity.created',
  'opportunity.updated',
  'opportunity.deleted',
  'file.created',
  'file.deleted',
  'reminder.created',
  'reminder.updated',
  'reminder.deleted',
] as const;

/** Affinity allows three webhook subscriptions per instance. */
export const MAX_WEBHOOK_SUBSCRIPTIONS = 3;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/;

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function uniq<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

export class AffinityState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly tenant: { id: number; name: string; subdomain: string };
  /** The internal users; the first owns the default API key. */
  readonly users: User[] = [];
  readonly persons = new Map<number, Person>();
  readonly organizations = new Map<number, Organization>();
  readonly opportunities = new Map<number, Opportunity>();
  readonly lists = new Map<number, AffinityList>();
  readonly listEntries = new Map<number, ListEntry>();
  readonly fields = new Map<number, Field>();
  readonly fieldValues = new Map<number, FieldValue>();
  readonly enrichedFields: EnrichedField[] = [];
  /** Enriched values by `${entityType}:${entityId}` then field id. */
  readonly enrichedValues = new Map<string, Map<string, unknown>>();
  readonly webhooks = new Map<number, WebhookSubscription>();
  /** When each API key was created (whoami `grant.createdAt`). */
  readonly keyCreatedAt = new Map<string, number>();
  private readonly sequences = new Map<string, number>();
  private readonly idSeed: number;
  private readonly listeners: ((e: ChangeEvent) => void)[] = [];

  constructor(options: AffinityStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.tokens = new TokenRegistry(this.clock);
    this.idSeed = options.idSeed ?? 1000;
    this.tenant = {
      id: options.tenant?.id ?? 7301,
      name: options.tenant?.name ?? 'Lockstep Ventures',
      subdomain: options.tenant?.subdomain ?? 'lockstep-ventures',
    };
  }

  nextId(kind: string): number {
    const next = (this.sequences.get(kind) ?? this.idSeed) + 1;
    this.sequences.set(kind, next);
    return next;
  }

  onChange(listener: (e: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(type: string, body: Record<string, unknown>, source: ChangeSource): void {
    const e: ChangeEvent = { type, body, at: this.clock.now(), source };
    for (const l of this.listeners) l(e);
  }

  // -------------------------------------------------------------------------------------------
  // Users

  addUser(firstName: string, lastName: string, email: string): User {
    const person = this.createPerson(
      { first_name: firstName, last_name: lastName, emails: [email] },
      'app',
      1,
    );
    const user = { id: person.id, firstName, lastName, email };
    this.users.push(user);
    return user;
  }

  get owner(): User {
    const u = this.users[0];
    if (!u) throw new Error('the simulator has no user');
    return u;
  }

  // -------------------------------------------------------------------------------------------
  // Lookups

  person(id: number): Person {
    const p = this.persons.get(id);
    if (!p) throw new AffinityApiError(404, 'Person not found.');
    return p;
  }

  organization(id: number): Organization {
    const o = this.organizations.get(id);
    if (!o) throw new AffinityApiError(404, 'Organization not found.');
    return o;
  }

  opportunity(id: number): Opportunity {
    const o = this.opportunities.get(id);
    if (!o) throw new AffinityApiError(404, 'Opportunity not found.');
    return o;
  }

  list(id: number): AffinityList {
    const l = this.lists.get(id);
    if (!l) throw new AffinityApiError(404, 'List not found.');
    return l;
  }

  listEntry(listId: number, entryId: number): ListEntry {
    const e = this.listEntries.get(entryId);
    if (!e || e.listId !== listId) throw new AffinityApiError(404, 'List entry not found.');
    return e;
  }

  field(id: number): Field {
    const f = this.fields.get(id);
    if (!f) throw new AffinityApiError(404, 'Field not found.');
    return f;
  }

  fieldValue(id: number): FieldValue {
    const v = this.fieldValues.get(id);
    if (!v) throw new AffinityApiError(404, 'Field value not found.');
    return v;
  }

  entityExists(type: EntityType, id: number): boolean {
    if (type === ENTITY_PERSON) return this.persons.has(id);
    if (type === ENTITY_ORGANIZATION) return this.organizations.has(id);
    return this.opportunities.has(id);
  }

  /** Which kind of entity an id names (ids never collide across kinds here). */
  entityTypeOf(id: number): EntityType | undefined {
    if (this.persons.has(id)) return ENTITY_PERSON;
    if (this.organizations.has(id)) return ENTITY_ORGANIZATION;
    if (this.opportunities.has(id)) return ENTITY_OPPORTUNITY;
    return undefined;
  }

  entriesOf(entityType: EntityType, entityId: number): ListEntry[] {
    return [...this.listEntries.values()].filter(
      (e) => e.entityType === entityType && e.entityId === entityId,
    );
  }

  primaryEmail(p: Person): string | null {
    return p.emails[0] ?? null;
  }

  // -------------------------------------------------------------------------------------------
  // Persons

  private validateEmails(emails: unknown, exceptId?: number): string[] {
    if (!Array.isArray(emails))
      throw new AffinityApiError(422, 'emails must be an array.', 'validation', 'emails');
    const out: string[] = [];
    for (const e of emails) {
      if (typeof e !== 'string' || !EMAIL.test(e.trim()))
        throw new AffinityApiError(422, `${String(e)} is not a valid email address.`, 'validation', 'emails');
      out.push(e.trim().toLowerCase());
    }
    for (const email of out) {
      for (const p of this.persons.values()) {
        if (p.id !== exceptId && p.emails.includes(email))
          throw new AffinityApiError(
            422,
            `An existing person with email ${email} was found.`,
            'validation',
            'emails',
          );
      }
    }
    return uniq(out);
  }

  private validateIds(ids: unknown, kind: 'organization' | 'person', param: string): number[] {
    if (!Array.isArray(ids))
      throw new AffinityApiError(422, `${param} must be an array.`, 'validation', param);
    const out: number[] = [];
    for (const id of ids) {
      const n = typeof id === 'string' ? Number(id) : id;
      const exists =
        kind === 'organization' ? this.organizations.has(n as number) : this.persons.has(n as number);
      if (typeof n !== 'number' || !Number.isInteger(n) || !exists)
        throw new AffinityApiError(422, `${kind} ${String(id)} does not exist.`, 'validation', param);
      out.push(n);
    }
    return uniq(out);
  }

  private requireName(v: unknown, param: string): string {
    if (typeof v !== 'string' || v.trim() === '')
      throw new AffinityApiError(422, `${param} is required.`, 'validation', param);
    return v.trim();
  }

  createPerson(input: Record<string, unknown>, source: ChangeSource = 'api', type: 0 | 1 = 0): Person {
    const firstName = this.requireName(input.first_name, 'first_name');
    if (input.last_name === undefined)
      throw new AffinityApiError(422, 'last_name is required.', 'validation', 'last_name');
    if (input.last_name !== null && typeof input.last_name !== 'string')
      throw new AffinityApiError(422, 'last_name must be a string.', 'validation', 'last_name');
    if (input.emails === undefined)
      throw new AffinityApiError(422, 'emails is required.', 'validation', 'emails');
    const emails = this.validateEmails(input.emails);
    const organizationIds =
      input.organization_ids === undefined
        ? []
        : this.validateIds(input.organization_ids, 'organization', 'organization_ids');
    const person: Person = {
      id: this.nextId('entity'),
      type,
      firstName,
      lastName: (input.last_name as string | null) ?? null,
      emails,
      organizationIds,
      createdAt: this.clock.now(),
    };
    this.persons.set(person.id, person);
    for (const oid of organizationIds) this.linkPersonOrg(person.id, oid);
    this.emit('person.created', this.v1Person(person), source);
    return person;
  }

  updatePerson(id: number, input: Record<string, unknown>, source: ChangeSource = 'api'): Person {
    const p = this.person(id);
    const next = { ...p };
    if (input.first_name !== undefined) next.firstName = this.requireName(input.first_name, 'first_name');
    if (input.last_name !== undefined) {
      if (input.last_name !== null && typeof input.last_name !== 'string')
        throw new AffinityApiError(422, 'last_name must be a string.', 'validation', 'last_name');
      next.lastName = input.last_name as string | null;
    }
    if (input.emails !== undefined) next.emails = this.validateEmails(input.emails, id);
    if (input.organization_ids !== undefined)
      next.organizationIds = this.validateIds(input.organization_ids, 'organization', 'organization_ids');
    for (const oid of p.organizationIds)
      if (!next.organizationIds.includes(oid)) this.unlinkPersonOrg(id, oid);
    for (const oid of next.organizationIds) this.linkPersonOrg(id, oid);
    Object.assign(p, next);
    this.emit('person.updated', this.v1Person(p), source);
    return p;
  }

  deletePerson(id: number, source: ChangeSource = 'api'): void {
    const p = this.person(id);
    if (p.type === 1) throw new AffinityApiError(422, 'Internal persons cannot be deleted.');
    for (const oid of p.organizationIds) this.unlinkPersonOrg(id, oid);
    for (const o of this.opportunities.values()) o.personIds = o.personIds.filter((x) => x !== id);
    this.removeEntityData(ENTITY_PERSON, id, source);
    this.persons.delete(id);
    this.emit('person.deleted', this.v1Person(p), source);
  }

  private linkPersonOrg(personId: number, orgId: number): void {
    const p = this.persons.get(personId);
    const o = this.organizations.get(orgId);
    if (p && !p.organizationIds.includes(orgId)) p.organizationIds.push(orgId);
    if (o && !o.personIds.includes(personId)) o.personIds.push(personId);
  }

  private unlinkPersonOrg(personId: number, orgId: number): void {
    const p = this.persons.get(personId);
    const o = this.organizations.get(orgId);
    if (p) p.organizationIds = p.organizationIds.filter((x) => x !== orgId);
    if (o) o.personIds = o.personIds.filter((x) => x !== personId);
  }

  // -------------------------------------------------------------------------------------------
  // Organizations

  private normalizeDomain(v: unknown): string | null {
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string')
      throw new AffinityApiError(422, 'domain must be a string.', 'validation', 'domain');
    const d = v
      .trim()
      .toLowerCase()
      .replace(/^https?:\/\//, '')
      .replace(/^www\./, '')
      .replace(/\/.*$/, '');
    if (!DOMAIN.test(d))
      throw new AffinityApiError(422, `${v} is not a valid domain.`, 'validation', 'domain');
    return d;
  }

  createOrganization(
    input: Record<string, unknown>,
    source: ChangeSource = 'api',
    global = false,
  ): Organization {
    const name = this.requireName(input.name, 'name');
    const domain = this.normalizeDomain(input.domain);
    const personIds =
      input.person_ids === undefined ? [] : this.validateIds(input.person_ids, 'person', 'person_ids');
    const org: Organization = {
      id: this.nextId('entity'),
      name,
      domain,
      domains: domain ? [domain] : [],
      global,
      personIds: [],
      createdAt: this.clock.now(),
    };
    this.organizations.set(org.id, org);
    for (const pid of personIds) this.linkPersonOrg(pid, org.id);
    this.emit('organization.created', this.v1Organization(org), source);
    return org;
  }

  updateOrganization(id: number, input: Record<string, unknown>, source: ChangeSource = 'api'): Organization {
    const o = this.organization(id);
    if (o.global && (input.name !== undefined || input.domain !== undefined))
      throw new AffinityApiError(422, 'The name and domain of a global organization cannot be changed.');
    const name = input.name !== undefined ? this.requireName(input.name, 'name') : o.name;
    const domain = input.domain !== undefined ? this.normalizeDomain(input.domain) : o.domain;
    const personIds =
      input.person_ids !== undefined ? this.validateIds(input.person_ids, 'person', 'person_ids') : undefined;
    o.name = name;
    if (input.domain !== undefined) {
      o.domain = domain;
      o.domains = domain ? uniq([domain, ...o.domains.filter((d) => d !== domain)]) : [];
    }
    if (personIds) {
      for (const pid of [...o.personIds]) if (!personIds.includes(pid)) this.unlinkPersonOrg(pid, id);
      for (const pid of personIds) this.linkPersonOrg(pid, id);
    }
    this.emit('organization.updated', this.v1Organization(o), source);
    return o;
  }

  deleteOrganization(id: number, source: ChangeSource = 'api'): void {
    const o = this.organization(id);
    if (o.global) throw new AffinityApiError(422, 'Global organizations cannot be deleted.');
    for (const pid of [...o.personIds]) this.unlinkPersonOrg(pid, id);
    for (const opp of this.opportunities.values())
      opp.organizationIds = opp.organizationIds.filter((x) => x !== id);
    this.removeEntityData(ENTITY_ORGANIZATION, id, source);
    this.organizations.delete(id);
    this.emit('organization.deleted', this.v1Organization(o), source);
  }

  // -------------------------------------------------------------------------------------------
  // Opportunities

  createOpportunity(
    input: Record<string, unknown>,
    source: ChangeSource = 'api',
    creatorId?: number,
  ): Opportunity {
    const name = this.requireName(input.name, 'name');
    const listId = typeof input.list_id === 'string' ? Number(input.list_id) : input.list_id;
    if (typeof listId !== 'number' || !Number.isInteger(listId))
      throw new AffinityApiError(422, 'list_id is required.', 'validation', 'list_id');
    const list = this.lists.get(listId);
    if (!list) throw new AffinityApiError(404, 'List not found.');
    if (list.type !== ENTITY_OPPORTUNITY)
      throw new AffinityApiError(422, 'The list must be an opportunity list.', 'validation', 'list_id');
    const personIds =
      input.person_ids === undefined ? [] : this.validateIds(input.person_ids, 'person', 'person_ids');
    const organizationIds =
      input.organization_ids === undefined
        ? []
        : this.validateIds(input.organization_ids, 'organization', 'organization_ids');
    const now = this.clock.now();
    const opp: Opportunity = {
      id: this.nextId('entity'),
      name,
      listId,
      personIds,
      organizationIds,
      createdAt: now,
    };
    this.opportunities.set(opp.id, opp);
    const entry: ListEntry = {
      id: this.nextId('list_entry'),
      listId,
      entityId: opp.id,
      entityType: ENTITY_OPPORTUNITY,
      creatorId: creatorId ?? this.owner.id,
      createdAt: now,
    };
    this.listEntries.set(entry.id, entry);
    this.emit('opportunity.created', this.v1Opportunity(opp), source);
    this.emit('list_entry.created', this.v1ListEntry(entry), source);
    return opp;
  }

  updateOpportunity(id: number, input: Record<string, unknown>, source: ChangeSource = 'api'): Opportunity {
    const o = this.opportunity(id);
    const name = input.name !== undefined ? this.requireName(input.name, 'name') : o.name;
    const personIds =
      input.person_ids !== undefined
        ? this.validateIds(input.person_ids, 'person', 'person_ids')
        : o.personIds;
    const organizationIds =
      input.organization_ids !== undefined
        ? this.validateIds(input.organization_ids, 'organization', 'organization_ids')
        : o.organizationIds;
    Object.assign(o, { name, personIds, organizationIds });
    this.emit('opportunity.updated', this.v1Opportunity(o), source);
    return o;
  }

  deleteOpportunity(id: number, source: ChangeSource = 'api'): void {
    const o = this.opportunity(id);
    this.removeEntityData(ENTITY_OPPORTUNITY, id, source);
    this.opportunities.delete(id);
    this.emit('opportunity.deleted', this.v1Opportunity(o), source);
  }

  /** Removes an entity's list entries and field values (with their events). */
  private removeEntityData(type: EntityType, id: number, source: ChangeSource): void {
    for (const v of [...this.fieldValues.values()])
      if (v.entityType === type && v.entityId === id) this.dropFieldValue(v, source);
    for (const e of this.entriesOf(type, id)) {
      this.listEntries.delete(e.id);
      this.emit('list_entry.deleted', this.v1ListEntry(e), source);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Lists and list entries

  createList(name: string, type: EntityType, isPublic = true): AffinityList {
    const list: AffinityList = {
      id: this.nextId('list'),
      name,
      type,
      isPublic,
      ownerId: this.owner.id,
      creatorId: this.owner.id,
      createdAt: this.clock.now(),
    };
    this.lists.set(list.id, list);
    return list;
  }

  createListEntry(listId: number, input: Record<string, unknown>, source: ChangeSource = 'api'): ListEntry {
    const list = this.list(listId);
    if (list.type === ENTITY_OPPORTUNITY)
      throw new AffinityApiError(
        422,
        'Opportunities cannot be added to a list; create the opportunity instead.',
      );
    const entityId = typeof input.entity_id === 'string' ? Number(input.entity_id) : input.entity_id;
    if (typeof entityId !== 'number' || !Number.isInteger(entityId))
      throw new AffinityApiError(422, 'entity_id is required.', 'validation', 'entity_id');
    if (!this.entityExists(list.type, entityId))
      throw new AffinityApiError(
        422,
        `${list.type === ENTITY_PERSON ? 'Person' : 'Organization'} ${entityId} does not exist.`,
        'validation',
        'entity_id',
      );
    let creatorId = this.owner.id;
    if (input.creator_id !== undefined) {
      const c = Number(input.creator_id);
      if (!this.users.some((u) => u.id === c))
        throw new AffinityApiError(
          422,
          'creator_id must be a person who can access Affinity.',
          'validation',
          'creator_id',
        );
      creatorId = c;
    }
    const entry: ListEntry = {
      id: this.nextId('list_entry'),
      listId,
      entityId,
      entityType: list.type,
      creatorId,
      createdAt: this.clock.now(),
    };
    this.listEntries.set(entry.id, entry);
    this.emit('list_entry.created', this.v1ListEntry(entry), source);
    return entry;
  }

  deleteListEntry(listId: number, entryId: number, source: ChangeSource = 'api'): void {
    const e = this.listEntry(listId, entryId);
    if (e.entityType === ENTITY_OPPORTUNITY) {
      // Removing an opportunity's only entry deletes the opportunity.
      this.deleteOpportunity(e.entityId, source);
      return;
    }
    for (const v of [...this.fieldValues.values()])
      if (v.listEntryId === e.id) this.dropFieldValue(v, source);
    this.listEntries.delete(e.id);
    this.emit('list_entry.deleted', this.v1ListEntry(e), source);
  }

  // -------------------------------------------------------------------------------------------
  // Fields and field values

  createField(input: Omit<Field, 'id' | 'dropdownOptions' | 'trackChanges'> & { options?: string[] }): Field {
    const field: Field = {
      id: this.nextId('field'),
      name: input.name,
      listId: input.listId,
      entityType: input.entityType,
      valueType: input.valueType,
      allowsMultiple: input.allowsMultiple,
      trackChanges: [0, 1, 3, 4, 5, 7].includes(input.valueType),
      dropdownOptions: (input.options ?? []).map((text, rank) => ({
        id: this.nextId('dropdown_option'),
        text,
        rank,
        color: rank % 8,
      })),
    };
    this.fields.set(field.id, field);
    return field;
  }

  /** Checks and converts a v1 write value for a field to what is stored. */
  private parseValue(field: Field, raw: unknown): StoredValue {
    const bad = (why: string) =>
      new AffinityApiError(422, `Invalid value for field ${field.id}: ${why}`, 'validation', 'value');
    if (raw === undefined || raw === null) throw bad('value is required');
    switch (field.valueType) {
      case VALUE_TYPES.person:
      case VALUE_TYPES.organization: {
        const id = typeof raw === 'string' ? Number(raw) : raw;
        const exists =
          field.valueType === VALUE_TYPES.person
            ? this.persons.has(id as number)
            : this.organizations.has(id as number);
        if (typeof id !== 'number' || !exists)
          throw bad(
            `${field.valueType === VALUE_TYPES.person ? 'person' : 'organization'} ${String(raw)} does not exist`,
          );
        return id;
      }
      case VALUE_TYPES.dropdown: {
        if (typeof raw !== 'string' && typeof raw !== 'number')
          throw bad('expected the text of a dropdown option');
        const opt = field.dropdownOptions.find(
          (o) => o.id === raw || (typeof raw === 'string' && o.text.toLowerCase() === raw.toLowerCase()),
        );
        if (!opt) throw bad(`${String(raw)} is not an option of ${field.name}`);
        return opt.id;
      }
      case VALUE_TYPES.rankedDropdown: {
        const id = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
        const opt = field.dropdownOptions.find((o) => o.id === id);
        if (!opt) throw bad('expected the id of a dropdown option');
        return opt.id;
      }
      case VALUE_TYPES.number: {
        const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
        if (typeof n !== 'number' || !Number.isFinite(n)) throw bad('expected a number');
        return n;
      }
      case VALUE_TYPES.date: {
        const t = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
        if (Number.isNaN(t)) throw bad('expected an ISO 8601 date');
        return iso(t);
      }
      case VALUE_TYPES.location: {
        if (typeof raw !== 'object' || Array.isArray(raw)) throw bad('expected a location object');
        const o = raw as Record<string, unknown>;
        const s = (k: string) => (typeof o[k] === 'string' && o[k] !== '' ? (o[k] as string) : null);
        return {
          street_address: s('street_address'),
          city: s('city'),
          state: s('state'),
          country: s('country'),
          continent: s('continent'),
        };
      }
      default: {
        if (typeof raw !== 'string') throw bad('expected a string');
        return raw;
      }
    }
  }

  createFieldValue(input: Record<string, unknown>, source: ChangeSource = 'api'): FieldValue {
    const fieldId = Number(input.field_id);
    if (!Number.isInteger(fieldId) || input.field_id === undefined)
      throw new AffinityApiError(422, 'field_id is required.', 'validation', 'field_id');
    const field = this.fields.get(fieldId);
    if (!field) throw new AffinityApiError(404, 'Field not found.');
    const entityId = Number(input.entity_id);
    if (input.entity_id === undefined || !Number.isInteger(entityId))
      throw new AffinityApiError(422, 'entity_id is required.', 'validation', 'entity_id');
    const entityType = this.entityTypeOf(entityId);
    if (entityType === undefined || entityType !== field.entityType)
      throw new AffinityApiError(
        422,
        `entity ${entityId} does not match field ${field.id}.`,
        'validation',
        'entity_id',
      );
    let listEntryId: number | null = null;
    if (field.listId !== null) {
      if (input.list_entry_id === undefined || input.list_entry_id === null)
        throw new AffinityApiError(
          422,
          'list_entry_id is required for a list-specific field.',
          'validation',
          'list_entry_id',
        );
      const entry = this.listEntries.get(Number(input.list_entry_id));
      if (!entry || entry.listId !== field.listId || entry.entityId !== entityId)
        throw new AffinityApiError(
          422,
          'list_entry_id does not belong to the field list and entity.',
          'validation',
          'list_entry_id',
        );
      listEntryId = entry.id;
    } else if (input.list_entry_id !== undefined && input.list_entry_id !== null) {
      throw new AffinityApiError(
        422,
        'list_entry_id is only allowed for list-specific fields.',
        'validation',
        'list_entry_id',
      );
    }
    if (entityType === ENTITY_OPPORTUNITY && field.listId === null)
      throw new AffinityApiError(422, 'Opportunities cannot have global field values.');
    const value = this.parseValue(field, input.value);
    const cell = this.cellValues(field.id, entityId, listEntryId);
    if (!field.allowsMultiple && cell.length > 0)
      throw new AffinityApiError(
        422,
        `Field ${field.id} allows a single value; update field value ${cell[0]?.id} instead.`,
      );
    const fv: FieldValue = {
      id: this.nextId('field_value'),
      fieldId,
      entityId,
      entityType,
      listEntryId,
      value,
      createdAt: this.clock.now(),
      updatedAt: null,
    };
    this.fieldValues.set(fv.id, fv);
    this.emit('field_value.created', this.v1FieldValue(fv), source);
    return fv;
  }

  updateFieldValue(id: number, input: Record<string, unknown>, source: ChangeSource = 'api'): FieldValue {
    const fv = this.fieldValue(id);
    const value = this.parseValue(this.field(fv.fieldId), input.value);
    fv.value = value;
    fv.updatedAt = this.clock.now();
    this.emit('field_value.updated', this.v1FieldValue(fv), source);
    return fv;
  }

  deleteFieldValue(id: number, source: ChangeSource = 'api'): void {
    this.dropFieldValue(this.fieldValue(id), source);
  }

  private dropFieldValue(fv: FieldValue, source: ChangeSource): void {
    this.fieldValues.delete(fv.id);
    this.emit('field_value.deleted', this.v1FieldValue(fv), source);
  }

  cellValues(fieldId: number, entityId: number, listEntryId: number | null): FieldValue[] {
    return [...this.fieldValues.values()].filter(
      (v) => v.fieldId === fieldId && v.entityId === entityId && v.listEntryId === listEntryId,
    );
  }

  setEnriched(entityType: EntityType, entityId: number, fieldId: string, value: unknown): void {
    const key = `${entityType}:${entityId}`;
    let m = this.enrichedValues.get(key);
    if (!m) {
      m = new Map();
      this.enrichedValues.set(key, m);
    }
    m.set(fieldId, value);
  }

  // -------------------------------------------------------------------------------------------
  // Webhook subscriptions

  createWebhook(url: string, subscriptions: string[], createdBy: number): WebhookSubscription {
    if (this.webhooks.size >= MAX_WEBHOOK_SUBSCRIPTIONS)
      throw new AffinityApiError(
        422,
        'There is a limit of three webhook subscriptions per Affinity instance.',
      );
    const w: WebhookSubscription = {
      id: this.nextId('webhook'),
      webhookUrl: url,
      subscriptions,
      disabled: false,
      createdBy,
    };
    this.webhooks.set(w.id, w);
    return w;
  }

  // -------------------------------------------------------------------------------------------
  // v1 renderings (also the webhook bodies)

  v1Person(p: Person): Record<string, unknown> {
    return {
      id: p.id,
      type: p.type,
      first_name: p.firstName,
      last_name: p.lastName,
      primary_email: this.primaryEmail(p),
      emails: [...p.emails],
      organization_ids: [...p.organizationIds],
    };
  }

  v1Organization(o: Organization): Record<string, unknown> {
    return {
      id: o.id,
      name: o.name,
      domain: o.domain,
      domains: [...o.domains],
      global: o.global,
      person_ids: [...o.personIds],
    };
  }

  v1Opportunity(o: Opportunity): Record<string, unknown> {
    return {
      id: o.id,
      name: o.name,
      person_ids: [...o.personIds],
      organization_ids: [...o.organizationIds],
      list_entries: this.entriesOf(ENTITY_OPPORTUNITY, o.id).map((e) => this.v1ListEntryBrief(e, true)),
    };
  }

  v1ListEntryBrief(e: ListEntry, withType = false): Record<string, unknown> {
    return {
      id: e.id,
      list_id: e.listId,
      creator_id: e.creatorId,
      entity_id: e.entityId,
      ...(withType ? { entity_type: e.entityType } : {}),
      created_at: iso(e.createdAt),
    };
  }

  v1Entity(type: EntityType, id: number): Record<string, unknown> | null {
    if (type === ENTITY_PERSON) {
      const p = this.persons.get(id);
      return p
        ? {
            id: p.id,
            type: p.type,
            first_name: p.firstName,
            last_name: p.lastName,
            primary_email: this.primaryEmail(p),
            emails: [...p.emails],
          }
        : null;
    }
    if (type === ENTITY_ORGANIZATION) {
      const o = this.organizations.get(id);
      return o
        ? { id: o.id, name: o.name, domain: o.domain, domains: [...o.domains], global: o.global }
        : null;
    }
    const o = this.opportunities.get(id);
    return o ? { id: o.id, name: o.name } : null;
  }

  v1ListEntry(e: ListEntry): Record<string, unknown> {
    return {
      id: e.id,
      list_id: e.listId,
      creator_id: e.creatorId,
      entity_id: e.entityId,
      entity_type: e.entityType,
      created_at: iso(e.createdAt),
      entity: this.v1Entity(e.entityType, e.entityId),
    };
  }

  v1Value(fv: Pick<FieldValue, 'fieldId' | 'value'>): unknown {
    const field = this.fields.get(fv.fieldId);
    if (!field) return fv.value;
    if (field.valueType === VALUE_TYPES.rankedDropdown) {
      const o = field.dropdownOptions.find((x) => x.id === fv.value);
      return o ? { id: o.id, text: o.text, rank: o.rank, color: o.color } : null;
    }
    if (field.valueType === VALUE_TYPES.dropdown) {
      return field.dropdownOptions.find((x) => x.id === fv.value)?.text ?? null;
    }
    return fv.value;
  }

  v1FieldValue(fv: FieldValue): Record<string, unknown> {
    return {
      id: fv.id,
      field_id: fv.fieldId,
      list_entry_id: fv.listEntryId,
      entity_id: fv.entityId,
      created_at: iso(fv.createdAt),
      updated_at: fv.updatedAt === null ? null : iso(fv.updatedAt),
      value: this.v1Value(fv),
    };
  }

  v1Field(f: Field, withModifiedNames = false, withOptions = true): Record<string, unknown> {
    const listName = f.listId !== null ? this.lists.get(f.listId)?.name : undefined;
    return {
      id: f.id,
      name: withModifiedNames && listName ? `[${listName}] ${f.name}` : f.name,
      list_id: f.listId,
      enrichment_source: 'none',
      value_type: f.valueType,
      allows_multiple: f.allowsMultiple,
      track_changes: f.trackChanges,
      dropdown_options: withOptions
        ? f.dropdownOptions.map((o) => ({ id: o.id, text: o.text, rank: o.rank, color: o.color }))
        : [],
    };
  }

  v1Webhook(w: WebhookSubscription): Record<string, unknown> {
    return {
      id: w.id,
      webhook_url: w.webhookUrl,
      subscriptions: [...w.subscriptions],
      disabled: w.disabled,
      created_by: w.createdBy,
    };
  }
}
