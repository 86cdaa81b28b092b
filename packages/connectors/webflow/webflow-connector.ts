/**
 * Webflow CMS as a sync side (a TableConnector): a base is a site, a table is one of its CMS
 * collections (the table's remote id is the collection id), on the Data API v2 through the SDK's
 * HttpClient and RateLimiter (webflow-api.ts); values in webflow-values.ts.
 *
 * - read: `GET /collections/{id}/items?offset=&limit=100` (offset paging). Webflow's list has no
 *   modified-since filter in v2 (its newer `lastUpdated` filter and sort are not on every API version,
 *   and a filtered list could never show a delete), so changes are found by a full pass compared with
 *   the last read: every pass pages the whole collection and compares each item's fingerprint (its
 *   `lastUpdated` and the hash of its canonical values) with the one the cursor keeps for its id; new
 *   and changed items are returned, unchanged ones are not. An edit is never missed: any edit moves
 *   `lastUpdated` and the values, and an item changed after its page was read differs at the next pass.
 * - deletes: found by absence, confirmed by id. Each cursor entry carries the parity of the pass that
 *   last saw it; at the end of a pass the ids it did not see (offset paging can skip an item when
 *   another is deleted during the pass) are read by id: still there they are compared and kept, gone
 *   (404) they are `deletedIds`.
 * - the cursor is committed by the runtime only after a page is applied; it holds the offset in the
 *   pass, the pass's parity and the packed id -> fingerprint map (deflated).
 * - write: batches of <= 100 items: `POST /collections/{id}/items` with `items`, `PATCH
 *   /collections/{id}/items` with `items`, `DELETE /collections/{id}/items` with `items`. A batch
 *   Webflow refuses whole (one bad value) is sent again item by item, so one bad record fails alone.
 *   Creates are remembered per idempotency key within the process (Webflow has no idempotency key).
 * - name and slug: a create without a slug gets one made from its name, unique in the collection
 *   (`-2`, `-3` on a collision with an item there or in the same batch).
 * - images: Webflow skips an image it cannot take (over 4 MB) and stores the rest of the item. After a
 *   write the post-image's images are compared with what was sent; a record missing one fails with a
 *   validation error naming the image (a create that lost one is deleted again, so nothing half-made
 *   stays); never silently.
 * - conflicts: Webflow has no conditional update. Right before an update or delete batch, the items
 *   with `expected` values are read (by id, or the whole collection when many) and compared; one
 *   changed since Lockstep read it (or gone) answers `version_conflict` with its current values and is
 *   not written.
 * - publishing: items are written staged (`isDraft: false`: they go live with the next site publish,
 *   see publishSite in port.ts). With `publish: 'live'` the items a batch wrote are published right
 *   after it (`POST /collections/{id}/items/publish`); one Webflow could not publish fails (transient)
 *   so the runtime writes and publishes it again.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type CanonicalValue,
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
import {
  createWebflowClient,
  WEBFLOW_RATE_LIMIT,
  type WebflowClient,
  type WebflowClientOptions,
  webflowUserMessage,
} from './webflow-api';
import {
  type CanonicalField,
  canonicalType,
  fromCanonical,
  ITEM_TIMES,
  imageUrls,
  isImageType,
  isItemTime,
  slugify,
  toCanonical,
  uniqueSlug,
  type WebflowCollection,
  type WebflowField,
  WebflowValueError,
  webflowFields,
} from './webflow-values';

export const WEBFLOW_BATCH_SIZE = 100;
export const WEBFLOW_MAX_PAGE_SIZE = 100;
/** Page requests one read() makes at most while a pass finds few changes (then it returns). */
export const WEBFLOW_MAX_REQUESTS_PER_READ = 20;
/** Above this many items to check, the collection is listed instead of read item by item. */
const READ_BY_ID_MAX = 3;
const SCHEMA_MAX_AGE_MS = 60_000;

export type WebflowPublishMode = 'staged' | 'live';

export type WebflowItem = {
  id: string;
  cmsLocaleId?: string | null;
  lastPublished?: string | null;
  lastUpdated?: string | null;
  createdOn?: string | null;
  isArchived?: boolean;
  isDraft?: boolean;
  fieldData: Record<string, unknown>;
};

type ListResponse = {
  items?: WebflowItem[];
  pagination?: { limit?: number; offset?: number; total?: number };
};

