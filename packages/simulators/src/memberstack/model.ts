/**
 * The in-memory Memberstack app behind the simulator: members (with custom fields, metadata,
 * a JSON blob and plan connections), the app's plans and custom field definitions, and its
 * secret keys. Sandbox (`sk_sb_`) and live (`sk_`) keys see separate members, as in Memberstack.
 * Routes (routes.ts) turn HTTP into calls here; tests call the same methods to edit "in
 * Memberstack" (the dashboard), with the same rules and the same webhooks.
 */
import { type Clock, randomAlphanumeric, seededRandom, systemClock, TokenRegistry } from '../http.ts';

// ---------------------------------------------------------------------------------------------
// Errors: Memberstack answers {"code": "...", "message": "..."}; most codes are "generic-message".

export class MemberstackApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  get body(): { code: string; message: string } {
    return { code: this.code, message: this.message };
  }
}

const generic = (status: number, message: string) =>
  new MemberstackApiError(status, 'generic-message', message);

/** The wording the official client documents for a write to a member that does not exist. */
export const NO_MEMBER_MESSAGE = 'There is no member with this identifier.';
export const noMember = () => generic(400, NO_MEMBER_MESSAGE);
export const invalidEmail = () =>
  new MemberstackApiError(400, 'invalid-email', 'Please provide a valid email address.');
export const invalid = (message: string) => generic(400, message);

// ---------------------------------------------------------------------------------------------
// App configuration: plans and custom fields are made in the dashboard, never over the Admin API.

export type Mode = 'sandbox' | 'live';

export type PlanDef = {
  /** `pln_...` */
  id: string;
  name: string;
  /** Only free plans can be attached with the Admin API; paid ones need a Stripe checkout. */
  free: boolean;
  /** Permissions a member gets while the plan is active. */
  permissions: string[];
  /** Paid plans: price in cents, currency, and whether it renews. */
  amount?: number;
  currency?: string;
  interval?: 'month' | 'year' | 'once';
};

export type CustomFieldDef = { key: string; label: string };

export const DEFAULT_CUSTOM_FIELDS: CustomFieldDef[] = [
  { key: 'first-name', label: 'First name' },
  { key: 'last-name', label: 'Last name' },
  { key: 'company', label: 'Company' },
  { key: 'job-title', label: 'Job title' },
  { key: 'phone', label: 'Phone' },
  { key: 'country', label: 'Country' },
];

export const DEFAULT_PLANS: PlanDef[] = [
  { id: 'pln_community-x7k2m9q4', name: 'Community', free: true, permissions: ['view:community'] },
  { id: 'pln_newsletter-b3n8r1t6', name: 'Newsletter', free: true, permissions: [] },
  {
    id: 'pln_pro-monthly-h5d0w2z8',
    name: 'Pro',
    free: false,
    permissions: ['view:community', 'view:pro'],
    amount: 2900,
    currency: 'usd',
    interval: 'month',
  },
  {
    id: 'pln_team-annual-q9v4c7s1',
    name: 'Team',
    free: false,
    permissions: ['view:community', 'view:pro', 'manage:team'],
    amount: 29000,
    currency: 'usd',
    interval: 'year',
  },
];

/** Memberstack's test mode holds at most 50 members (Quick Start: "Limited to 50 test members"). */
export const SANDBOX_MEMBER_LIMIT = 50;

// ---------------------------------------------------------------------------------------------
// Members

export type Payment = {
  amount: number;
  currency: string;
  status: string;
  lastBillingDate: number | null;
  nextBillingDate: number | null;
  cancelAtDate: number | null;
  lastInvoice: string | null;
  lastReceipt: string | null;
  card: string;
};

export type PlanConnection = {
  /** `con_...` */
  id: string;
  planId: string;
  status: 'ACTIVE' | 'CANCELED' | 'PAST_DUE' | 'TRIALING';
  active: boolean;
  type: 'FREE' | 'SUBSCRIPTION' | 'ONETIME';
  payment: Payment | null;
};

