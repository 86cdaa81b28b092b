/**
 * The in-memory Stripe account behind the simulator: objects kept in their API shape, split by
 * mode (test and live keys see different objects), events for every change (kept 30 days), API
 * keys (secret and restricted, with per-resource permissions), lists in Stripe's order (newest
 * first) with cursor paging, and `expand[]`. Routes (routes.ts) turn HTTP into calls here; the
 * simulator's `create/update/remove` helpers call the same methods (edits "in the Dashboard":
 * the events carry `request: {id: null}`).
 */
import { type Clock, randomAlphanumeric, seededRandom, systemClock } from '../http.ts';
import { badRequest, noSuch, StripeApiError } from './errors.ts';
import { int, invalidParam, type Params, str, stringList } from './params.ts';

export type Json = Record<string, unknown>;

/** Who asked for a change: the API (with its request id and idempotency key) or the Dashboard. */
export type Ctx = { livemode: boolean; requestId: string | null; idempotencyKey: string | null };

export const dashboard = (livemode = false): Ctx => ({ livemode, requestId: null, idempotencyKey: null });

export type Kind =
  | 'customer'
  | 'product'
  | 'price'
  | 'coupon'
  | 'subscription'
  | 'invoice'
  | 'event'
  | 'webhook_endpoint'
  | 'checkout.session'
  | 'billing_portal.session';

export const KINDS: Kind[] = [
  'customer',
  'product',
  'price',
  'coupon',
  'subscription',
  'invoice',
  'event',
  'webhook_endpoint',
  'checkout.session',
  'billing_portal.session',
];

type Entry = { obj: Json; seq: number; livemode: boolean; deleted?: boolean };

/** The API version events are rendered with (the one stripe-node 23.1.0 pins). */
export const API_VERSION = '2026-10-28.endive';
export const EVENT_RETENTION_SECONDS = 30 * 86_400;
export const MAX_LIST_LIMIT = 100;

export type Permission = 'none' | 'read' | 'write';

export type ApiKey = {
  key: string;
  livemode: boolean;
  /** Restricted keys (rk_) carry permissions per resource; others may do everything. */
  permissions?: Record<string, Permission>;
};

export type StripeStateOptions = {
  clock?: Clock;
  /** Seed for reproducible ids. */
  idSeed?: number;
  accountId?: string;
};

export type StripeEvent = Json & {
  id: string;
  type: string;
  livemode: boolean;
  created: number;
  data: { object: Json; previous_attributes?: Json };
};

const clone = <T>(v: T): T => structuredClone(v);

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Stripe's `previous_attributes`: the old values of what changed; for hashes, of the changed keys. */
export function previousAttributes(before: Json, after: Json): Json {
  const prev: Json = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[key];
    const a = after[key];
    if (deepEqual(a, b)) continue;
    if (isPlainObject(b) && isPlainObject(a) && b.object === undefined) {
      const sub: Json = {};
      for (const k of new Set([...Object.keys(b), ...Object.keys(a)])) {
        if (!deepEqual(a[k], b[k])) sub[k] = b[k] ?? null;
      }
      prev[key] = sub;
    } else {
      prev[key] = b ?? null;
    }
  }
  return prev;
}

/** Which fields of which objects can be expanded, and to what kind. */
const EXPANDABLE: Partial<Record<Kind, Record<string, Kind>>> = {
  price: { product: 'product' },
  product: { default_price: 'price' },
  subscription: { customer: 'customer', latest_invoice: 'invoice' },
  invoice: { customer: 'customer' },
  'checkout.session': { customer: 'customer', subscription: 'subscription', invoice: 'invoice' },
};

export class StripeState {
  readonly clock: Clock;
  readonly accountId: string;
  readonly keys = new Map<string, ApiKey>();
  /** The simulator's own URL (checkout and portal pages live there); set when the server starts. */
  baseUrl = 'http://127.0.0.1';
  private readonly stores = new Map<Kind, Map<string, Entry>>();
  /** Internal data that is not part of an object's API shape (checkout line items, secrets). */
  readonly hidden = new Map<string, Json>();
  private seq = 0;
  private readonly random: () => number;
  private readonly listeners: ((e: StripeEvent) => void)[] = [];

  constructor(options: StripeStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.accountId = options.accountId ?? `acct_1${this.randomId(15)}`;
    for (const k of KINDS) this.stores.set(k, new Map());
  }

  randomId(length: number): string {
    return randomAlphanumeric(length, this.random);
  }

