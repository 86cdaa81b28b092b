import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanonicalValue, RecordData } from '@lockstep/engine';
import { ConnectorError, type TableConnector, type WriteResult } from '../connector';
import { HttpClient } from '../http-client';
import { createMemoryRateLimitStore, RateLimiter } from '../rate-limiter';
import { hmacSha256, isFreshTimestamp, verifyHmacSha256 } from '../webhooks';
import { runConformanceSuite, type WebhookHint } from './index';

// The suite against a small HTTP app and a connector built only from the SDK pieces (HttpClient,
// RateLimiter, webhook helpers). It runs the branches PostgreSQL cannot (429, 5xx, webhooks) and
// shows how a SaaS connector wires the SDK together.

type Fields = Record<string, CanonicalValue>;
type SimRecord = { id: string; fields: Fields; seq: number };

const TOKEN = 'good-token';
const WEBHOOK_SECRET = 'whsec_reference';

function startSimulator() {
  const records = new Map<string, SimRecord>();
  const tombstones: { id: string; seq: number }[] = [];
  const applied = new Map<string, string>();
  let seq = 0;
  let nextId = 1;
  const failures = { kind: 'rate_limited' as 'rate_limited' | 'server_error', count: 0 };

  const put = (id: string, fields: Fields) => {
    records.set(id, { id, fields: { ...records.get(id)?.fields, ...fields }, seq: ++seq });
    return records.get(id) as SimRecord;
  };
  const create = (fields: Fields) => put(`rec${nextId++}`, fields);
  const remove = (id: string) => {
    records.delete(id);
    tombstones.push({ id, seq: ++seq });
  };

  function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let text = '';
    for await (const chunk of req) text += chunk;
    if (failures.count > 0) {
      failures.count--;
      if (failures.kind === 'rate_limited')
        return answer(res, 429, { error: 'slow down' }, { 'retry-after': '0' });
      return answer(res, 503, { error: 'unavailable' });
    }
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return answer(res, 401, { error: 'AUTHENTICATION_REQUIRED' });
    const url = new URL(req.url ?? '/', 'http://sim');
    if (req.method === 'GET' && url.pathname === '/v1/tables/items/records') {
      const since = Number(url.searchParams.get('since') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const after = url.searchParams.get('after');
      if (since > 0) {
        const changed = [...records.values(), ...tombstones]
          .filter((r) => r.seq > since)
          .sort((a, b) => a.seq - b.seq)
          .slice(0, limit);
        return answer(res, 200, {
          records: changed.filter((r) => 'fields' in r),
          deleted: changed.filter((r) => !('fields' in r)).map((r) => r.id),
          seq: changed.at(-1)?.seq ?? since,
          more: changed.length === limit,
        });
      }
      const sorted = [...records.values()].sort((a, b) => Number(a.id.slice(3)) - Number(b.id.slice(3)));
      const start = after ? sorted.findIndex((r) => Number(r.id.slice(3)) > Number(after.slice(3))) : 0;
      const page = start < 0 ? [] : sorted.slice(start, start + limit);
      const more = start >= 0 && start + limit < sorted.length;
      return answer(res, 200, { records: page, next: more ? page.at(-1)?.id : null, seq });
    }
    if (req.method === 'POST' && url.pathname === '/v1/tables/items/records/batch') {
      const items = JSON.parse(text).items as {
        op: 'create' | 'update' | 'delete';
        id?: string;
        fields?: Fields;
        key: string;
      }[];
      if (items.length > 10) return answer(res, 422, { error: 'TOO_MANY_RECORDS' });
      const results = items.map((item) => {
        if (item.fields && (typeof item.fields.name !== 'string' || item.fields.name === ''))
          return { error: { type: 'INVALID_VALUE_FOR_COLUMN', message: 'name must be text' } };
        if (item.op === 'create') {
          const done = applied.get(item.key);
          if (done && records.has(done)) return { record: records.get(done) };
          const record = create(item.fields ?? {});
          applied.set(item.key, record.id);
          return { record };
        }
        if (!item.id || !records.has(item.id)) return { error: { type: 'NOT_FOUND', message: 'no record' } };
        if (item.op === 'update') return { record: put(item.id, item.fields ?? {}) };
        remove(item.id);
        return { deleted: item.id };
      });
      return answer(res, 200, { results });
    }
    return answer(res, 404, { error: 'NOT_FOUND' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => answer(res, 500, { error: 'simulator failed' }));
  });
  return { server, records, create, put, remove, failures };
}

type Cursor = { after: string | null; seq: number };
const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
const decode = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString()) as Cursor;