export const WEBFLOW_CAPABILITIES: Capabilities = {
  batchSize: WEBFLOW_BATCH_SIZE,
  incrementalRead: true,
  // Deletes are reported as events: ids known to the cursor that Webflow no longer has.
  deleteDetection: 'events',
  // Item events wake a run (webhooks.ts; the server makes the site's webhooks and takes deliveries).
  webhooks: true,
  rateLimit: WEBFLOW_RATE_LIMIT,
  // Every field of the collection is read (an empty one as null or false).
  recordsCarryEveryField: true,
};

export type WebflowConnectorOptions = WebflowClientOptions & {
  /** 'staged' (default): written items go live with the next site publish; 'live': published after each batch. */
  publish?: WebflowPublishMode;
  now?: () => number;
};

export type WebflowConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  /** A collection with its fields (cached for a minute). */
  describe(collectionId: string, refresh?: boolean): Promise<WebflowCollection>;
  fieldsOf(collectionId: string): Promise<CanonicalField[]>;
  client: WebflowClient;
};

// ---------------------------------------------------------------------------------------------
// Cursor: the position in a pass and what the last pass saw (id -> fingerprint, pass parity).

type Known = Map<string, { h: string; p: 0 | 1 }>;
type ReadCursor = {
  v: 1;
  /** The parity of the pass under way. */
  p: 0 | 1;
  /** Offset of the next page in the pass. */
  o: number;
  /** The first pass: every item is returned. */
  s?: true;
  /** Packed known ids, fingerprints and parities. */
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
    if (c.v === 1 && (c.p === 0 || c.p === 1) && typeof c.o === 'number' && typeof c.k === 'string') return c;
  } catch {
    // fall through
  }
  return null;
}

/** An item's fingerprint: its lastUpdated and the hash of its canonical values. */
export function fingerprint(item: WebflowItem, record: RecordData): string {
  const t = Date.parse(item.lastUpdated ?? '');
  return `${Number.isNaN(t) ? '0' : t.toString(36)}.${hashRecord(record.fields).slice(0, 12)}`;
}

// ---------------------------------------------------------------------------------------------

