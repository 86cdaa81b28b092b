/**
 * Stripe as a sync side (a TableConnector), one table per object type (stripe-objects.ts; the
 * table's remote id is the API's plural: `customers`, `products`, `prices`, `coupons`, and the
 * read-only `subscriptions` and `invoices`), on Stripe's v1 API through the SDK's HttpClient and
 * RateLimiter (stripe-api.ts):
 *
 * - read: a full scan pages `GET /v1/{objects}?limit=100&starting_after=` (products and prices with
 *   `active=true`: archived ones count as deleted; subscriptions with `status=all`). Afterwards the
 *   changes come from `GET /v1/events` filtered on the table's event types and `created[gte]` the
 *   start of the previous read minus an overlap (60 s: event times are whole seconds and the event
 *   list can lag a write). Events list newest first: a read walks every page of them, keeps each
 *   object's newest event only (its `data.object` is the object as that change left it) and gives
 *   those as records, or as deletes (`*.deleted`; a product or price made inactive; a deleted
 *   customer). The cursor moves to this read's start only once the whole walk is given in one
 *   page, so an interrupted read is simply read again. Stripe keeps events 30 days: an older
 *   cursor (or more events than one read walks) falls back to a full scan.
 * - write: one object per request (Stripe has no batch writes), a few at a time, each with an
 *   `Idempotency-Key` derived from the write's own key: Stripe replays the first answer to a retry,
 *   so a create retried after a lost answer, a 429 or a crash never makes a second object.
 *   Per-item results: a value Stripe refuses fails that item alone.
 * - conflicts: Stripe has no conditional update. An update or delete with `expected` values reads
 *   the object right before writing and answers `version_conflict` with its current values when it
 *   changed since Lockstep read it.
 * - prices are immutable in their amount, interval and product: an update of one of those makes a
 *   new price (the other values and metadata carried over, the lookup key transferred, the
 *   product's default price moved) and archives the old one; the write answers with the new
 *   price's id. Deletes: customers and coupons are deleted; products and prices archived.
 */

import { createHash } from 'node:crypto';
import { type CanonicalValue, normalizeValue, type RecordData, valuesEqual } from '@lockstep/engine';
import {
  type Capabilities,
  ConnectorError,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';
import {
  createStripeClient,
  STRIPE_RATE_LIMIT,
  type StripeClient,
  type StripeClientOptions,
  type StripeList,
  stripeUserMessage,
} from './stripe-api';
import {
  fieldDef,
  isStripeTable,
  METADATA_PREFIX,
  metadataOf,
  objectPath,
  READ_ONLY_TABLES,
  STRIPE_FIELDS,
  type StripeObject,
  type StripeTable,
  StripeValueError,
  TABLE_NAMES,
  toFields,
  toParams,
} from './stripe-objects';

export const STRIPE_MAX_PAGE_SIZE = 100;
/** Writes per call to the connector; each is its own request. */
export const STRIPE_BATCH_SIZE = 50;
/** Requests of one write call in flight at once (the rate limiter paces them). */
export const STRIPE_WRITE_CONCURRENCY = 4;
/** How far each incremental read reaches back before the previous read's start. */
export const STRIPE_READ_OVERLAP_S = 60;
/** Stripe keeps events for 30 days; a cursor older than this (less a margin) rescans. */
export const STRIPE_EVENT_RETENTION_S = 30 * 24 * 3600;
const RETENTION_MARGIN_S = 3600;
/** Pages of events one read walks at most (100 each) before it rescans instead. */
export const STRIPE_MAX_EVENT_PAGES = 100;

/** The event types that change each table's objects. */
export const STRIPE_EVENT_TYPES: Record<StripeTable, string[]> = {
  customers: ['customer.created', 'customer.updated', 'customer.deleted'],
  products: ['product.created', 'product.updated', 'product.deleted'],
  prices: ['price.created', 'price.updated', 'price.deleted'],
  coupons: ['coupon.created', 'coupon.updated', 'coupon.deleted'],
  subscriptions: [
    'customer.subscription.created',
    'customer.subscription.updated',
    'customer.subscription.deleted',
    'customer.subscription.paused',
    'customer.subscription.resumed',
    'customer.subscription.pending_update_applied',
    'customer.subscription.pending_update_expired',
    'customer.subscription.trial_will_end',
  ],
  invoices: [
    'invoice.created',
    'invoice.updated',
    'invoice.deleted',
    'invoice.finalized',
    'invoice.finalization_failed',
    'invoice.marked_uncollectible',
    'invoice.overdue',
    'invoice.paid',
    'invoice.payment_action_required',
    'invoice.payment_failed',
    'invoice.payment_succeeded',
    'invoice.sent',
    'invoice.voided',
    'invoice.will_be_due',
  ],
};

export type StripeEvent = {
  id: string;
  object?: 'event';
  type: string;
  created: number;
  data: { object: StripeObject; previous_attributes?: Record<string, unknown> };
};

/**
 * Whether an object read (listed, fetched, or in an event) is gone for the sync: a deleted customer
 * or coupon, an archived product or price. A canceled subscription stays: it is still a record.
 */
export function isGone(table: StripeTable, o: StripeObject, eventType?: string): boolean {
  if (o.deleted === true) return true;
  if (eventType?.endsWith('.deleted') && table !== 'subscriptions') return true;
  if ((table === 'products' || table === 'prices') && o.active === false) return true;
  return false;
}

type ScanCursor = { v: 1; mode: 'scan'; after?: string; since: number };
type EventsCursor = { v: 1; mode: 'events'; since: number };
type ReadCursor = ScanCursor | EventsCursor;

const encode = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
/** An unreadable cursor means a full rescan. */
function decode(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.mode === 'scan' || c.mode === 'events') && typeof c.since === 'number') return c;
  } catch {
    // fall through
  }
  return null;
}

