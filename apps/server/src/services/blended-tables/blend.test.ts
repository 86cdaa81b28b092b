import type { ReadPage, TableConnector, WriteRequest } from '@lockstep/connectors';
import type { BlendedTableConfig } from '@lockstep/contract';
import type { RecordData } from '@lockstep/engine';
import { describe, expect, it } from 'vitest';
import { parseCursor, readBlended, splitBlendedId, weakestCapabilities, writeBlended } from './blend';

/** An in-memory source: pages of `size` over its rows; writes recorded. */
function source(rows: RecordData[], opts: { batchSize?: number; pageComplete?: boolean } = {}) {
  const writes: { table: string; requests: WriteRequest[] }[] = [];
  const c: TableConnector & { writes: typeof writes } = {
    writes,
    capabilities: {
      batchSize: opts.batchSize ?? 10,
      incrementalRead: true,
      deleteDetection: 'full_scan',
      webhooks: false,
    },
    async read(_t, cursor, { pageSize }): Promise<ReadPage> {
      if (cursor === 'inc')
        return { records: [], deletedIds: ['gone'], nextCursor: 'inc', hasMore: false, scanComplete: false };
      const from = cursor ? Number(cursor) : 0;
      const page = rows.slice(from, from + pageSize);
      const hasMore = from + pageSize < rows.length;
      return {
        records: page,
        deletedIds: [],
        nextCursor: hasMore ? String(from + pageSize) : 'inc',
        hasMore,
        scanComplete: (opts.pageComplete ?? true) && from === 0 && !hasMore,
      };
    },
    async write(table, requests) {
      writes.push({ table, requests });
      return requests.map((r, k) =>
        r.kind === 'create'
          ? { ok: true, remoteId: `new${k}`, postImage: { id: `new${k}`, fields: r.fields } }
          : {
              ok: true,
              remoteId: r.remoteId,
              postImage: { id: r.remoteId, fields: r.kind === 'update' ? r.fields : {} },
            },
      );
    },
  };
  return c;
}

const config: BlendedTableConfig = {
  sources: [
    { connectionId: 'c0', baseRemoteId: 'b', tableRemoteId: 't0', name: 'EU' },
    { connectionId: 'c1', baseRemoteId: 'b', tableRemoteId: 't1', name: 'US' },
  ],
  defaultSource: 0,
  fields: [
    { id: 'f1', name: 'Email', type: 'email', sourceFields: ['email', 'mail'], options: {}, readOnly: false },
    { id: 'f2', name: 'Region', type: 'text', sourceFields: ['region', null], options: {}, readOnly: false },
  ],
};
const rows = (prefix: string, n: number, field: string) =>
  Array.from({ length: n }, (_, k) => ({ id: `${prefix}${k}`, fields: { [field]: `${prefix}${k}@x.test` } }));

describe('the composite cursor', () => {
  it('reads every source in turn, prefixing ids, and is scanComplete only when one page held every source', async () => {
    const s = [source(rows('a', 2, 'email')), source(rows('b', 3, 'mail'))];
    const page = await readBlended(config, async (i) => s[i] as TableConnector, null, 100);
    expect(page.records.map((r) => r.id)).toEqual(['0:a0', '0:a1', '1:b0', '1:b1', '1:b2']);
    expect(page.records[3]?.fields).toEqual({ f1: 'b1@x.test', source: 'US' });
    expect(page.hasMore).toBe(false);
    expect(page.scanComplete).toBe(true);
    // The next pass is incremental from each source's own cursor; deletes come back prefixed.
    expect(parseCursor(page.nextCursor, 2)).toEqual({ i: 0, c: ['inc', 'inc'] });
    const next = await readBlended(config, async (i) => s[i] as TableConnector, page.nextCursor, 100);
    expect(next.deletedIds).toEqual(['0:gone', '1:gone']);
    expect(next.scanComplete).toBe(false);
  });

  it('pages across sources without ever claiming a complete scan', async () => {
    const s = [source(rows('a', 3, 'email')), source(rows('b', 3, 'mail'))];
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: ReadPage[] = [];
    do {
      const page: ReadPage = await readBlended(config, async (i) => s[i] as TableConnector, cursor, 2);
      pages.push(page);
      seen.push(...page.records.map((r) => r.id));
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    } while (pages.length < 10);
    expect(seen).toEqual(['0:a0', '0:a1', '0:a2', '1:b0', '1:b1', '1:b2']);
    expect(pages.some((p) => p.scanComplete)).toBe(false);
    expect(parseCursor(cursor, 2)).toEqual({ i: 0, c: ['inc', 'inc'] });
  });

  it('refuses a cursor that does not fit the sources (a new scan follows)', () => {
    expect(() => parseCursor('{"i":0,"c":[null]}', 2)).toThrow(/does not fit/);
    expect(() => parseCursor('nope', 2)).toThrow(/not JSON/);
  });
});

