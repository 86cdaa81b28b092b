import type { CanonicalValue, RecordData } from '@lockstep/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, type ReadPage, type TableConnector, type WriteResult } from '../connector';

type Fields = Record<string, CanonicalValue>;

/** A sample webhook delivery, signed by the backend as the app would, after a change to one record. */
export type WebhookDelivery = {
  headers: Record<string, string>;
  body: string;
  /** What parse must point at: the changed record, or only its table when the app sends ids-only pings. */
  expected: { tableRemoteId?: string; recordId?: string };
};

/** A webhook hint: which table, and which record if the app says, to read again. */
export type WebhookHint = { tableRemoteId?: string; recordId?: string };

/**
 * What a connector + backend (a simulator, or the real thing) gives the suite. Optional parts that are
 * missing make their tests skip, visibly.
 */
export type ConformanceHarness = {
  connector: TableConnector;
  tableId: string;
  /** Fields for a new record; each call returns a different valid record. Values must round-trip. */
  sampleFields(): Fields;
  /** Creates records straight in the backend (not through the connector); returns their remote ids. */
  seed(count: number): Promise<string[]>;
  /** Changes a record out of band; returns the fields as the connector should now read them. */
  mutate(remoteId: string): Promise<Fields>;
  /** Deletes a record out of band. */
  remove(remoteId: string): Promise<void>;
  /** Fields the backend refuses as a validation error (e.g. a required field left empty). */
  invalidFields?: () => Fields;
  /** Discovery of the base's tables, as the connector reports it. */
  discover?: () => Promise<{ remoteId: string; fields: { remoteId: string; fieldType: string }[] }[]>;
  /** Makes the backend answer the next `count` requests with 429 or a 5xx. */
  injectFailures?: (kind: 'rate_limited' | 'server_error', count: number) => Promise<void>;
  /** A connector for the same table whose credentials the backend refuses (revoked token, wrong password). */
  badAuthConnector?: () => Promise<TableConnector>;
  webhook?: {
    /** Makes a change and returns the delivery the backend sends for it. */
    deliver(): Promise<WebhookDelivery>;
    verify(headers: Record<string, string>, body: string): boolean | Promise<boolean>;
    parse(headers: Record<string, string>, body: string): WebhookHint[] | Promise<WebhookHint[]>;
  };
  close?: () => Promise<void>;
};

/** Reads from `cursor` until the connector says there is no more; every page is kept. */
export async function readAll(
  connector: TableConnector,
  tableId: string,
  cursor: string | null,
  pageSize: number,
  maxPages = 1000,
): Promise<{ pages: ReadPage[]; records: RecordData[]; deletedIds: string[]; cursor: string }> {
  const pages: ReadPage[] = [];
  let next = cursor;
  for (;;) {
    const page = await connector.read(tableId, next, { pageSize });
    pages.push(page);
    next = page.nextCursor;
    if (!page.hasMore) break;
    if (pages.length >= maxPages) throw new Error(`no end after ${maxPages} pages`);
  }
  return {
    pages,
    records: pages.flatMap((p) => p.records),
    deletedIds: pages.flatMap((p) => p.deletedIds),
    cursor: next as string,
  };
}

async function connectorFailure(call: () => Promise<unknown>): Promise<ConnectorError> {
  try {
    await call();
  } catch (error) {
    expect(error, 'a ConnectorError').toBeInstanceOf(ConnectorError);
    return error as ConnectorError;
  }
  throw new Error('expected the call to fail');
}

function okResult(result: WriteResult | undefined): Extract<WriteResult, { ok: true }> {
  if (!result?.ok) throw new Error(`write failed: ${JSON.stringify(result)}`);
  return result;
}

let keyCounter = 0;
const idempotencyKey = () => `conformance-${process.pid}-${Date.now()}-${++keyCounter}`;

/**
 * The conformance suite every connector + backend pair passes: reads (paged, incremental with
 * deletes), writes (batched, per-item results, post-images, idempotent retries), error mapping
 * (rate limits, server errors, auth) and webhooks. Call it at the top level of a test file.
 */