export type JsonObject = Record<string, unknown>;

export type Member = {
  /** `mem_...` */
  id: string;
  mode: Mode;
  /** The number list paging runs on (`endCursor`, `after`): grows with creation. */
  cursor: number;
  email: string;
  password: string;
  verified: boolean;
  customFields: Record<string, unknown>;
  metaData: JsonObject;
  json: JsonObject;
  loginRedirect: string | null;
  profileImage: string | null;
  stripeCustomerId: string | null;
  lastLogin: number | null;
  createdAt: number;
  planConnections: PlanConnection[];
};

export type ChangeEvent =
  | { event: 'member.created'; member: Member; at: number }
  | { event: 'member.updated'; member: Member; reason: string[]; at: number }
  | { event: 'member.deleted'; memberId: string; mode: Mode; at: number }
  | {
      event: 'member.plan.added' | 'member.plan.canceled';
      member: Member;
      connection: PlanConnection;
      at: number;
    };

/** What a create takes (the Admin API's POST /members body). */
export type CreateMemberInput = {
  email: string;
  password: string;
  plans?: { planId: string }[];
  customFields?: Record<string, unknown>;
  metaData?: JsonObject;
  json?: JsonObject;
  loginRedirect?: string;
};

/** What an update takes (PATCH /members/:id). */
export type UpdateMemberInput = {
  email?: string;
  verified?: boolean;
  customFields?: Record<string, unknown>;
  metaData?: JsonObject;
  json?: JsonObject;
  loginRedirect?: string | null;
  profileImage?: string | null;
};

export type ListOptions = { after?: number; limit: number; order: 'ASC' | 'DESC' };

export type ListPage = { members: Member[]; totalCount: number; endCursor: number; hasNextPage: boolean };

// ---------------------------------------------------------------------------------------------
// Rendering: the member object as the Admin API returns it.

const iso = (ms: number) => new Date(ms).toISOString();

export function renderConnection(state: MemberstackState, c: PlanConnection): Record<string, unknown> {
  return {
    id: c.id,
    active: c.active,
    status: c.status,
    planId: c.planId,
    planName: state.plan(c.planId)?.name ?? null,
    type: c.type,
    payment: c.payment,
  };
}

export function renderMember(
  state: MemberstackState,
  m: Member,
  options: { json?: boolean } = {},
): Record<string, unknown> {
  return {
    id: m.id,
    createdAt: iso(m.createdAt),
    lastLogin: m.lastLogin === null ? null : iso(m.lastLogin),
    auth: { email: m.email },
    verified: m.verified,
    customFields: { ...m.customFields },
    metaData: { ...m.metaData },
    ...(options.json === false ? {} : { json: structuredClone(m.json) }),
    loginRedirect: m.loginRedirect,
    stripeCustomerId: m.stripeCustomerId,
    profileImage: m.profileImage,
    permissions: state.permissionsOf(m),
    planConnections: m.planConnections.map((c) => renderConnection(state, c)),
  };
}

// ---------------------------------------------------------------------------------------------
// Value checks

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function normalizeEmail(value: unknown): string {
  if (typeof value !== 'string' || !EMAIL.test(value.trim())) throw invalidEmail();
  return value.trim().toLowerCase();
}

function objectField(value: unknown, name: string): JsonObject {
  if (!isObject(value)) throw invalid(`${name} must be an object.`);
  return value;
}

