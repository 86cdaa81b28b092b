import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MASKED_SECRET } from '@lockstep/contract';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, until } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { scheduleApiImports } from '../../jobs/api-import';

/**
 * Issue 22, API import: a local HTTP server serves the same people in each pagination style (page
 * number, offset, cursor, Link header); generate-fetch proposes, fetch reads every page, import
 * upserts them into a PostgreSQL table by their id, on demand and on a schedule.
 */
type Person = {
  id: number;
  name: string;
  email: string;
  score: number;
  active: boolean;
  joined: string;
  updated_at: string;
  website: string;
  meta: { tier: string };
};
const person = (id: number, name: string): Person => ({
  id,
  name,
  email: `${name.toLowerCase()}@example.com`,
  score: id * 10,
  active: id % 2 === 0,
  joined: `2024-01-${String(id).padStart(2, '0')}`,
  updated_at: `2024-02-${String(id).padStart(2, '0')}T10:00:00Z`,
  website: `https://example.com/${id}`,
  meta: { tier: id > 3 ? 'gold' : 'silver' },
});
let people: Person[] = [];
const requests: { url: string; authorization: string | undefined }[] = [];
let server: http.Server;
let origin = '';
const SIZE = 3;

function serve(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', origin);
  requests.push({ url: url.pathname + url.search, authorization: req.headers.authorization });
  const send = (body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const q = (k: string, d: number) => Number(url.searchParams.get(k) ?? d);
  switch (url.pathname) {
    case '/page': {
      const page = q('page', 1);
      const size = q('per_page', SIZE);
      return send({
        data: people.slice((page - 1) * size, page * size),
        page,
        total_pages: Math.ceil(people.length / size),
      });
    }
    case '/offset': {
      const offset = q('offset', 0);
      const limit = q('limit', SIZE);
      return send({
        meta: { offset, limit, total: people.length },
        results: people.slice(offset, offset + limit),
      });
    }
    case '/cursor': {
      const after = q('cursor', 0);
      const items = people.filter((p) => p.id > after).slice(0, SIZE);
      const more = people.some((p) => p.id > (items.at(-1)?.id ?? Number.POSITIVE_INFINITY));
      return send({ items, next_cursor: more ? String(items.at(-1)?.id) : null });
    }
    case '/link': {
      const page = q('page', 1);
      const last = Math.ceil(people.length / SIZE);
      const links = [`<${origin}/link?page=1>; rel="first"`];
      if (page < last) links.push(`</link?page=${page + 1}>; rel="next"`);
      return send(people.slice((page - 1) * SIZE, page * SIZE), { link: links.join(', ') });
    }
    case '/secret': {
      if (req.headers.authorization !== 'Bearer s3cret-token') {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end('{"error":"unauthorized"}');
      }
      return send({ records: people });
    }
    default:
      res.writeHead(404);
      res.end();
  }
}

let t: TestApp;
let api: Api;
let other: Api;
let otherAuth: Record<string, string>;
let auth: Record<string, string>;
let targetUrl: string;
let connectionId: string;

beforeAll(async () => {
  people = [1, 2, 3, 4, 5, 6, 7].map((id) => person(id, `Person${id}`));
  server = http.createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await createTestApp();
  const a = await signUp(t.app, 'api-import-a@test.test');
  const b = await signUp(t.app, 'api-import-b@test.test');
  auth = a.auth;
  otherAuth = b.auth;
  api = apiAs(t.app, a.auth);
  other = apiAs(t.app, b.auth);
  for (const u of [api, other]) await u('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `api_import_${randomUUID().slice(0, 8)}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  targetUrl = databaseUrl(name);
  await query(
    targetUrl,
    `create table people (pk serial primary key, external_id text unique, name text, email text,
       score numeric, active boolean, joined date)`,
  );
  connectionId = (
    await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      name: 'Target',
      connectionItems: { connectionString: targetUrl },
    })
  ).id;
}, 120_000);
afterAll(async () => {
  await t?.close();
  await new Promise((r) => server?.close(r));
});

const STYLES = [
  { path: '/page?page=1&per_page=3', records: '$.data[*]', pagination: 'page', pages: 3 },
  { path: '/offset?offset=0&limit=3', records: '$.results[*]', pagination: 'offset', pages: 3 },
  { path: '/cursor', records: '$.items[*]', pagination: 'cursor', pages: 3 },
  { path: '/link', records: '$[*]', pagination: 'link_header', pages: 3 },
] as const;