export type StripeConnectorOptions = StripeClientOptions & {
  /** The read overlap in seconds (60). */
  overlapSeconds?: number;
  /** Pages of events one read walks before rescanning (100). */
  maxEventPages?: number;
  /** Requests of one write call in flight at once (4). */
  writeConcurrency?: number;
  /** Stripe's clock when a response has no Date header (ms). */
  now?: () => number;
};

export type StripeConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  client: StripeClient;
};

export const STRIPE_CAPABILITIES: Capabilities = {
  batchSize: STRIPE_BATCH_SIZE,
  incrementalRead: true,
  deleteDetection: 'events',
  // A Dashboard webhook endpoint wakes runs (webhooks.ts, the server's /webhooks/stripe route); the
  // read takes the change from the events list.
  webhooks: true,
  rateLimit: STRIPE_RATE_LIMIT,
  // Metadata keys an object lacks are not in its record (read as empty).
  recordsCarryEveryField: false,
};

export const toRecord = (table: StripeTable, o: StripeObject): RecordData => ({
  id: String(o.id),
  fields: toFields(table, o),
});

function tableOf(tableRemoteId: string): StripeTable {
  const t = tableRemoteId.trim().toLowerCase();
  if (!isStripeTable(t))
    throw new ConnectorError('not_found', `no Stripe table ${tableRemoteId}`, stripeUserMessage('not_found'));
  return t;
}

/** Whether the record still holds the `expected` canonical values (fields Lockstep does not know pass). */
export function holdsExpected(
  table: StripeTable,
  current: RecordData,
  expected: Record<string, CanonicalValue>,
): boolean {
  for (const [name, value] of Object.entries(expected)) {
    const f = fieldDef(table, name);
    if (!f) continue;
    const want = normalizeValue(f.fieldType, value ?? null);
    if (!want.ok) return false;
    if (!valuesEqual(want.value, current.fields[name] ?? null)) return false;
  }
  return true;
}

/** The id of an expandable field (an id, or the expanded object). */
const idOf = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : ((v as { id?: string } | null | undefined)?.id ?? undefined);