function referenceConnector(baseUrl: string, token: string): TableConnector {
  const policy = { scope: 'base' as const, windows: [{ limit: 50, windowMs: 1000 }] };
  const limiter = new RateLimiter(policy, createMemoryRateLimitStore());
  const http = new HttpClient({
    baseUrl,
    headers: { authorization: `Bearer ${token}` },
    baseDelayMs: 1,
    acquirePermit: (cost) => limiter.acquire('base', cost),
    mapError: (status, body) => {
      const error = (body as { error?: string } | null)?.error;
      if (status === 401 && error === 'AUTHENTICATION_REQUIRED')
        return new ConnectorError('auth_invalid', error, 'The token was refused. Reconnect the app.');
      return null;
    },
  });
  type Page = {
    records: RecordData[];
    next?: string | null;
    deleted?: string[];
    seq: number;
    more?: boolean;
  };
  return {
    capabilities: {
      batchSize: 10,
      incrementalRead: true,
      deleteDetection: 'events',
      webhooks: true,
      rateLimit: policy,
    },
    async read(table, cursorText, { pageSize }) {
      const cursor = cursorText ? decode(cursorText) : { after: null, seq: 0 };
      const limit = Math.min(pageSize, 100);
      if (cursorText && cursor.after === null) {
        const { body } = await http.request<Page>({
          method: 'GET',
          path: `/tables/${table}/records`,
          query: { since: cursor.seq, limit },
        });
        return {
          records: body.records.map((r) => ({ id: r.id, fields: r.fields })),
          deletedIds: body.deleted ?? [],
          hasMore: body.more ?? false,
          scanComplete: false,
          nextCursor: encode({ after: null, seq: body.seq }),
        };
      }
      const { body } = await http.request<Page>({
        method: 'GET',
        path: `/tables/${table}/records`,
        query: { after: cursor.after ?? undefined, limit },
      });
      // The first page fixes the change sequence the scan started from.
      const seq = cursor.after === null ? body.seq : cursor.seq;
      return {
        records: body.records.map((r) => ({ id: r.id, fields: r.fields })),
        deletedIds: [],
        hasMore: Boolean(body.next),
        scanComplete: cursor.after === null && !body.next,
        nextCursor: encode({ after: body.next ?? null, seq }),
      };
    },
    async write(table, requests) {
      const { body } = await http.request<{
        results: { record?: RecordData; deleted?: string; error?: { type: string; message: string } }[];
      }>({
        method: 'POST',
        path: `/tables/${table}/records/batch`,
        body: {
          items: requests.map((r) => ({
            op: r.kind,
            id: r.kind === 'create' ? undefined : r.remoteId,
            fields: r.kind === 'delete' ? undefined : r.fields,
            key: r.idempotencyKey,
          })),
        },
      });
      return body.results.map((result): WriteResult => {
        if (result.error) {
          const code = result.error.type === 'NOT_FOUND' ? 'not_found' : 'validation';
          return {
            ok: false,
            error: {
              code,
              message: result.error.message,
              userFacingMessage: `The app refused: ${result.error.message}`,
            },
          };
        }
        if (result.deleted) return { ok: true, remoteId: result.deleted, postImage: null };
        const record = result.record as RecordData;
        return { ok: true, remoteId: record.id, postImage: { id: record.id, fields: record.fields } };
      });
    },
  };
}

runConformanceSuite('Reference HTTP connector', async () => {
  const sim = startSimulator();
  await new Promise<void>((resolve) => sim.server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(sim.server.address() as AddressInfo).port}/v1`;
  let n = 0;
  const sample = (): Fields => ({ name: `Item ${++n}`, score: n });
  const sign = (timestamp: number, body: string) => hmacSha256(WEBHOOK_SECRET, `${timestamp}.${body}`);
  return {
    connector: referenceConnector(baseUrl, TOKEN),
    tableId: 'items',
    sampleFields: sample,
    invalidFields: () => ({ name: '' }),
    seed: async (count) => Array.from({ length: count }, () => sim.create(sample()).id),
    mutate: async (id) => ({ ...sim.put(id, { name: `Changed ${++n}` }).fields }),
    remove: async (id) => sim.remove(id),
    injectFailures: async (kind, count) => {
      sim.failures.kind = kind;
      sim.failures.count = count;
    },
    badAuthConnector: async () => referenceConnector(baseUrl, 'revoked-token'),
    webhook: {
      async deliver() {
        const record = sim.create(sample());
        const body = JSON.stringify({ event: 'record.created', table: 'items', recordId: record.id });
        const timestamp = Math.floor(Date.now() / 1000);
        return {
          headers: {
            'x-sim-timestamp': String(timestamp),
            'x-sim-signature': `sha256=${sign(timestamp, body)}`,
          },
          body,
          expected: { tableRemoteId: 'items', recordId: record.id },
        };
      },
      verify(headers, body) {
        const timestamp = headers['x-sim-timestamp'] ?? '';
        return (
          isFreshTimestamp(timestamp) &&
          verifyHmacSha256({
            secret: WEBHOOK_SECRET,
            payload: `${timestamp}.${body}`,
            signature: headers['x-sim-signature'],
            prefix: 'sha256=',
          })
        );
      },
      parse(_headers, body): WebhookHint[] {
        const event = JSON.parse(body) as { table: string; recordId: string };
        return [{ tableRemoteId: event.table, recordId: event.recordId }];
      },
    },
    close: async () => {
      sim.server.closeAllConnections();
      await new Promise((resolve) => sim.server.close(resolve));
    },
  };
});