async function post(url: string, payload: unknown, as = auth) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...as, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
}

async function finished(trackingId: string) {
  let last: { status: string; message: string | null } = { status: '', message: null };
  await until(async () => {
    last = await api('GET', `/rest/progress/${trackingId}`);
    return ['COMPLETED', 'FAILED', 'CANCELLED'].includes(last.status);
  }, `import run ${trackingId} finished`);
  return last;
}

describe('generate-fetch', () => {
  it.each(STYLES)('finds the records, the id, the types and the pagination of $pagination', async (style) => {
    const proposal = await api('POST', '/rest/api-import/generate-fetch', { url: `${origin}${style.path}` });
    expect(proposal.config.recordsPath).toBe(style.records);
    expect(proposal.config.idField).toBe('id');
    expect(proposal.config.pagination.type).toBe(style.pagination);
    expect(
      Object.fromEntries(proposal.config.fields.map((f: { name: string; type: string }) => [f.name, f.type])),
    ).toEqual({
      id: 'number',
      name: 'text',
      email: 'email',
      score: 'number',
      active: 'boolean',
      joined: 'date',
      updated_at: 'datetime',
      website: 'url',
      meta: 'json',
    });
    expect(proposal.sampleRecords[0].id).toBe(1);
  });

  it('proposes from a pasted sample response without calling anything', async () => {
    const before = requests.length;
    const proposal = await api('POST', '/rest/api-import/generate-fetch', {
      sample: JSON.stringify({
        response: {
          rows: [
            { uuid: 'a-1', title: 'A' },
            { uuid: 'b-2', title: 'B' },
          ],
        },
      }),
    });
    expect(proposal.config.recordsPath).toBe('$.response.rows[*]');
    expect(proposal.config.idField).toBe('uuid');
    expect(proposal.config.pagination).toEqual({ type: 'none' });
    expect(requests.length).toBe(before);
  });
});