export function createWebflowConnector(options: WebflowConnectorOptions): WebflowConnector {
  const client = createWebflowClient(options);
  const now = options.now ?? Date.now;
  const publishMode: WebflowPublishMode = options.publish ?? 'staged';
  const idempotent = new Map<string, string>();
  const schemas = new Map<string, { at: number; collection: WebflowCollection }>();

  const collectionPath = (tableId: string) => {
    const id = tableId.trim();
    if (!id)
      throw new ConnectorError('not_found', 'no Webflow collection id', webflowUserMessage('not_found'));
    return `/collections/${encodeURIComponent(id)}`;
  };

  async function describe(collectionId: string, refresh = false): Promise<WebflowCollection> {
    const known = schemas.get(collectionId);
    if (known && !refresh && now() - known.at <= SCHEMA_MAX_AGE_MS) return known.collection;
    const { body } = await client.request<WebflowCollection>({
      method: 'GET',
      path: collectionPath(collectionId),
    });
    const collection = { ...body, fields: body.fields ?? [] };
    schemas.set(collectionId, { at: now(), collection });
    return collection;
  }

  const synced = (c: WebflowCollection) => c.fields.filter((f) => canonicalType(f.type) !== undefined);

  function toRecord(c: WebflowCollection, item: WebflowItem): RecordData {
    const fields: Record<string, CanonicalValue> = {};
    for (const f of synced(c)) fields[f.slug] = toCanonical(f, item.fieldData?.[f.slug]);
    for (const t of Object.keys(ITEM_TIMES) as (keyof typeof ITEM_TIMES)[]) {
      const r = normalizeValue('datetime', item[t] ?? null);
      fields[t] = r.ok ? r.value : null;
    }
    return { id: String(item.id), fields };
  }

  async function listPage(tableId: string, offset: number, limit: number): Promise<ListResponse> {
    const { body } = await client.request<ListResponse>({
      method: 'GET',
      path: `${collectionPath(tableId)}/items`,
      query: { offset, limit },
    });
    return body ?? {};
  }

  async function listAll(tableId: string): Promise<WebflowItem[]> {
    const out: WebflowItem[] = [];
    for (let offset = 0; ; ) {
      const page = await listPage(tableId, offset, WEBFLOW_MAX_PAGE_SIZE);
      const items = page.items ?? [];
      out.push(...items);
      offset += items.length;
      const total = page.pagination?.total;
      if (
        items.length === 0 ||
        (total !== undefined ? offset >= total : items.length < WEBFLOW_MAX_PAGE_SIZE)
      )
        return out;
    }
  }

  /** The items with these ids as they are now (ids not found left out). */
  async function fetchByIds(tableId: string, ids: string[]): Promise<WebflowItem[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    if (unique.length > READ_BY_ID_MAX) {
      const wanted = new Set(unique);
      return (await listAll(tableId)).filter((i) => wanted.has(String(i.id)));
    }
    const out: WebflowItem[] = [];
    for (const id of unique) {
      try {
        const { body } = await client.request<WebflowItem>({
          method: 'GET',
          path: `${collectionPath(tableId)}/items/${encodeURIComponent(id)}`,
        });
        if (body?.id) out.push(body);
      } catch (error) {
        if (error instanceof ConnectorError && error.code === 'not_found') continue;
        throw error;
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const collection = await describe(tableId);
    const want = Math.max(1, opts.pageSize);
    const given = decode(cursor);
    const c: ReadCursor = given ?? { v: 1, p: 1, o: 0, s: true, k: '' };
    const known = unpackKnown(c.k);
    const records: RecordData[] = [];
    let offset = c.o;
    let ended = false;
    let requests = 0;
    while (records.length < want && requests < WEBFLOW_MAX_REQUESTS_PER_READ) {
      const limit = Math.min(WEBFLOW_MAX_PAGE_SIZE, want - records.length);
      const page = await listPage(tableId, offset, limit);
      requests++;
      const items = page.items ?? [];
      for (const item of items) {
        const record = toRecord(collection, item);
        const h = fingerprint(item, record);
        const before = known.get(record.id);
        if (c.s || !before || before.h !== h) records.push(record);
        known.set(record.id, { h, p: c.p });
      }
      offset += items.length;
      const total = page.pagination?.total;
      if (items.length === 0 || items.length < limit || (total !== undefined && offset >= total)) {
        ended = true;
        break;
      }
    }
    const deletedIds: string[] = [];
    if (ended) {
      // Ids the pass did not see: still in Webflow (compared now) or gone (confirmed by id).
      const missing = [...known].filter(([, e]) => e.p !== c.p).map(([id]) => id);
      if (missing.length > 0) {
        const present = new Set<string>();
        for (const item of await fetchByIds(tableId, missing)) {
          const record = toRecord(collection, item);
          present.add(record.id);
          const h = fingerprint(item, record);
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
    // Within a pass a record is returned once (an item can move between offset pages).
    const seen = new Set<string>();
    const unique = records.filter((r) => !seen.has(r.id) && seen.add(r.id));
    const next: ReadCursor = ended
      ? { v: 1, p: c.p === 1 ? 0 : 1, o: 0, k: packKnown(known) }
      : { ...c, o: offset, k: packKnown(known) };
    return {
      records: unique,
      deletedIds,
      nextCursor: encode(next),
      hasMore: !ended,
      // Absence is evidence only when this one page holds the whole table (a first scan in one page).
      scanComplete: given === null && ended && requests === 1,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  function failure(err: unknown, current?: RecordData | null): WriteResult {
    const e =
      err instanceof ConnectorError
        ? err
        : err instanceof WebflowValueError
          ? new ConnectorError('validation', err.message, webflowUserMessage('validation', err.message))
          : new ConnectorError('transient', String(err), webflowUserMessage('transient'));
    return {
      ok: false,
      error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage },
      ...(current !== undefined ? { current } : {}),
    };
  }

  function conflict(tableId: string, id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `Webflow ${tableId} item ${id} changed since it was read`,
        userFacingMessage: webflowUserMessage('version_conflict'),
      },
      current,
    };
  }

  /** Canonical fields as `fieldData` (read-only and unknown fields left out). */
  function fieldDataFor(
    c: WebflowCollection,
    fields: Record<string, CanonicalValue>,
    before?: WebflowItem,
  ): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [slug, value] of Object.entries(fields)) {
      if (isItemTime(slug)) continue;
      const f = c.fields.find((x) => x.slug === slug);
      if (!f || f.isEditable === false || !canonicalType(f.type)) continue;
      const v = fromCanonical(f, value);
      // An image the item holds already (same URL) goes with its fileId: Webflow keeps it as it is.
      out[slug] = before && isImageType(f.type) ? withKnownFiles(v, before.fieldData?.[f.slug]) : v;
    }
    return out;
  }

  /** The images sent that the stored item does not hold (Webflow skipped them): text for a person. */
  /**
   * The images sent that the stored item does not hold (Webflow skipped them): text for a person.
   * Webflow hosts an image it takes under a URL of its own, and keeps a field's old value when it
   * skips its new image: what counts is how many new images (URLs the item did not hold before) came
   * back for the new ones sent.
   */
  function droppedImages(
    c: WebflowCollection,
    sent: Record<string, unknown>,
    item: WebflowItem,
    before?: WebflowItem,
  ): string | null {
    const lost: string[] = [];
    for (const f of c.fields) {
      if (!isImageType(f.type) || !(f.slug in sent)) continue;
      const old = new Set(imageUrls(before?.fieldData?.[f.slug]));
      const sentNew = imageUrls(sent[f.slug]).filter((u) => !old.has(u));
      const gotNew = imageUrls(item.fieldData?.[f.slug]).filter((u) => !old.has(u));
      if (gotNew.length >= sentNew.length) continue;
      const names = sentNew.slice(gotNew.length);
      lost.push(`${f.displayName || f.slug}: ${names.map((u) => `"${u}"`).join(', ')}`);
    }
    if (lost.length === 0) return null;
    return `Webflow did not store the image ${lost.join('; ')}. Webflow takes images up to 4 MB (and only from public URLs); use a smaller image.`;
  }

  const imageFailure = (text: string) =>
    failure(new ConnectorError('validation', `Webflow skipped an image: ${text}`, text));

  /** A chunk of items sent whole; refused whole for a value, sent again one by one. */
  async function perItem<T>(
    chunk: T[],
    sendMany: (items: T[]) => Promise<WriteResult[]>,
  ): Promise<WriteResult[]> {
    try {
      return await sendMany(chunk);
    } catch (err) {
      const itemLevel =
        err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found');
      // Rate limits, outages and refused credentials concern the whole run: the runtime retries it.
      if (!itemLevel) throw err;
      if (chunk.length === 1) return [failure(err)];
      const out: WriteResult[] = [];
      for (const one of chunk) {
        try {
          out.push(...(await sendMany([one])));
        } catch (e) {
          if (!(e instanceof ConnectorError && (e.code === 'validation' || e.code === 'not_found'))) throw e;
          out.push(failure(e));
        }
      }
      return out;
    }
  }

  const itemsOf = (body: unknown): WebflowItem[] => {
    if (!body || typeof body !== 'object') return [];
    const b = body as { items?: WebflowItem[]; id?: string };
    if (Array.isArray(b.items)) return b.items;
    return b.id ? [body as WebflowItem] : [];
  };

  /** Slugs already used in the collection (listed once per write when a create needs one). */
  async function takenSlugs(tableId: string): Promise<Set<string>> {
    return new Set(
      (await listAll(tableId)).map((i) => String(i.fieldData?.slug ?? '')).filter((s) => s !== ''),
    );
  }

  /**
   * Changed since read: the items with `expected` values read now and compared. A changed one maps
   * to what it holds now, a gone one to null.
   */
  async function changedSince(
    tableId: string,
    c: WebflowCollection,
    items: { id: string; expected?: Record<string, CanonicalValue>; read?: boolean }[],
    every = false,
  ): Promise<{ changed: Map<string, RecordData | null>; present: Map<string, WebflowItem> }> {
    const checked = items.filter((x) => x.expected && Object.keys(x.expected).length > 0);
    const out = new Map<string, RecordData | null>();
    const toRead = every ? items : items.filter((x) => x.read || checked.includes(x));
    if (toRead.length === 0) return { changed: out, present: new Map() };
    const byId = new Map(
      (
        await fetchByIds(
          tableId,
          toRead.map((x) => x.id),
        )
      ).map((i) => [String(i.id), i]),
    );
    for (const x of checked) {
      const item = byId.get(x.id);
      if (!item) {
        out.set(x.id, null);
        continue;
      }
      const record = toRecord(c, item);
      for (const [slug, expected] of Object.entries(x.expected ?? {})) {
        if (!(slug in record.fields)) continue;
        const f = c.fields.find((y) => y.slug === slug);
        const type = isItemTime(slug) ? 'datetime' : f ? canonicalType(f.type) : undefined;
        if (!type) continue;
        const want = normalizeValue(type, expected ?? null);
        if (!want.ok || !valuesEqual(want.value, record.fields[slug] ?? null)) {
          out.set(x.id, record);
          break;
        }
      }
    }
    return { changed: out, present: byId };
  }

  /** 'live': the items a batch wrote are published; one Webflow could not publish fails (transient). */
  async function publishWritten(tableId: string, results: WriteResult[]): Promise<WriteResult[]> {
    if (publishMode !== 'live') return results;
    const ids = [...new Set(results.flatMap((r) => (r.ok && r.postImage ? [r.remoteId] : [])))];
    if (ids.length === 0) return results;
    const failed = new Map<string, string>();
    for (let i = 0; i < ids.length; i += WEBFLOW_BATCH_SIZE) {
      const chunk = ids.slice(i, i + WEBFLOW_BATCH_SIZE);
      const { body } = await client.request<{ publishedItemIds?: string[]; errors?: string[] | null }>({
        method: 'POST',
        path: `${collectionPath(tableId)}/items/publish`,
        body: { itemIds: chunk },
        // Publishing an item twice publishes the same content: safe to send again.
        idempotent: true,
      });
      const published = body?.publishedItemIds;
      const errors = (body?.errors ?? []).map(String);
      for (const id of chunk) {
        const named = errors.find((e) => e.includes(id));
        if (named || (Array.isArray(published) && !published.includes(id)))
          failed.set(id, named ?? 'not published');
      }
    }
    return results.map((r) =>
      r.ok && failed.has(r.remoteId)
        ? failure(
            new ConnectorError(
              'transient',
              `Webflow did not publish item ${r.remoteId}: ${failed.get(r.remoteId)}`,
              'Webflow saved the item but did not publish it; Lockstep will publish it again.',
            ),
          )
        : r,
    );
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const c = await describe(tableId);
    const results: WriteResult[] = new Array(requests.length);
    let slugs: Set<string> | null = null;

    let i = 0;
    while (i < requests.length) {
      const kind = requests[i]?.kind;
      let j = i;
      while (j < requests.length && requests[j]?.kind === kind) j++;
      for (let k = i; k < j; k += WEBFLOW_BATCH_SIZE) {
        const group = requests
          .slice(k, Math.min(j, k + WEBFLOW_BATCH_SIZE))
          .map((r, n) => ({ r, index: k + n }));
        let groupResults: WriteResult[];
        if (kind === 'create') {
          type Create = Extract<WriteRequest, { kind: 'create' }>;
          const fresh = group.filter(({ r }) => !idempotent.has(r.idempotencyKey));
          // Values first: a value Webflow cannot take fails its record before anything is sent.
          const prepared = new Map<number, Record<string, unknown> | WriteResult>();
          for (const { r, index } of fresh) {
            try {
              prepared.set(index, fieldDataFor(c, (r as Create).fields));
            } catch (err) {
              prepared.set(index, failure(err));
            }
          }
          const toSend = fresh.filter(({ index }) => !('ok' in (prepared.get(index) as object)));
          if (toSend.some(({ index }) => !(prepared.get(index) as Record<string, unknown>).slug)) {
            slugs ??= await takenSlugs(tableId);
            const taken = slugs;
            for (const { index } of toSend) {
              const data = prepared.get(index) as Record<string, unknown>;
              if (typeof data.slug === 'string' && data.slug !== '') taken.add(data.slug);
            }
            for (const { index } of toSend) {
              const data = prepared.get(index) as Record<string, unknown>;
              if (!data.slug) data.slug = uniqueSlug(slugify(String(data.name ?? '')), taken);
            }
          }
          const sent = await perItem(toSend, async (chunk) => {
            const inputs = chunk.map(({ index }) => prepared.get(index) as Record<string, unknown>);
            // Not idempotent: sent twice it would create twice (Webflow has no idempotency key).
            const res = await client.request({
              method: 'POST',
              path: `${collectionPath(tableId)}/items`,
              body: { items: inputs.map((fieldData) => ({ isArchived: false, isDraft: false, fieldData })) },
            });
            const made = itemsOf(res.body);
            const out: WriteResult[] = [];
            const lostImages: string[] = [];
            for (const [n, { r }] of chunk.entries()) {
              const item = matchCreated(inputs[n] as Record<string, unknown>, made, n);
              if (!item) {
                out.push(
                  failure(
                    new ConnectorError(
                      'transient',
                      `Webflow answered no item for create ${n + 1} of ${chunk.length}`,
                      webflowUserMessage('transient'),
                    ),
                  ),
                );
                continue;
              }
              const dropped = droppedImages(c, inputs[n] as Record<string, unknown>, item);
              if (dropped) {
                lostImages.push(String(item.id));
                out.push(imageFailure(dropped));
                continue;
              }
              idempotent.set(r.idempotencyKey, String(item.id));
              out.push({ ok: true, remoteId: String(item.id), postImage: toRecord(c, item) });
            }
            // A create whose image Webflow skipped is taken back: the record fails whole, nothing half-made stays.
            if (lostImages.length > 0)
              await client.request({
                method: 'DELETE',
                path: `${collectionPath(tableId)}/items`,
                body: { items: lostImages.map((id) => ({ id })) },
              });
            return out;
          });
          const byIndex = new Map<number, WriteResult>();
          for (const [n, { index }] of toSend.entries()) byIndex.set(index, sent[n] as WriteResult);
          // A retried create: answered with the item made the first time.
          const retried = group.filter(
            ({ r }) => idempotent.has(r.idempotencyKey) && !fresh.some((f) => f.r === r),
          );
          const again = new Map(
            (
              await fetchByIds(
                tableId,
                retried.map(({ r }) => idempotent.get(r.idempotencyKey) as string),
              )
            ).map((it) => [String(it.id), it]),
          );
          groupResults = group.map(({ r, index }) => {
            const p = prepared.get(index);
            if (p && 'ok' in p) return p as WriteResult;
            const done = byIndex.get(index);
            if (done) return done;
            const id = idempotent.get(r.idempotencyKey) as string;
            const it = again.get(id);
            return it
              ? { ok: true as const, remoteId: id, postImage: toRecord(c, it) }
              : failure(
                  new ConnectorError(
                    'not_found',
                    `Webflow item ${id} not found`,
                    webflowUserMessage('not_found'),
                  ),
                );
          });
          groupResults = await publishWritten(tableId, groupResults);
        } else if (kind === 'update') {
          type Update = Extract<WriteRequest, { kind: 'update' }>;
          // Items whose images are written are read first too: their images are kept by fileId, and
          // compared after the write to tell one Webflow skipped.
          const writesImages = (u: Update) =>
            Object.keys(u.fields).some((slug) => {
              const f = c.fields.find((x) => x.slug === slug);
              return f !== undefined && isImageType(f.type);
            });
          const { changed: stale, present: before } = await changedSince(
            tableId,
            c,
            group.map(({ r }) => ({
              id: (r as Update).remoteId,
              ...((r as Update).expected ? { expected: (r as Update).expected } : {}),
              read: writesImages(r as Update),
            })),
          );
          const prepared = new Map<number, Record<string, unknown> | WriteResult>();
          for (const { r, index } of group) {
            const u = r as Update;
            if (stale.has(u.remoteId)) {
              const current = stale.get(u.remoteId) ?? null;
              prepared.set(
                index,
                current === null
                  ? failure(
                      new ConnectorError(
                        'not_found',
                        `Webflow item ${u.remoteId} not found`,
                        webflowUserMessage('not_found'),
                      ),
                      null,
                    )
                  : conflict(tableId, u.remoteId, current),
              );
              continue;
            }
            try {
              prepared.set(index, fieldDataFor(c, u.fields, before.get(u.remoteId)));
            } catch (err) {
              prepared.set(index, failure(err));
            }
          }
          const toSend = group.filter(({ index }) => !('ok' in (prepared.get(index) as object)));
          const sent = await perItem(toSend, async (chunk) => {
            const inputs = chunk.map(({ r, index }) => ({
              id: (r as Update).remoteId,
              fieldData: prepared.get(index) as Record<string, unknown>,
            }));
            // The same values set twice: safe to retry.
            const res = await client.request({
              method: 'PATCH',
              path: `${collectionPath(tableId)}/items`,
              body: { items: inputs },
              idempotent: true,
            });
            const byId = new Map(itemsOf(res.body).map((it) => [String(it.id), it]));
            const missing = inputs.filter((x) => !byId.has(x.id)).map((x) => x.id);
            // Webflow answers the items it updated; one not in the answer is read back by id.
            for (const it of await fetchByIds(tableId, missing)) byId.set(String(it.id), it);
            return inputs.map((x): WriteResult => {
              const it = byId.get(x.id);
              if (!it)
                return failure(
                  new ConnectorError(
                    'not_found',
                    `Webflow item ${x.id} not found`,
                    webflowUserMessage('not_found'),
                  ),
                );
              const dropped = droppedImages(c, x.fieldData, it, before.get(x.id));
              if (dropped) return imageFailure(dropped);
              return { ok: true, remoteId: x.id, postImage: toRecord(c, it) };
            });
          });
          const byIndex = new Map<number, WriteResult>();
          for (const [n, { index }] of toSend.entries()) byIndex.set(index, sent[n] as WriteResult);
          groupResults = group.map(({ index }) => {
            const p = prepared.get(index);
            return p && 'ok' in p ? (p as WriteResult) : (byIndex.get(index) as WriteResult);
          });
          groupResults = await publishWritten(tableId, groupResults);
        } else {
          type Delete = Extract<WriteRequest, { kind: 'delete' }>;
          const del = (r: WriteRequest) => r as Delete;
          // Every id is read first: one gone already is not deleted again; one edited since it was
          // read is spared.
          const { changed, present } = await changedSince(
            tableId,
            c,
            group.map(({ r }) => ({
              id: del(r).remoteId,
              ...(del(r).expected ? { expected: del(r).expected } : {}),
            })),
            true,
          );
          const spared = new Set([...changed].filter(([, cur]) => cur !== null).map(([id]) => id));
          const doomed = [
            ...new Set(
              group.map(({ r }) => del(r).remoteId).filter((id) => present.has(id) && !spared.has(id)),
            ),
          ];
          if (doomed.length > 0)
            await client.request({
              method: 'DELETE',
              path: `${collectionPath(tableId)}/items`,
              body: { items: doomed.map((id) => ({ id })) },
              // Deleting a deleted item deletes nothing more: replays are harmless.
              idempotent: true,
            });
          groupResults = group.map(({ r }) => {
            const id = del(r).remoteId;
            return spared.has(id)
              ? conflict(tableId, id, changed.get(id) ?? null)
              : { ok: true as const, remoteId: id, postImage: null };
          });
        }
        for (const [n, g] of group.entries()) results[g.index] = groupResults[n] as WriteResult;
      }
      i = j;
    }
    return results;
  }

  return {
    capabilities: WEBFLOW_CAPABILITIES,
    client,
    describe,
    async fieldsOf(collectionId) {
      return webflowFields(await describe(collectionId));
    },
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      const c = await describe(tableId);
      return (await fetchByIds(tableId, ids)).map((it) => toRecord(c, it));
    },
  };
}

/** An image value with the `fileId` of each image the field held already under the same URL. */
function withKnownFiles(value: unknown, held: unknown): unknown {
  const known = new Map<string, string>();
  for (const img of Array.isArray(held) ? held : held ? [held] : []) {
    const i = img as { url?: string; fileId?: string } | null;
    if (typeof i?.url === 'string' && typeof i.fileId === 'string') known.set(i.url, i.fileId);
  }
  const keep = (img: unknown) => {
    const i = img as { url?: string; fileId?: string } | null;
    const fileId = i && typeof i.url === 'string' ? known.get(i.url) : undefined;
    return fileId && i ? { ...i, fileId } : img;
  };
  return Array.isArray(value) ? value.map(keep) : value ? keep(value) : value;
}

/** The created item for an input: the one at its position when it holds the input's slug, else by slug. */
function matchCreated(
  input: Record<string, unknown>,
  made: WebflowItem[],
  n: number,
): WebflowItem | undefined {
  const slug = input.slug;
  const at = made[n];
  if (at && (at.fieldData?.slug === slug || slug === undefined)) return at;
  return made.find((it) => it.fieldData?.slug === slug) ?? at;
}

export type { WebflowField };