export function runConformanceSuite(name: string, makeHarness: () => Promise<ConformanceHarness>): void {
  describe(`${name} conformance`, () => {
    let h: ConformanceHarness;
    beforeAll(async () => {
      h = await makeHarness();
    });
    afterAll(async () => {
      await h?.close?.();
    });
    it('declares sane capabilities', () => {
      const c = h.connector.capabilities;
      expect(c.batchSize).toBeGreaterThanOrEqual(1);
      expect(['events', 'full_scan', 'none']).toContain(c.deleteDetection);
      for (const w of c.rateLimit?.windows ?? []) {
        expect(w.limit).toBeGreaterThan(0);
        expect(w.windowMs).toBeGreaterThan(0);
      }
    });

    it('discovers the table with typed, uniquely named fields', async (ctx) => {
      if (!h.discover) return ctx.skip('the harness has no discovery');
      const tables = await h.discover();
      const table = tables.find((t) => t.remoteId === h.tableId);
      expect(table, `table ${h.tableId} in discovery`).toBeDefined();
      const ids = table?.fields.map((f) => f.remoteId) ?? [];
      expect(ids.length).toBeGreaterThan(0);
      expect(new Set(ids).size).toBe(ids.length);
      for (const f of table?.fields ?? []) expect(f.fieldType, f.remoteId).toMatch(/\S/);
    });

    it('reads the whole table across pages, every record exactly once', async () => {
      const seeded = await h.seed(7);
      const { pages, records } = await readAll(h.connector, h.tableId, null, 3);
      expect(pages.length).toBeGreaterThanOrEqual(3);
      const ids = records.map((r) => r.id);
      expect(new Set(ids).size, 'no record twice').toBe(ids.length);
      for (const id of seeded)
        expect(
          ids.filter((x) => x === id),
          id,
        ).toHaveLength(1);
      for (const page of pages) expect(page.records.length).toBeLessThanOrEqual(3);
      // scanComplete says this one page holds the whole table (the runtime takes absence from it as
      // a delete): a scan spread over pages never says so, not even on its last page.
      for (const page of pages) expect(page.scanComplete).toBe(false);
    });

    it('reports a full scan that fits one page as complete', async () => {
      await h.seed(2);
      const page = await h.connector.read(h.tableId, null, { pageSize: 10_000 });
      expect(page.hasMore).toBe(false);
      expect(page.scanComplete).toBe(true);
    });

    it('reads an out-of-band change and delete incrementally from a cursor', async (ctx) => {
      if (!h.connector.capabilities.incrementalRead) return ctx.skip('no incremental read');
      const [changed, deleted, untouched] = await h.seed(3);
      const scan = await readAll(h.connector, h.tableId, null, 50);
      const expected = await h.mutate(changed as string);
      await h.remove(deleted as string);
      const next = await readAll(h.connector, h.tableId, scan.cursor, 50);
      const record = next.records.find((r) => r.id === changed);
      expect(record, 'the changed record').toBeDefined();
      expect(record?.fields).toMatchObject(expected);
      expect(
        next.records.some((r) => r.id === deleted),
        'the deleted record is not read',
      ).toBe(false);
      if (h.connector.capabilities.deleteDetection === 'events') expect(next.deletedIds).toContain(deleted);
      // Coarse app timestamps may make a connector re-read an overlap; it must not lose the change.
      expect(next.deletedIds).not.toContain(untouched);
    });

    it('creates, updates and deletes in batches with per-item results and post-images', async () => {
      const batch = Math.min(3, h.connector.capabilities.batchSize);
      const created = await h.connector.write(
        h.tableId,
        Array.from({ length: batch }, () => ({
          kind: 'create' as const,
          fields: h.sampleFields(),
          idempotencyKey: idempotencyKey(),
        })),
      );
      expect(created).toHaveLength(batch);
      const ids = created.map((r) => okResult(r).remoteId);
      expect(new Set(ids).size).toBe(batch);
      for (const r of created) expect(okResult(r).postImage?.id).toBe(okResult(r).remoteId);

      const fields = h.sampleFields();
      const [updated] = await h.connector.write(h.tableId, [
        { kind: 'update', remoteId: ids[0] as string, fields, idempotencyKey: idempotencyKey() },
      ]);
      expect(okResult(updated).remoteId).toBe(ids[0]);
      expect(okResult(updated).postImage?.fields).toMatchObject(fields);

      const [removed] = await h.connector.write(h.tableId, [
        { kind: 'delete', remoteId: ids[1] as string, idempotencyKey: idempotencyKey() },
      ]);
      expect(removed?.ok).toBe(true);
      const { records } = await readAll(h.connector, h.tableId, null, 100);
      const found = new Map(records.map((r) => [r.id, r]));
      expect(found.has(ids[1] as string), 'deleted record is gone').toBe(false);
      expect(found.get(ids[0] as string)?.fields).toMatchObject(fields);
    });

    it('fails an invalid item alone, in order', async (ctx) => {
      if (!h.invalidFields) return ctx.skip('the harness has no invalid value');
      const good = h.sampleFields();
      const results = await h.connector.write(h.tableId, [
        { kind: 'create', fields: h.sampleFields(), idempotencyKey: idempotencyKey() },
        { kind: 'create', fields: h.invalidFields?.() ?? {}, idempotencyKey: idempotencyKey() },
        { kind: 'create', fields: good, idempotencyKey: idempotencyKey() },
      ]);
      expect(results.map((r) => r.ok)).toEqual([true, false, true]);
      const failed = results[1];
      if (failed && !failed.ok) {
        expect(failed.error.code).toBe('validation');
        expect(failed.error.userFacingMessage).toMatch(/\S/);
      }
      expect(okResult(results[2]).postImage?.fields).toMatchObject(good);
    });

    it('does not duplicate a create retried with the same idempotency key', async () => {
      const key = idempotencyKey();
      const fields = h.sampleFields();
      const [first] = await h.connector.write(h.tableId, [{ kind: 'create', fields, idempotencyKey: key }]);
      const before = (await readAll(h.connector, h.tableId, null, 100)).records.length;
      const [retried] = await h.connector.write(h.tableId, [{ kind: 'create', fields, idempotencyKey: key }]);
      expect(okResult(retried).remoteId).toBe(okResult(first).remoteId);
      const after = (await readAll(h.connector, h.tableId, null, 100)).records;
      expect(after).toHaveLength(before);
      expect(after.filter((r) => r.id === okResult(first).remoteId)).toHaveLength(1);
    });

    for (const kind of ['rate_limited', 'server_error'] as const) {
      it(`rides out two ${kind} answers`, async (ctx) => {
        if (!h.injectFailures) return ctx.skip('the backend cannot be made to fail');
        await h.seed(1);
        await h.injectFailures(kind, 2);
        const page = await h.connector.read(h.tableId, null, { pageSize: 10 });
        expect(page.records.length).toBeGreaterThan(0);
      });

      it(`maps persistent ${kind} answers to a retryable code`, async (ctx) => {
        if (!h.injectFailures) return ctx.skip('the backend cannot be made to fail');
        const inject = h.injectFailures;
        await inject(kind, 1000);
        try {
          const error = await connectorFailure(() => h.connector.read(h.tableId, null, { pageSize: 10 }));
          expect(error.code).toBe(kind === 'rate_limited' ? 'rate_limited' : 'transient');
        } finally {
          await inject(kind, 0);
        }
      });
    }

    it('maps refused credentials to auth_invalid', async (ctx) => {
      if (!h.badAuthConnector) return ctx.skip('the harness cannot refuse credentials');
      const connector = await h.badAuthConnector();
      const error = await connectorFailure(() => connector.read(h.tableId, null, { pageSize: 10 }));
      expect(error.code).toBe('auth_invalid');
      expect(error.userFacingMessage).toMatch(/\S/);
      const writeError = await connectorFailure(() =>
        connector.write(h.tableId, [
          { kind: 'create', fields: h.sampleFields(), idempotencyKey: idempotencyKey() },
        ]),
      );
      expect(writeError.code).toBe('auth_invalid');
    });

    it('verifies webhook signatures and parses deliveries to hints', async (ctx) => {
      const webhook = h.webhook;
      if (!webhook) return ctx.skip('the connector has no webhooks');
      const delivery = await webhook.deliver();
      expect(await webhook.verify(delivery.headers, delivery.body)).toBe(true);
      expect(await webhook.verify(delivery.headers, `${delivery.body} `), 'tampered body').toBe(false);
      const unsigned = Object.fromEntries(
        Object.entries(delivery.headers).filter(([k]) => !/signature|mac|hmac/i.test(k)),
      );
      expect(await webhook.verify(unsigned, delivery.body), 'no signature').toBe(false);
      const hints = await webhook.parse(delivery.headers, delivery.body);
      expect(hints).toEqual(expect.arrayContaining([expect.objectContaining(delivery.expected)]));
    });
  });
}