describe('fetch', () => {
  it.each(STYLES)('reads every page of $pagination', async (style) => {
    const { config } = await api('POST', '/rest/api-import/generate-fetch', {
      url: `${origin}${style.path}`,
    });
    const preview = await api('POST', '/rest/api-import/fetch', { config });
    expect(preview.totalCount).toBe(7);
    expect(preview.records.map((r: Person) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(preview.pagesRead).toBe(style.pages);
    expect(preview.stoppedBecause).toBe('last_page');
  });

  it('stops at the page cap and the record cap, and previews the first records only', async () => {
    const { config } = await api('POST', '/rest/api-import/generate-fetch', {
      url: `${origin}/page?page=1&per_page=3`,
    });
    const capped = await api('POST', '/rest/api-import/fetch', { config, maxPages: 2 });
    expect(capped).toMatchObject({ totalCount: 6, pagesRead: 2, stoppedBecause: 'page_cap' });
    const few = await api('POST', '/rest/api-import/fetch', { config, maxRecords: 4, previewCount: 2 });
    expect(few).toMatchObject({ totalCount: 4, stoppedBecause: 'record_cap' });
    expect(few.records).toHaveLength(2);
  });

  it('sends the auth it is given', async () => {
    const res = await post('/rest/api-import/fetch', {
      config: { url: `${origin}/secret`, recordsPath: '$.records[*]', idField: 'id' },
    });
    expect(res.statusCode).toBe(502);
    expect(res.json().response.userFacingMessage).toMatch(/401/);
    const ok = await api('POST', '/rest/api-import/fetch', {
      config: {
        url: `${origin}/secret`,
        recordsPath: '$.records[*]',
        idField: 'id',
        auth: { type: 'bearer', token: 's3cret-token' },
      },
    });
    expect(ok.totalCount).toBe(7);
  });
});

describe('import into PostgreSQL', () => {
  it('creates the records, then after the source changes updates them without duplicates', async () => {
    const { config } = await api('POST', '/rest/api-import/generate-fetch', { url: `${origin}/cursor` });
    const mapped = await api('POST', '/rest/api-import/automap', {
      target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' },
      fields: config.fields,
      idField: config.idField,
    });
    expect(mapped.matchTargetFieldId).toBe('external_id');
    expect(mapped.mapping).toEqual(
      expect.arrayContaining(
        ['name', 'email', 'score', 'active', 'joined'].map((n) =>
          expect.objectContaining({ sourceField: n, targetFieldId: n }),
        ),
      ),
    );
    const started = await post('/rest/api-import/import', {
      name: 'People',
      config,
      target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' },
      // The user's mapping wins over automap's: email is left out.
      mapping: [
        { sourceField: 'id', targetFieldId: 'external_id' },
        { sourceField: 'name', targetFieldId: 'name' },
        { sourceField: 'score', targetFieldId: 'score' },
        { sourceField: 'active', targetFieldId: 'active' },
        { sourceField: 'joined', targetFieldId: 'joined' },
      ],
    });
    expect(started.statusCode, started.body).toBe(201);
    const { apiImport, trackingId } = started.json();
    expect(apiImport.matchTargetFieldId).toBe('external_id');
    const first = await finished(trackingId);
    expect(first.status, first.message ?? '').toBe('COMPLETED');
    let rows = await query(targetUrl, 'select * from people order by external_id');
    expect(rows.map((r) => r.external_id)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(rows[2]).toMatchObject({ name: 'Person3', email: null, score: '30', active: false });
    const saved = await api('GET', `/rest/api-import/${apiImport.id}`);
    expect(saved.lastRunStatus).toBe('succeeded');
    expect(saved.lastRunCounts).toMatchObject({
      fetched: 7,
      created: 7,
      updated: 0,
      unchanged: 0,
      failed: 0,
    });

    // The source changes: one renamed, one new; nothing is deleted when one disappears.
    people = people.filter((p) => p.id !== 7);
    (people[1] as Person).name = 'Renamed';
    people.push(person(8, 'Person8'));
    const again = await api('POST', `/rest/api-import/${apiImport.id}/run`);
    expect((await finished(again.trackingId)).status).toBe('COMPLETED');
    rows = await query(targetUrl, 'select * from people order by external_id');
    expect(rows.map((r) => r.external_id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    expect(rows.find((r) => r.external_id === '2')?.name).toBe('Renamed');
    const counts = (await api('GET', `/rest/api-import/${apiImport.id}`)).lastRunCounts;
    expect(counts).toMatchObject({ fetched: 7, created: 1, updated: 1, unchanged: 5 });
  });

  it('runs a scheduled import when it is due, and not again before its interval', async () => {
    await query(targetUrl, 'delete from people');
    const { config } = await api('POST', '/rest/api-import/generate-fetch', { url: `${origin}/link` });
    const started = await api('POST', '/rest/api-import/import', {
      name: 'Hourly people',
      config,
      target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' },
      schedule: 'hourly',
      runNow: false,
    });
    expect(started.trackingId).toBeNull();
    expect(started.apiImport.lastRunStatus).toBe('never');
    expect(await scheduleApiImports(t.ctx.db, t.ctx.boss)).toBe(1);
    await until(async () => {
      const got = await api('GET', `/rest/api-import/${started.apiImport.id}`);
      return got.lastRunStatus === 'succeeded';
    }, 'the scheduled run succeeded');
    const rows = await query(targetUrl, 'select external_id, email from people order by external_id');
    expect(rows).toHaveLength(people.length);
    // Automap mapped email this time.
    expect(rows[0]?.email).toBe('person1@example.com');
    expect(await scheduleApiImports(t.ctx.db, t.ctx.boss)).toBe(0);
    const later = new Date(Date.now() + 61 * 60 * 1000);
    expect(await scheduleApiImports(t.ctx.db, t.ctx.boss, later)).toBe(1);
    await until(async () => {
      const got = await api('GET', `/rest/api-import/${started.apiImport.id}`);
      return got.lastRunStatus === 'succeeded' && got.lastRunCounts.unchanged === people.length;
    }, 'the second scheduled run found everything unchanged');
    const listed = await api('GET', '/rest/api-import');
    expect(listed.items.map((i: { name: string }) => i.name)).toContain('Hourly people');
    expect(listed.items.find((i: { name: string }) => i.name === 'Hourly people').nextRunAt).not.toBeNull();
  });

  it('seals secrets at rest, masks them in answers and still sends them', async () => {
    const started = await api('POST', '/rest/api-import/import', {
      name: 'Secret people',
      config: {
        url: `${origin}/secret`,
        recordsPath: '$.records[*]',
        idField: 'id',
        fields: [
          { name: 'id', type: 'number' },
          { name: 'name', type: 'text' },
        ],
        auth: { type: 'bearer', token: 's3cret-token' },
        headers: { 'X-Api-Key': 'key-value-123', 'X-Trace': 'visible' },
      },
      target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' },
    });
    expect(started.apiImport.config.auth).toEqual({ type: 'bearer', token: MASKED_SECRET });
    expect(started.apiImport.config.headers).toEqual({ 'X-Api-Key': MASKED_SECRET, 'X-Trace': 'visible' });
    const stored = await t.ctx.db
      .selectFrom('api_import')
      .selectAll()
      .where('id', '=', started.apiImport.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain('s3cret-token');
    expect(JSON.stringify(stored)).not.toContain('key-value-123');
    expect((await finished(started.trackingId)).status).toBe('COMPLETED');
    expect(requests.at(-1)?.authorization).toBe('Bearer s3cret-token');
    const listed = await api('GET', '/rest/api-import');
    expect(JSON.stringify(listed)).not.toContain('s3cret-token');
    // A mask sent back as a secret is refused, not stored.
    const masked = await post('/rest/api-import/import', {
      name: 'Masked',
      config: { ...started.apiImport.config },
      target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' },
    });
    expect(masked.statusCode).toBe(400);
  });
});

describe('ownership and bad input', () => {
  it("answers 404 to another user for an import and for someone else's connection", async () => {
    const { items } = await api('GET', '/rest/api-import');
    const id = items[0].id;
    for (const [method, url] of [
      ['GET', `/rest/api-import/${id}`],
      ['DELETE', `/rest/api-import/${id}`],
      ['POST', `/rest/api-import/${id}/run`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: otherAuth });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().response.userFacingMessage).toBeTruthy();
    }
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/rest/api-import/${id}`,
      headers: { ...otherAuth, 'content-type': 'application/json' },
      payload: { schedule: 'daily' },
    });
    expect(patched.statusCode).toBe(404);
    expect((await api('GET', `/rest/api-import/${id}`)).schedule).not.toBe('daily');
    expect((await other('GET', '/rest/api-import')).items).toEqual([]);
    const { config } = await api('POST', '/rest/api-import/generate-fetch', { url: `${origin}/link` });
    const theirs = await post(
      '/rest/api-import/import',
      { name: 'x', config, target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' } },
      otherAuth,
    );
    expect(theirs.statusCode).toBe(404);
    expect((await api('GET', `/rest/api-import/${id}`)).id).toBe(id);
  });

  it('answers bad input in the error envelope', async () => {
    for (const [url, payload, status] of [
      ['/rest/api-import/generate-fetch', {}, 400],
      ['/rest/api-import/generate-fetch', { sample: 'not json' }, 400],
      ['/rest/api-import/generate-fetch', { url: 'ftp://example.com/x' }, 400],
      [
        '/rest/api-import/fetch',
        { config: { url: `${origin}/page`, recordsPath: '$.data[?(@.id>1)]', idField: 'id' } },
        400,
      ],
      [
        '/rest/api-import/fetch',
        { config: { url: `${origin}/page`, recordsPath: '$.data[*]', idField: 'id' }, maxPages: 0 },
        400,
      ],
      [
        '/rest/api-import/import',
        {
          name: 'No id',
          config: { url: `${origin}/page`, recordsPath: '$.data[*]', idField: null },
          target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.people' },
        },
        400,
      ],
      [
        '/rest/api-import/import',
        {
          name: 'No table',
          config: { url: `${origin}/page`, recordsPath: '$.data[*]', idField: 'id' },
          target: { connectionId, baseRemoteId: 'public', tableRemoteId: 'public.nothing' },
        },
        404,
      ],
    ] as const) {
      const res = await post(url, payload);
      expect(res.statusCode, `${url} ${JSON.stringify(payload)}: ${res.body}`).toBe(status);
      const body = res.json();
      expect(body).toMatchObject({ statusCode: status, path: url });
      expect(body.response.userFacingMessage).toBeTruthy();
    }
  });

  it('deletes an import, leaving its records in the app', async () => {
    const { items } = await api('GET', '/rest/api-import');
    const before = (await query(targetUrl, 'select count(*)::int as n from people'))[0]?.n;
    await api('DELETE', `/rest/api-import/${items[0].id}`);
    const res = await t.app.inject({ url: `/rest/api-import/${items[0].id}`, headers: auth });
    expect(res.statusCode).toBe(404);
    expect((await query(targetUrl, 'select count(*)::int as n from people'))[0]?.n).toBe(before);
  });
});