describe('id routing', () => {
  it('splits blended ids at the first colon and refuses ids of no source', () => {
    expect(splitBlendedId('1:rec:with:colons', 2)).toEqual({ index: 1, id: 'rec:with:colons' });
    expect(splitBlendedId('2:x', 2)).toBeNull();
    expect(splitBlendedId('x:1', 2)).toBeNull();
    expect(splitBlendedId('abc', 2)).toBeNull();
  });

  it('routes updates by prefix, creates to the default source or the one Source names, renaming fields back', async () => {
    const s = [source([]), source([])];
    const results = await writeBlended(config, async (i) => s[i] as TableConnector, [
      {
        kind: 'update',
        remoteId: '0:a1',
        fields: { f1: 'new@x.test', f2: 'North', source: 'US' },
        idempotencyKey: 'k1',
      },
      { kind: 'create', fields: { f1: 'c@x.test', f2: 'kept' }, idempotencyKey: 'k2' },
      { kind: 'create', fields: { f1: 'd@x.test', source: 'US' }, idempotencyKey: 'k3' },
      { kind: 'delete', remoteId: '1:b2', idempotencyKey: 'k4' },
      { kind: 'update', remoteId: '7:zz', fields: {}, idempotencyKey: 'k5' },
    ]);
    expect(s[0]?.writes.flatMap((w) => w.requests)).toEqual([
      {
        kind: 'update',
        remoteId: 'a1',
        fields: { email: 'new@x.test', region: 'North' },
        idempotencyKey: 'k1',
      },
      { kind: 'create', fields: { email: 'c@x.test', region: 'kept' }, idempotencyKey: 'k2' },
    ]);
    expect(s[1]?.writes.flatMap((w) => w.requests)).toEqual([
      { kind: 'create', fields: { mail: 'd@x.test' }, idempotencyKey: 'k3' },
      { kind: 'delete', remoteId: 'b2', idempotencyKey: 'k4' },
    ]);
    expect(results.map((r) => (r.ok ? r.remoteId : r.error.code))).toEqual([
      '0:a1',
      '0:new1',
      '1:new0',
      '1:b2',
      'not_found',
    ]);
    expect(results[2]).toMatchObject({
      postImage: { id: '1:new0', fields: { f1: 'd@x.test', source: 'US' } },
    });
  });

  it('writes each source in batches of its own size', async () => {
    const s = [source([], { batchSize: 2 }), source([])];
    const creates: WriteRequest[] = Array.from({ length: 5 }, (_, k) => ({
      kind: 'create',
      fields: { f1: `${k}@x.test` },
      idempotencyKey: `k${k}`,
    }));
    await writeBlended(config, async (i) => s[i] as TableConnector, creates);
    expect(s[0]?.writes.map((w) => w.requests.length)).toEqual([2, 2, 1]);
  });
});

describe('capabilities', () => {
  it('are the weakest of the sources', () => {
    expect(
      weakestCapabilities([
        { batchSize: 100, incrementalRead: true, deleteDetection: 'events', webhooks: true },
        { batchSize: 10, incrementalRead: false, deleteDetection: 'full_scan', webhooks: true },
      ]),
    ).toEqual({ batchSize: 10, incrementalRead: false, deleteDetection: 'full_scan', webhooks: false });
  });
});