const hashOf = (value: unknown) =>
  createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/** Runs `work` over the items with at most `limit` at once; results in input order. */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failed: unknown = null;
  const lane = async () => {
    while (failed === null && next < items.length) {
      const i = next++;
      try {
        out[i] = await work(items[i] as T);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failed !== null) throw failed;
  return out;
}

export function createStripeConnector(options: StripeConnectorOptions): StripeConnector {
  const client = createStripeClient(options);
  const now = options.now ?? Date.now;
  const overlap = options.overlapSeconds ?? STRIPE_READ_OVERLAP_S;
  const maxEventPages = Math.max(1, options.maxEventPages ?? STRIPE_MAX_EVENT_PAGES);
  const concurrency = Math.max(1, options.writeConcurrency ?? STRIPE_WRITE_CONCURRENCY);

  /** Stripe's clock, in unix seconds, from a response's Date header. */
  function serverSeconds(headers: Headers): number {
    const t = Date.parse(headers.get('date') ?? '');
    return Math.floor((Number.isNaN(t) ? now() : t) / 1000);
  }

  function listQuery(table: StripeTable): Record<string, unknown> {
    if (table === 'products' || table === 'prices') return { active: 'true' };
    if (table === 'subscriptions') return { status: 'all' };
    return {};
  }

  async function scan(
    table: StripeTable,
    c: ScanCursor | null,
    want: number,
    restart: boolean,
  ): Promise<ReadPage> {
    const objects: StripeObject[] = [];
    let after = c?.after;
    let since = c?.since;
    let hasMore = true;
    while (hasMore && objects.length < want) {
      const res = await client.get<StripeList<StripeObject>>(objectPath(table), {
        limit: Math.min(STRIPE_MAX_PAGE_SIZE, want - objects.length),
        ...listQuery(table),
        ...(after ? { starting_after: after } : {}),
      });
      // The first request of a scan fixes (by Stripe's clock) where the events after it begin.
      since ??= serverSeconds(res.headers) - overlap;
      objects.push(...res.body.data);
      hasMore = res.body.has_more && res.body.data.length > 0;
      after = res.body.data[res.body.data.length - 1]?.id ?? after;
    }
    const start = since as number;
    const next: ReadCursor = hasMore
      ? { v: 1, mode: 'scan', after, since: start }
      : { v: 1, mode: 'events', since: start };
    return {
      records: objects.filter((o) => !isGone(table, o)).map((o) => toRecord(table, o)),
      deletedIds: [],
      nextCursor: encode(next),
      hasMore,
      // One page from the start holds the whole table: absence from it is evidence of a delete.
      scanComplete: (!c || restart) && !hasMore,
    };
  }

  async function readEvents(table: StripeTable, c: EventsCursor, want: number): Promise<ReadPage> {
    const newest = new Map<string, StripeEvent>();
    let start: number | undefined;
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await client.get<StripeList<StripeEvent>>('/v1/events', {
        types: STRIPE_EVENT_TYPES[table],
        created: { gte: c.since },
        limit: STRIPE_MAX_PAGE_SIZE,
        ...(after ? { starting_after: after } : {}),
      });
      if (start === undefined) {
        start = serverSeconds(res.headers);
        // Stripe no longer has every event since the cursor: what changed is found by a rescan.
        if (c.since < start - STRIPE_EVENT_RETENTION_S + RETENTION_MARGIN_S)
          return scan(table, null, want, true);
      }
      // Newest first: an object's first event in the walk is its latest change.
      for (const e of res.body.data) {
        const id = e.data?.object?.id;
        if (typeof id === 'string' && !newest.has(id)) newest.set(id, e);
      }
      pages++;
      if (!res.body.has_more || res.body.data.length === 0) break;
      // More changes than one read walks: a rescan reads them at less cost.
      if (pages >= maxEventPages) return scan(table, null, want, true);
      after = res.body.data[res.body.data.length - 1]?.id;
    }
    const records: RecordData[] = [];
    const deletedIds: string[] = [];
    for (const [id, e] of newest) {
      if (isGone(table, e.data.object, e.type)) deletedIds.push(id);
      else records.push(toRecord(table, e.data.object));
    }
    return {
      records,
      deletedIds,
      nextCursor: encode({ v: 1, mode: 'events', since: (start as number) - overlap }),
      hasMore: false,
      scanComplete: false,
    };
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const table = tableOf(tableId);
    const want = Math.max(1, opts.pageSize);
    const c = decode(cursor);
    if (!c || c.mode === 'scan') return scan(table, c, want, false);
    return readEvents(table, c, want);
  }

  /** The object as Stripe holds it now; null when it is gone (deleted, archived, never there). */
  async function fetchLive(table: StripeTable, id: string): Promise<StripeObject | null> {
    try {
      const { body } = await client.get<StripeObject>(`${objectPath(table)}/${encodeURIComponent(id)}`);
      return isGone(table, body) ? null : body;
    } catch (error) {
      if (error instanceof ConnectorError && error.code === 'not_found') return null;
      throw error;
    }
  }

  function failure(err: unknown): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : err instanceof StripeValueError
          ? new ConnectorError(
              'validation',
              err.message,
              stripeUserMessage('validation', `: ${err.userFacingMessage}`),
            )
          : new ConnectorError('transient', String(err), stripeUserMessage('transient'));
    return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
  }

  function conflict(table: StripeTable, id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `Stripe ${table} ${id} changed since it was read`,
        userFacingMessage: 'The Stripe object changed at the same time; Lockstep compares it again.',
      },
      current,
    };
  }

  const notFound = (table: StripeTable, id: string) =>
    failure(
      new ConnectorError('not_found', `Stripe ${table} ${id} not found`, stripeUserMessage('not_found')),
    );

  async function create(
    table: StripeTable,
    r: Extract<WriteRequest, { kind: 'create' }>,
  ): Promise<WriteResult> {
    const params = toParams(table, r.fields, 'create');
    const { body } = await client.post<StripeObject>(objectPath(table), params, r.idempotencyKey);
    return { ok: true, remoteId: String(body.id), postImage: toRecord(table, body) };
  }

  /** Fields of the update whose value differs from what the object holds. */
  function changedFields(table: StripeTable, current: RecordData, fields: Record<string, CanonicalValue>) {
    return Object.keys(fields).filter((name) => {
      const f = fieldDef(table, name);
      if (!f) return false;
      const v = normalizeValue(f.fieldType, fields[name] ?? null);
      return !v.ok || !valuesEqual(v.value, current.fields[name] ?? null);
    });
  }

  /**
   * A price's amount, interval or product changed: a new price with the other values carried over
   * replaces it (the lookup key transferred to it, the product's default price moved to it), then
   * the old one is archived. Each step has its own idempotency key: a retried write replays them.
   */
  async function replacePrice(
    old: StripeObject,
    r: Extract<WriteRequest, { kind: 'update' }>,
  ): Promise<WriteResult> {
    if (old.billing_scheme === 'tiered' || old.unit_amount === null || old.unit_amount === undefined)
      throw new StripeValueError(
        `price ${old.id}: tiered or customer-chosen amount`,
        'Only a price with a fixed amount can be given a new amount by Lockstep; change tiered prices in Stripe.',
      );
    const current = toFields('prices', old);
    const merged = { ...current, ...r.fields };
    const writable = Object.fromEntries(
      Object.entries(merged).filter(([name]) => {
        const f = fieldDef('prices', name);
        return f && !f.readOnly && !name.startsWith(METADATA_PREFIX);
      }),
    );
    const params = toParams('prices', writable, 'create');
    const recurring = old.recurring as { interval?: string; interval_count?: number } | null | undefined;
    if (recurring && !params.recurring) params.recurring = { interval: recurring.interval };
    // Metadata: the old price's, with the written keys set (an emptied key dropped).
    const metadata: Record<string, string> = { ...metadataOf(old) };
    for (const [name, value] of Object.entries(r.fields)) {
      if (!name.startsWith(METADATA_PREFIX)) continue;
      const key = name.slice(METADATA_PREFIX.length);
      if (value === null || value === '') delete metadata[key];
      else metadata[key] = String(value);
    }
    if (Object.keys(metadata).length > 0) params.metadata = metadata;
    if (typeof params.lookup_key === 'string' && params.lookup_key !== '') params.transfer_lookup_key = true;
    if (!params.currency && typeof old.currency === 'string') params.currency = old.currency;
    const { body: fresh } = await client.post<StripeObject>(
      '/v1/prices',
      params,
      `${r.idempotencyKey}:new-price`,
    );
    // A product's default price cannot be archived: the new price takes its place first.
    const productId = idOf(old.product);
    if (productId) {
      const product = await fetchLive('products', productId);
      if (product && idOf(product.default_price) === old.id && idOf(fresh.product) === productId)
        await client.post(
          `/v1/products/${encodeURIComponent(productId)}`,
          { default_price: fresh.id },
          `${r.idempotencyKey}:default-price`,
        );
    }
    await client.post(
      `/v1/prices/${encodeURIComponent(old.id)}`,
      { active: false },
      `${r.idempotencyKey}:archive-replaced`,
    );
    return { ok: true, remoteId: String(fresh.id), postImage: toRecord('prices', fresh) };
  }

  async function update(
    table: StripeTable,
    r: Extract<WriteRequest, { kind: 'update' }>,
  ): Promise<WriteResult> {
    const live = await fetchLive(table, r.remoteId);
    if (!live)
      return r.expected && Object.keys(r.expected).length > 0
        ? conflict(table, r.remoteId, null)
        : notFound(table, r.remoteId);
    const current = toRecord(table, live);
    if (r.expected && !holdsExpected(table, current, r.expected)) return conflict(table, r.remoteId, current);
    const changed = changedFields(table, current, r.fields);
    const immutable = changed.filter((name) => fieldDef(table, name)?.createOnly);
    if (immutable.length > 0) {
      if (table === 'prices') return replacePrice(live, r);
      throw new StripeValueError(
        `${table} ${r.remoteId}: ${immutable.join(', ')} cannot change after creation`,
        `Stripe does not let a ${table === 'coupons' ? 'coupon' : 'record'}'s ${immutable
          .map((n) => fieldDef(table, n)?.name ?? n)
          .join(
            ', ',
          )} change once it is made (only its name and metadata). Make a new one in Stripe instead.`,
      );
    }
    const params = toParams(
      table,
      Object.fromEntries(changed.map((name) => [name, r.fields[name] ?? null])),
      'update',
    );
    if (Object.keys(params).length === 0) return { ok: true, remoteId: r.remoteId, postImage: current };
    // An address is written whole: the parts not written keep what the customer holds.
    if (params.address && typeof params.address === 'object') {
      const given = params.address as Record<string, unknown>;
      const held = (live.address ?? {}) as Record<string, unknown>;
      for (const part of ['line1', 'line2', 'city', 'state', 'postal_code', 'country'])
        if (!(part in given) && typeof held[part] === 'string') given[part] = held[part];
    }
    // The key names these values: a retry of the same write replays, another write is its own.
    const { body } = await client.post<StripeObject>(
      `${objectPath(table)}/${encodeURIComponent(r.remoteId)}`,
      params,
      `${r.idempotencyKey}:${hashOf(params)}`,
    );
    return { ok: true, remoteId: String(body.id), postImage: toRecord(table, body) };
  }

  async function remove(
    table: StripeTable,
    r: Extract<WriteRequest, { kind: 'delete' }>,
  ): Promise<WriteResult> {
    const gone: WriteResult = { ok: true, remoteId: r.remoteId, postImage: null };
    if (r.expected && Object.keys(r.expected).length > 0) {
      const live = await fetchLive(table, r.remoteId);
      if (!live) return gone;
      const current = toRecord(table, live);
      // Edited since Lockstep read it: spared, and compared again.
      if (!holdsExpected(table, current, r.expected)) return conflict(table, r.remoteId, current);
    }
    const path = `${objectPath(table)}/${encodeURIComponent(r.remoteId)}`;
    const archive = (step = 'archive') => client.post(path, { active: false }, `${r.idempotencyKey}:${step}`);
    try {
      if (table === 'customers' || table === 'coupons') await client.del(path);
      else if (table === 'prices') {
        try {
          await archive();
        } catch (error) {
          // Stripe does not archive a product's default price: the product lets go of it first.
          if (!(error instanceof ConnectorError && error.code === 'validation')) throw error;
          const price = await fetchLive('prices', r.remoteId);
          const productId = idOf(price?.product);
          const product = productId ? await fetchLive('products', productId) : null;
          if (!product || idOf(product.default_price) !== r.remoteId) throw error;
          await client.post(
            `/v1/products/${encodeURIComponent(product.id)}`,
            { default_price: '' },
            `${r.idempotencyKey}:unset-default-price`,
          );
          // A new key: Stripe replays the refusal to the first one.
          await archive('archive-after-default');
        }
      } else await archive();
    } catch (error) {
      // Already deleted: what the write asked for holds.
      if (error instanceof ConnectorError && error.code === 'not_found') return gone;
      throw error;
    }
    return gone;
  }

  /** Errors of one item (a refused value, a missing object, a permission the key lacks) fail it alone. */
  const itemLevel = (error: unknown) =>
    error instanceof StripeValueError ||
    (error instanceof ConnectorError &&
      (error.code === 'validation' || error.code === 'not_found' || error.code === 'permission_denied'));

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const table = tableOf(tableId);
    if (READ_ONLY_TABLES.has(table)) {
      const refused = new ConnectorError(
        'validation',
        `Stripe ${table} are read-only in Lockstep`,
        `Stripe ${TABLE_NAMES[table].toLowerCase()} are read-only: Lockstep reads them but does not write them.`,
      );
      return requests.map(() => failure(refused));
    }
    return pooled(requests, concurrency, async (r) => {
      try {
        if (r.kind === 'create') return await create(table, r);
        if (r.kind === 'update') return await update(table, r);
        return await remove(table, r);
      } catch (error) {
        // Rate limits past the client's retries, outages and refused keys concern the whole run:
        // the runtime retries it, and the idempotency keys make the retried writes replays.
        if (!itemLevel(error)) throw error;
        return failure(error);
      }
    });
  }

  return {
    capabilities: STRIPE_CAPABILITIES,
    client,
    read,
    write,
    async readRecords(tableId, ids) {
      const table = tableOf(tableId);
      const unique = [...new Set(ids)];
      const found = await pooled(unique, concurrency, (id) => fetchLive(table, id));
      return found.filter((o): o is StripeObject => o !== null).map((o) => toRecord(table, o));
    },
  };
}

/** The fixed fields of a table (for tests and discovery). */
export const stripeFixedFields = (table: StripeTable) => STRIPE_FIELDS[table];