function falsy(value: unknown): boolean {
  return value === null || value === undefined || value === '' || value === false || value === 0;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------------------------------------

export type MemberstackStateOptions = {
  clock?: Clock;
  /** Seed for reproducible ids. */
  idSeed?: number;
  /** The app's custom fields (default: first-name, last-name, company, job-title, phone, country). */
  customFields?: CustomFieldDef[];
  /** The app's plans (default: two free, two paid). */
  plans?: PlanDef[];
  /** Members a sandbox may hold (default 50, as Memberstack's test mode); `false` for no cap. */
  sandboxMemberLimit?: number | false;
};

export class MemberstackState {
  readonly clock: Clock;
  readonly keys: TokenRegistry;
  readonly customFields: CustomFieldDef[];
  readonly plans: PlanDef[];
  readonly sandboxMemberLimit: number | false;
  /** Every member of both modes, by id. */
  readonly members = new Map<string, Member>();
  private nextCursor: number;
  private readonly random: () => number;
  private readonly listeners: ((e: ChangeEvent) => void)[] = [];

  constructor(options: MemberstackStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.keys = new TokenRegistry(this.clock);
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.customFields = (options.customFields ?? DEFAULT_CUSTOM_FIELDS).map((f) => ({ ...f }));
    this.plans = (options.plans ?? DEFAULT_PLANS).map((p) => ({ ...p, permissions: [...p.permissions] }));
    this.sandboxMemberLimit = options.sandboxMemberLimit ?? SANDBOX_MEMBER_LIMIT;
    this.nextCursor = 2_400_000 + Math.floor(this.random() * 90_000);
  }

  onChange(listener: (e: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Lower-case ids in the cuid style Memberstack uses (`mem_cm9ehhh2j0nav0wsrg4c5gmlz`). */
  newId(prefix: string): string {
    return `${prefix}_c${randomAlphanumeric(24, this.random).toLowerCase()}`;
  }

  plan(id: string): PlanDef | undefined {
    return this.plans.find((p) => p.id === id);
  }

  permissionsOf(m: Member): string[] {
    const out = new Set<string>();
    for (const c of m.planConnections) {
      if (!c.active) continue;
      for (const p of this.plan(c.planId)?.permissions ?? []) out.add(p);
    }
    return [...out];
  }

  /** Keys of the app's custom fields; values under other keys are dropped without an error. */
  private knownCustomFields(input: Record<string, unknown>): Record<string, unknown> {
    const known = new Set(this.customFields.map((f) => f.key));
    return Object.fromEntries(Object.entries(input).filter(([k]) => known.has(k)));
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  get(id: string, mode: Mode = 'sandbox'): Member | undefined {
    const m = this.members.get(id);
    return m && m.mode === mode ? m : undefined;
  }

  findByEmail(email: string, mode: Mode = 'sandbox'): Member | undefined {
    const needle = email.trim().toLowerCase();
    for (const m of this.members.values()) if (m.mode === mode && m.email === needle) return m;
    return undefined;
  }

  /** `GET /members/:id_or_email`: a `mem_` id or an email address. */
  lookup(idOrEmail: string, mode: Mode = 'sandbox'): Member | undefined {
    return idOrEmail.includes('@') ? this.findByEmail(idOrEmail, mode) : this.get(idOrEmail, mode);
  }

  count(mode: Mode = 'sandbox'): number {
    let n = 0;
    for (const m of this.members.values()) if (m.mode === mode) n++;
    return n;
  }

  list(options: ListOptions, mode: Mode = 'sandbox'): ListPage {
    const all = [...this.members.values()].filter((m) => m.mode === mode);
    all.sort((a, b) => (options.order === 'DESC' ? b.cursor - a.cursor : a.cursor - b.cursor));
    const after = options.after;
    const rest =
      after === undefined
        ? all
        : all.filter((m) => (options.order === 'DESC' ? m.cursor < after : m.cursor > after));
    const members = rest.slice(0, options.limit);
    const last = members.at(-1);
    return {
      members,
      totalCount: all.length,
      // Never null, even on an empty last page (the official client documents this).
      endCursor: last ? last.cursor : (after ?? 0),
      hasNextPage: rest.length > members.length,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Writes: the API and the in-app helpers share these.

  private freePlan(planId: unknown): PlanDef {
    if (typeof planId !== 'string') throw invalid('planId is required.');
    const plan = this.plan(planId);
    if (!plan) throw new MemberstackApiError(400, 'validation/plan-not-found', `Plan ${planId} not found.`);
    if (!plan.free) throw invalid('Only free plans can be added to a member with the Admin API.');
    return plan;
  }

  private connect(plan: PlanDef): PlanConnection {
    return {
      id: this.newId('con'),
      planId: plan.id,
      status: 'ACTIVE',
      active: true,
      type: 'FREE',
      payment: null,
    };
  }

  create(input: CreateMemberInput | Record<string, unknown>, mode: Mode = 'sandbox'): Member {
    const b = input as Record<string, unknown>;
    const email = normalizeEmail(b.email);
    if (typeof b.password !== 'string' || b.password.length < MIN_PASSWORD_LENGTH) {
      throw invalid(`Password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
    }
    if (b.plans !== undefined && !Array.isArray(b.plans)) throw invalid('plans must be an array.');
    const plans = ((b.plans as unknown[] | undefined) ?? []).map((p) =>
      this.freePlan(isObject(p) ? p.planId : undefined),
    );
    const customFields =
      b.customFields === undefined ? {} : this.knownCustomFields(objectField(b.customFields, 'customFields'));
    const metaData = b.metaData === undefined ? {} : objectField(b.metaData, 'metaData');
    const json = b.json === undefined ? {} : objectField(b.json, 'json');
    if (b.loginRedirect !== undefined && b.loginRedirect !== null && typeof b.loginRedirect !== 'string') {
      throw invalid('loginRedirect must be a string.');
    }
    if (this.findByEmail(email, mode)) throw invalid('The email provided is already taken.');
    if (
      mode === 'sandbox' &&
      this.sandboxMemberLimit !== false &&
      this.count('sandbox') >= this.sandboxMemberLimit
    ) {
      throw invalid(`Test mode apps are limited to ${this.sandboxMemberLimit} members.`);
    }

    const member = this.insert({
      mode,
      email,
      password: b.password,
      customFields: Object.fromEntries(
        Object.entries(customFields).filter(([, v]) => v !== null && v !== ''),
      ),
      metaData: Object.fromEntries(Object.entries(structuredClone(metaData)).filter(([, v]) => !falsy(v))),
      json: structuredClone(json),
      loginRedirect: typeof b.loginRedirect === 'string' ? b.loginRedirect : null,
      planConnections: [],
    });
    const at = this.clock.now();
    const seen = new Set<string>();
    const added: PlanConnection[] = [];
    for (const plan of plans) {
      if (seen.has(plan.id)) continue;
      seen.add(plan.id);
      const c = this.connect(plan);
      member.planConnections.push(c);
      added.push(c);
    }
    this.emit({ event: 'member.created', member, at });
    for (const connection of added) this.emit({ event: 'member.plan.added', member, connection, at });
    return member;
  }

  /** Store a member without checks or events (seeding). */
  insert(fields: Partial<Member> & Pick<Member, 'email' | 'mode'>): Member {
    this.nextCursor += 1 + Math.floor(this.random() * 40);
    const member: Member = {
      id: this.newId('mem'),
      cursor: this.nextCursor,
      password: '',
      verified: false,
      customFields: {},
      metaData: {},
      json: {},
      loginRedirect: null,
      profileImage: null,
      stripeCustomerId: null,
      lastLogin: null,
      createdAt: this.clock.now(),
      planConnections: [],
      ...fields,
    };
    this.members.set(member.id, member);
    return member;
  }

  update(id: string, patch: UpdateMemberInput | Record<string, unknown>, mode: Mode = 'sandbox'): Member {
    const member = this.get(id, mode);
    if (!member) throw noMember();
    const b = patch as Record<string, unknown>;

    // Check everything before changing anything.
    const email = b.email === undefined ? undefined : normalizeEmail(b.email);
    if (email !== undefined && email !== member.email && this.findByEmail(email, mode)) {
      throw invalid('The email provided is already taken.');
    }
    if (b.verified !== undefined && typeof b.verified !== 'boolean')
      throw invalid('verified must be a boolean.');
    const customFields =
      b.customFields === undefined
        ? undefined
        : this.knownCustomFields(objectField(b.customFields, 'customFields'));
    const metaData = b.metaData === undefined ? undefined : objectField(b.metaData, 'metaData');
    const json = b.json === undefined ? undefined : objectField(b.json, 'json');
    for (const key of ['loginRedirect', 'profileImage'] as const) {
      if (b[key] !== undefined && b[key] !== null && typeof b[key] !== 'string') {
        throw invalid(`${key} must be a string.`);
      }
    }

    const reason: string[] = [];
    if (email !== undefined && email !== member.email) {
      member.email = email;
      reason.push('email.updated');
    }
    if (customFields !== undefined) {
      // Shallow merge; null or '' clears a field.
      const next = { ...member.customFields };
      for (const [k, v] of Object.entries(customFields)) {
        if (v === null || v === '') delete next[k];
        else next[k] = v;
      }
      if (!sameJson(next, member.customFields)) {
        member.customFields = next;
        reason.push('customFields.updated');
      }
    }
    if (metaData !== undefined) {
      // Shallow merge, and keys left falsy are dropped.
      const merged = { ...member.metaData, ...structuredClone(metaData) };
      const next = Object.fromEntries(Object.entries(merged).filter(([, v]) => !falsy(v)));
      if (!sameJson(next, member.metaData)) {
        member.metaData = next;
        reason.push('metaData.updated');
      }
    }
    if (b.verified !== undefined && b.verified !== member.verified) {
      member.verified = b.verified as boolean;
      reason.push('verified');
    }
    if (b.profileImage !== undefined && b.profileImage !== member.profileImage) {
      member.profileImage = b.profileImage as string | null;
      reason.push('profileImage.updated');
    }
    // json is replaced whole; it and loginRedirect change without a member.updated event
    // (the webhook docs: "Fires on email change, custom fields, and metadata").
    if (json !== undefined) member.json = structuredClone(json);
    if (b.loginRedirect !== undefined) member.loginRedirect = b.loginRedirect as string | null;

    if (reason.length > 0) this.emit({ event: 'member.updated', member, reason, at: this.clock.now() });
    return member;
  }

  remove(id: string, mode: Mode = 'sandbox'): { id: string } {
    const member = this.get(id, mode);
    if (!member) throw noMember();
    this.members.delete(member.id);
    this.emit({ event: 'member.deleted', memberId: member.id, mode, at: this.clock.now() });
    return { id: member.id };
  }

  /** Attach a free plan; a plan the member already has is left as it is. */
  addPlan(id: string, planId: unknown, mode: Mode = 'sandbox'): PlanConnection {
    const member = this.get(id, mode);
    if (!member) throw noMember();
    const plan = this.freePlan(planId);
    const existing = member.planConnections.find((c) => c.planId === plan.id && c.active);
    if (existing) return existing;
    const connection = this.connect(plan);
    member.planConnections.push(connection);
    this.emit({ event: 'member.plan.added', member, connection, at: this.clock.now() });
    return connection;
  }

  /** Remove a free plan: the connection leaves the member at once. */
  removePlan(id: string, planId: unknown, mode: Mode = 'sandbox'): PlanConnection | undefined {
    const member = this.get(id, mode);
    if (!member) throw noMember();
    const plan = this.freePlan(planId);
    const connection = member.planConnections.find((c) => c.planId === plan.id);
    if (!connection) return undefined;
    member.planConnections = member.planConnections.filter((c) => c !== connection);
    const canceled: PlanConnection = { ...connection, status: 'CANCELED', active: false };
    this.emit({ event: 'member.plan.canceled', member, connection: canceled, at: this.clock.now() });
    return canceled;
  }
}