  /** Ids as Stripe shapes them: `cus_` + 14, `price_1` + 23, ... */
  newId(prefix: string, length = 24): string {
    return `${prefix}_${length > 14 ? '1' : ''}${this.randomId(length > 14 ? length - 1 : length)}`;
  }

  private timeOverride: number | undefined;

  /** Seconds on the simulator's clock. */
  now(): number {
    return this.timeOverride ?? Math.floor(this.clock.now() / 1000);
  }

  /** Run `fn` as if it were `seconds` (seed data: history made in the past). */
  at<T>(seconds: number, fn: () => T): T {
    const saved = this.timeOverride;
    this.timeOverride = seconds;
    try {
      return fn();
    } finally {
      this.timeOverride = saved;
    }
  }

  onEvent(listener: (e: StripeEvent) => void): void {
    this.listeners.push(listener);
  }

  // -------------------------------------------------------------------------------------------
  // Keys

  addKey(key: ApiKey): ApiKey {
    this.keys.set(key.key, key);
    return key;
  }

  // -------------------------------------------------------------------------------------------
  // Storage

  private store(kind: Kind): Map<string, Entry> {
    return this.stores.get(kind) as Map<string, Entry>;
  }

  insert(kind: Kind, obj: Json): Json {
    this.seq += 1;
    this.store(kind).set(obj.id as string, { obj, seq: this.seq, livemode: obj.livemode as boolean });
    return obj;
  }

  has(kind: Kind, id: string): boolean {
    return this.store(kind).has(id);
  }

  /** The live object (not a copy); 404 when absent or in the other mode. */
  entry(kind: Kind, id: string, livemode: boolean, param = 'id'): Entry {
    const e = this.store(kind).get(id);
    if (!e) throw noSuch(kind, id, param);
    if (e.livemode !== livemode) {
      const err = noSuch(kind, id, param);
      err.error.message += `; a similar object exists in ${e.livemode ? 'live' : 'test'} mode, but a ${livemode ? 'live' : 'test'} mode key was used to make this request.`;
      throw err;
    }
    return e;
  }

  /** An object that is not deleted. */
  get(kind: Kind, id: string, livemode: boolean, param = 'id'): Json {
    const e = this.entry(kind, id, livemode, param);
    if (e.deleted) throw noSuch(kind, id, param);
    return e.obj;
  }

  markDeleted(kind: Kind, id: string): void {
    const e = this.store(kind).get(id);
    if (e) e.deleted = true;
  }

  drop(kind: Kind, id: string): void {
    this.store(kind).delete(id);
  }

  all(kind: Kind, livemode: boolean): Json[] {
    return [...this.store(kind).values()]
      .filter((e) => e.livemode === livemode && !e.deleted)
      .map((e) => e.obj);
  }

  // -------------------------------------------------------------------------------------------
  // Events

  emit(type: string, obj: Json, ctx: Ctx, previous?: Json): StripeEvent {
    const event: StripeEvent = {
      id: this.newId('evt'),
      object: 'event',
      api_version: API_VERSION,
      created: this.now(),
      data: { object: clone(obj), ...(previous ? { previous_attributes: clone(previous) } : {}) },
      livemode: ctx.livemode,
      pending_webhooks: 0,
      request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey },
      type,
    };
    this.insert('event', event);
    for (const l of this.listeners) l(event);
    return event;
  }

  /** Apply a change to an object and emit `<type>.updated` with previous_attributes if anything changed. */
  change(obj: Json, mutate: (o: Json) => void, eventType: string, ctx: Ctx): boolean {
    const before = clone(obj);
    mutate(obj);
    const prev = previousAttributes(before, obj);
    if (Object.keys(prev).length === 0) return false;
    this.emit(eventType, obj, ctx, prev);
    return true;
  }

  eventVisible(e: Json): boolean {
    return (e.created as number) > this.now() - EVENT_RETENTION_SECONDS;
  }

  // -------------------------------------------------------------------------------------------
  // Lists: newest first; `starting_after` / `ending_before` cursors; `limit` 1..100 (default 10).

  list(
    kind: Kind,
    livemode: boolean,
    params: Params,
    url: string,
    filter: (o: Json) => boolean = () => true,
  ): Json {
    const limit = int(params, 'limit', 1, MAX_LIST_LIMIT) ?? 10;
    const startingAfter = str(params, 'starting_after');
    const endingBefore = str(params, 'ending_before');
    if (startingAfter !== undefined && endingBefore !== undefined) {
      throw invalidParam(
        'ending_before',
        'You may only specify one of these parameters: ending_before, starting_after.',
      );
    }
    const created = createdFilter(params);
    const entries = [...this.store(kind).values()]
      .filter((e) => e.livemode === livemode && !e.deleted && created(e.obj) && filter(e.obj))
      .sort(newestFirst);
    let page: Entry[];
    let hasMore: boolean;
    const cursor = startingAfter ?? endingBefore;
    if (cursor !== undefined) {
      const param = startingAfter !== undefined ? 'starting_after' : 'ending_before';
      const ref = this.entry(kind, cursor, livemode, param);
      if (startingAfter !== undefined) {
        const rest = entries.filter((e) => newestFirst(ref, e) < 0);
        page = rest.slice(0, limit);
        hasMore = rest.length > limit;
      } else {
        const rest = entries.filter((e) => newestFirst(e, ref) < 0);
        page = rest.slice(-limit);
        hasMore = rest.length > limit;
      }
    } else {
      page = entries.slice(0, limit);
      hasMore = entries.length > limit;
    }
    return { object: 'list', data: page.map((e) => clone(e.obj)), has_more: hasMore, url };
  }

  // -------------------------------------------------------------------------------------------
  // Expansion: `expand[]=product`, `expand[]=data.product` on lists, nested `a.b`.

  render(kind: Kind, obj: Json, expand: string[] = []): Json {
    const out = clone(obj);
    for (const path of expand) this.expandPath(kind, out, path.split('.'), path);
    return out;
  }

  renderList(kind: Kind, list: Json, expand: string[] = []): Json {
    const data = list.data as Json[];
    for (const path of expand) {
      const parts = path.split('.');
      if (parts[0] !== 'data') throw cannotExpand(path);
      for (const item of data) this.expandPath(kind, item, parts.slice(1), path);
    }
    return list;
  }

  private expandPath(kind: Kind, obj: Json, parts: string[], full: string): void {
    const [field, ...rest] = parts;
    if (field === undefined) return;
    if (kind === 'checkout.session' && field === 'line_items') {
      obj.line_items = clone(this.hidden.get(obj.id as string)?.line_items ?? null);
      return;
    }
    const target = EXPANDABLE[kind]?.[field];
    if (!target) throw cannotExpand(full);
    const value = obj[field];
    if (typeof value === 'string') {
      const e = this.store(target).get(value);
      obj[field] = e ? (e.deleted ? { id: value, object: target, deleted: true } : clone(e.obj)) : value;
    }
    if (rest.length > 0 && isPlainObject(obj[field])) {
      this.expandPath(target, obj[field] as Json, rest, full);
    }
  }
}

function cannotExpand(path: string): StripeApiError {
  return badRequest(`This property cannot be expanded (${path}).`, { param: 'expand' });
}

function newestFirst(a: Entry, b: Entry): number {
  const ca = a.obj.created as number;
  const cb = b.obj.created as number;
  if (ca !== cb) return cb - ca;
  return b.seq - a.seq;
}

/** `created=<ts>` or `created[gt|gte|lt|lte]=<ts>`. */
function createdFilter(params: Params): (o: Json) => boolean {
  const c = params.created;
  if (c === undefined) return () => true;
  if (typeof c === 'string') {
    const at = int(params, 'created');
    return (o) => o.created === at;
  }
  if (Array.isArray(c)) throw invalidParam('created', 'Invalid created');
  const bounds: Record<string, number> = {};
  for (const [op, v] of Object.entries(c)) {
    if (!['gt', 'gte', 'lt', 'lte'].includes(op)) {
      throw invalidParam(`created[${op}]`, `Received unknown parameter: created[${op}]`, 'parameter_unknown');
    }
    if (typeof v !== 'string' || !/^\d+$/.test(v))
      throw invalidParam(`created[${op}]`, `Invalid integer: ${v}`);
    bounds[op] = Number(v);
  }
  return (o) => {
    const t = o.created as number;
    if (bounds.gt !== undefined && !(t > bounds.gt)) return false;
    if (bounds.gte !== undefined && !(t >= bounds.gte)) return false;
    if (bounds.lt !== undefined && !(t < bounds.lt)) return false;
    if (bounds.lte !== undefined && !(t <= bounds.lte)) return false;
    return true;
  };
}

/** `expand[]` from params (strings only). */
export function expandParam(params: Params): string[] {
  return stringList(params, 'expand') ?? [];
}

export { StripeApiError };
