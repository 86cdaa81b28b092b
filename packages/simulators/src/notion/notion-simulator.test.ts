import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { NOTION_VERSION, type NotionSimulator, startNotionSimulator } from './index.ts';

// biome-ignore lint/suspicious/noExplicitAny: test payloads
type Json = Record<string, any>;

async function call(
  sim: NotionSimulator,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${sim.token}`,
      'notion-version': NOTION_VERSION,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, headers: res.headers };
}

const plain = (prop: Json): string => (prop.title ?? prop.rich_text).map((t: Json) => t.plain_text).join('');

describe('Notion simulator', () => {
  let sim: NotionSimulator;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock('2026-01-15T09:00:37.250Z');
    sim = await startNotionSimulator({ clock, idSeed: 42, rateLimit: false });
  });
  afterAll(() => sim.close());

  it('requires the Notion-Version header and a valid bearer token, with Notion error bodies', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const noVersion = await fetch(`${sim.url}/v1/data_sources/${ds}`, {
      headers: { authorization: `Bearer ${sim.token}` },
    });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({
      object: 'error',
      status: 400,
      code: 'missing_version',
      message: expect.stringContaining('Notion-Version header should be defined'),
    });
    const badToken = await call(sim, 'GET', `/v1/data_sources/${ds}`, undefined, {
      authorization: 'Bearer ntn_wrong',
    });
    expect(badToken.status).toBe(401);
    expect(badToken.body).toMatchObject({
      object: 'error',
      code: 'unauthorized',
      message: 'API token is invalid.',
    });
    // Before 2025-09-03 there are no data source endpoints.
    const old = await call(sim, 'GET', `/v1/data_sources/${ds}`, undefined, {
      'notion-version': '2022-06-28',
    });
    expect(old.body.code).toBe('invalid_request_url');
    const unknown = await call(sim, 'GET', `/v1/data_sources/${'0'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('object_not_found');
  });

  it('lists data sources of a database and describes their properties', async () => {
    const w = sim.workspace!;
    const db = await call(sim, 'GET', `/v1/databases/${w.peopleDatabaseId.replaceAll('-', '')}`);
    expect(db.status).toBe(200);
    expect(db.body.data_sources).toEqual([{ id: w.peopleDataSourceId, name: 'People' }]);
    const ds = await call(sim, 'GET', `/v1/data_sources/${w.peopleDataSourceId}`);
    expect(ds.body.object).toBe('data_source');
    const props = ds.body.properties as Record<string, Json>;
    expect(props.Name).toMatchObject({ id: 'title', type: 'title' });
    expect(props.Status?.type).toBe('status');
    expect(props.Status?.status.groups.map((g: Json) => g.name)).toEqual([
      'To-do',
      'In progress',
      'Complete',
    ]);
    expect(props.Company?.relation).toMatchObject({
      data_source_id: w.companiesDataSourceId,
      type: 'dual_property',
      dual_property: { synced_property_name: 'People' },
    });
    expect(props.Temperature?.formula.expression).toContain('prop("Score")');
    const search = await call(sim, 'POST', '/v1/search', {
      filter: { property: 'object', value: 'data_source' },
    });
    expect(search.body.results.map((r: Json) => r.id).sort()).toEqual(
      [w.peopleDataSourceId, w.companiesDataSourceId].sort(),
    );
    const oldFilter = await call(sim, 'POST', '/v1/search', {
      filter: { property: 'object', value: 'database' },
    });
    expect(oldFilter.status).toBe(400);
    expect(oldFilter.body.code).toBe('validation_error');
  });

  it('pages through a query with cursors, every page once, at most 100 per request', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const tooBig = await call(sim, 'POST', `/v1/data_sources/${ds}/query`, { page_size: 101 });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.message).toBe(
      'body failed validation: body.page_size should be ≤ `100`, instead was `101`.',
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let requests = 0;
    do {
      const res = await call(sim, 'POST', `/v1/data_sources/${ds}/query`, {
        page_size: 15,
        ...(cursor ? { start_cursor: cursor } : {}),
      });
      requests++;
      expect(res.body.results.length).toBeLessThanOrEqual(15);
      seen.push(...res.body.results.map((p: Json) => p.id));
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
      if (res.body.has_more) expect(typeof res.body.next_cursor).toBe('string');
      else expect(res.body.next_cursor).toBeNull();
    } while (cursor);
    expect(requests).toBe(3);
    expect(new Set(seen).size).toBe(40);
    expect(seen.sort()).toEqual([...sim.workspace!.personIds].sort());
    const bad = await call(sim, 'POST', `/v1/data_sources/${ds}/query`, { start_cursor: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('start_cursor provided is invalid');
  });

  it('rounds last_edited_time to the minute and filters on it', async () => {
    const id = sim.workspace!.personIds[3]!;
    clock.set('2026-01-15T10:15:42.900Z');
    sim.editPage(id, { Score: 91 });
    const page = await call(sim, 'GET', `/v1/pages/${id}`);
    expect(page.body.last_edited_time).toBe('2026-01-15T10:15:00.000Z');
    expect(page.body.properties['Last edited'].last_edited_time).toBe('2026-01-15T10:15:00.000Z');
    expect(page.body.properties.Temperature.formula).toEqual({ type: 'string', string: 'Hot' });
    const after = await call(sim, 'POST', `/v1/data_sources/${sim.workspace!.peopleDataSourceId}/query`, {
      filter: {
        timestamp: 'last_edited_time',
        last_edited_time: { on_or_after: '2026-01-15T10:15:30.000Z' },
      },
    });
    // 10:15:42 is stored as 10:15:00, which is before 10:15:30: the edit does not match.
    expect(after.body.results).toHaveLength(0);
    const minute = await call(sim, 'POST', `/v1/data_sources/${sim.workspace!.peopleDataSourceId}/query`, {
      filter: {
        timestamp: 'last_edited_time',
        last_edited_time: { on_or_after: '2026-01-15T10:15:00.000Z' },
      },
      sorts: [{ timestamp: 'last_edited_time', direction: 'ascending' }],
    });
    expect(minute.body.results.map((p: Json) => p.id)).toEqual([id]);
  });

  it('creates pages with rich text segments and enforces the documented size limits', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const ok = await call(sim, 'POST', '/v1/pages', {
      parent: { type: 'data_source_id', data_source_id: ds },
      properties: {
        Name: { title: [{ text: { content: 'New person' } }] },
        Notes: {
          rich_text: [
            { text: { content: 'Bold ' }, annotations: { bold: true } },
            { text: { content: 'link', link: { url: 'https://example.com' } } },
          ],
        },
        Status: { status: { name: 'Lead' } },
        Tags: { multi_select: [{ name: 'Brand new tag' }] },
        'Signed up': { date: { start: '2026-01-02T10:00:00Z' } },
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.parent).toEqual({
      type: 'data_source_id',
      data_source_id: ds,
      database_id: sim.workspace!.peopleDatabaseId,
    });
    const notes = ok.body.properties.Notes.rich_text;
    expect(notes[0]).toMatchObject({ plain_text: 'Bold ', annotations: { bold: true, italic: false } });
    expect(notes[1]).toMatchObject({
      href: 'https://example.com',
      text: { link: { url: 'https://example.com' } },
    });
    expect(ok.body.properties.Tags.multi_select[0].name).toBe('Brand new tag');
    expect(ok.body.properties['Signed up'].date.start).toBe('2026-01-02T10:00:00.000+00:00');
    expect(ok.body.properties.ID.unique_id.prefix).toBe('PPL');

    const long = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Notes: { rich_text: [{ text: { content: 'x'.repeat(2001) } }] } },
    });
    expect(long.status).toBe(400);
    expect(long.body.message).toBe(
      'body failed validation: body.properties.Notes.rich_text[0].text.content.length should be ≤ `2000`, instead was `2001`.',
    );
    const many = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Notes: { rich_text: Array.from({ length: 101 }, () => ({ text: { content: 'a' } })) } },
    });
    expect(many.body.message).toContain('rich_text.length should be ≤ `100`');
    const status = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Status: { status: { name: 'Not an option' } } },
    });
    expect(status.status).toBe(400);
    expect(status.body.code).toBe('validation_error');
    const wrongType = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Score: { rich_text: [] } },
    });
    expect(wrongType.body.message).toBe('Score is expected to be number.');
    const unknown = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Nope: { number: 1 } },
    });
    expect(unknown.body.message).toBe('Nope is not a property that exists.');
    const readOnly = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Temperature: { formula: { string: 'x' } } },
    });
    expect(readOnly.status).toBe(400);
    const relations = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: {
        Company: { relation: Array.from({ length: 101 }, () => ({ id: sim.workspace!.companyIds[0] })) },
      },
    });
    expect(relations.body.message).toBe(
      'body failed validation: body.properties.Company.relation.length should be ≤ `100`, instead was `101`.',
    );
  });

  it('keeps two-way relations in step and truncates long relations to 25 with has_more', async () => {
    const w = sim.workspace!;
    const company = w.companyIds[5]!;
    const person = w.personIds[0]!;
    const res = await call(sim, 'PATCH', `/v1/pages/${person}`, {
      properties: { Company: { relation: [{ id: company }] } },
    });
    expect(res.body.properties.Company.relation).toEqual([{ id: company }]);
    const companyPage = await call(sim, 'GET', `/v1/pages/${company}`);
    expect(companyPage.body.properties.People.relation).toContainEqual({ id: person });
    expect(companyPage.body.properties['People count'].rollup.number).toBe(
      companyPage.body.properties.People.relation.length,
    );

    const thirty = w.personIds.slice(0, 30).map((id) => ({ id }));
    await call(sim, 'PATCH', `/v1/pages/${company}`, { properties: { People: { relation: thirty } } });
    const truncated = await call(sim, 'GET', `/v1/pages/${company}`);
    expect(truncated.body.properties.People.relation).toHaveLength(25);
    expect(truncated.body.properties.People.has_more).toBe(true);
    const propId = encodeURIComponent(truncated.body.properties.People.id);
    const first = await call(sim, 'GET', `/v1/pages/${company}/properties/${propId}?page_size=20`);
    expect(first.body.results).toHaveLength(20);
    const second = await call(
      sim,
      'GET',
      `/v1/pages/${company}/properties/${propId}?page_size=20&start_cursor=${first.body.next_cursor}`,
    );
    expect(second.body.has_more).toBe(false);
    expect([...first.body.results, ...second.body.results].map((r: Json) => r.relation.id)).toEqual(
      thirty.map((t) => t.id),
    );
  });

  it('moves pages to the trash: gone from queries, refuses edits until restored', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const id = sim.workspace!.personIds[10]!;
    const trashed = await call(sim, 'PATCH', `/v1/pages/${id}`, { in_trash: true });
    expect(trashed.body.in_trash).toBe(true);
    const query = await call(sim, 'POST', `/v1/data_sources/${ds}/query`, {});
    expect(query.body.results.some((p: Json) => p.id === id)).toBe(false);
    const edit = await call(sim, 'PATCH', `/v1/pages/${id}`, { properties: { Score: { number: 1 } } });
    expect(edit.status).toBe(400);
    expect(edit.body.message).toContain("Can't edit block that is archived");
    const restored = await call(sim, 'PATCH', `/v1/pages/${id}`, {
      in_trash: false,
      properties: { Score: { number: 2 } },
    });
    expect(restored.body).toMatchObject({ in_trash: false, properties: { Score: { number: 2 } } });
  });

  it('shows out-of-band edits made as a person in Notion', async () => {
    const id = sim.workspace!.personIds[1]!;
    sim.editPage(id, { Name: 'Renamed in Notion', Tags: ['VIP', 'Beta'], Status: 'Customer' });
    const page = await call(sim, 'GET', `/v1/pages/${id}`);
    expect(plain(page.body.properties.Name)).toBe('Renamed in Notion');
    expect(page.body.properties.Status.status.name).toBe('Customer');
    expect(page.body.properties.Tags.multi_select.map((t: Json) => t.name)).toEqual(['VIP', 'Beta']);
    expect(page.body.last_edited_by.id).toBe(sim.state.personId);
  });
});

describe('Notion simulator rate limit', () => {
  it('allows about 3 requests per second with bursts, then 429 rate_limited with Retry-After seconds', async () => {
    const clock = new ManualClock();
    const sim = await startNotionSimulator({ clock, seed: { people: 2 } });
    try {
      const ds = sim.workspace!.peopleDataSourceId;
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await call(sim, 'GET', `/v1/data_sources/${ds}`)).status);
      expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
      expect(statuses.slice(10)).toEqual([429, 429]);
      const limited = await call(sim, 'GET', `/v1/data_sources/${ds}`);
      expect(limited.headers.get('retry-after')).toBe('1');
      expect(limited.body).toMatchObject({ object: 'error', status: 429, code: 'rate_limited' });
      clock.advance(1000);
      const ok = [];
      for (let i = 0; i < 4; i++) ok.push((await call(sim, 'GET', `/v1/data_sources/${ds}`)).status);
      expect(ok).toEqual([200, 200, 200, 429]);
    } finally {
      await sim.close();
    }
  });
});

describe('Notion simulator webhooks', () => {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let failNext = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end();
      } else res.writeHead(200).end();
    });
  });
  let sim: NotionSimulator;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    sim = await startNotionSimulator({ seed: { people: 5 }, autoDeliverWebhooks: false, rateLimit: false });
  });
  afterAll(async () => {
    await sim.close();
    server.close();
  });
  afterEach(() => {
    received.length = 0;
  });

  it('sends the verification token once, then signed id-only events after verification', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notion`;
    const sub = await sim.webhooks.subscribe({ url });
    expect(received).toHaveLength(1);
    const handshake = JSON.parse(received[0]!.body) as Json;
    expect(Object.keys(handshake)).toEqual(['verification_token']);
    expect(received[0]!.headers['x-notion-signature']).toBeUndefined();

    const id = sim.workspace!.personIds[0]!;
    sim.editPage(id, { Score: 1 });
    await sim.webhooks.flush();
    expect(received).toHaveLength(1); // nothing until the token is pasted back
    expect(() => sim.webhooks.verify(sub.id, 'wrong')).toThrow();
    sim.webhooks.verify(sub.id, handshake.verification_token);

    sim.editPage(id, { Score: 2 });
    sim.editPage(id, { Name: 'Webhook rename' });
    sim.trashPage(sim.workspace!.personIds[1]!);
    await sim.webhooks.flush();
    const events = received.slice(1).map((r) => {
      const expected = `sha256=${createHmac('sha256', handshake.verification_token).update(r.body).digest('hex')}`;
      expect(r.headers['x-notion-signature']).toBe(expected);
      return JSON.parse(r.body) as Json;
    });
    // Two edits of one page aggregate into one properties_updated event.
    expect(events.map((e) => e.type)).toEqual(['page.properties_updated', 'page.deleted']);
    const updated = events[0]!;
    expect(updated.entity).toEqual({ id, type: 'page' });
    expect(updated.data.parent).toEqual({
      id: sim.workspace!.peopleDatabaseId,
      type: 'database',
      data_source_id: sim.workspace!.peopleDataSourceId,
    });
    expect(updated.data.updated_properties).toHaveLength(2);
    expect(updated.authors).toEqual([{ id: sim.state.personId, type: 'person' }]);
    expect(updated).not.toHaveProperty('properties'); // ids only, no content
    expect(updated).toMatchObject({ attempt_number: 1, api_version: '2025-09-03', subscription_id: sub.id });
  });

  it('retries a failed delivery with the next attempt number', async () => {
    failNext = 1;
    sim.editPage(sim.workspace!.personIds[2]!, { Score: 3 });
    await sim.webhooks.flush();
    await sim.webhooks.flush();
    const attempts = received.map((r) => (JSON.parse(r.body) as Json).attempt_number);
    expect(attempts).toEqual([1, 2]);
    expect(JSON.parse(received[0]!.body).id).toBe(JSON.parse(received[1]!.body).id);
  });

  it('reports API writes with the bot as author', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const created = await call(sim, 'POST', '/v1/pages', {
      parent: { data_source_id: ds },
      properties: { Name: { title: [{ text: { content: 'From the API' } }] } },
    });
    await sim.webhooks.flush();
    const event = JSON.parse(received.at(-1)!.body) as Json;
    expect(event).toMatchObject({ type: 'page.created', entity: { id: created.body.id } });
    expect(event.authors).toEqual([{ id: sim.state.botId, type: 'bot' }]);
  });
});

describe('Notion simulator OAuth', () => {
  it('exchanges a code for tokens with Basic client auth and rotates refresh tokens', async () => {
    const clock = new ManualClock();
    const sim = await startNotionSimulator({ clock, seed: { people: 1 }, oauthAccessTokenTtlMs: 3_600_000 });
    try {
      const authorize = await fetch(
        `${sim.url}/v1/oauth/authorize?client_id=lockstep-simulator-client&response_type=code&owner=user&redirect_uri=${encodeURIComponent('https://app.example/cb')}&state=xyz`,
        { redirect: 'manual' },
      );
      expect(authorize.status).toBe(302);
      const location = new URL(authorize.headers.get('location')!);
      expect(location.searchParams.get('state')).toBe('xyz');
      const basic = `Basic ${Buffer.from('lockstep-simulator-client:lockstep-simulator-secret').toString('base64')}`;
      const token = async (body: unknown, auth = basic) => {
        const res = await fetch(`${sim.url}/v1/oauth/token`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Json };
      };
      const wrongSecret = await token(
        { grant_type: 'authorization_code', code: location.searchParams.get('code') },
        `Basic ${Buffer.from('lockstep-simulator-client:nope').toString('base64')}`,
      );
      expect(wrongSecret.status).toBe(401);
      expect(wrongSecret.body.error).toBe('invalid_client');
      const granted = await token({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code'),
        redirect_uri: 'https://app.example/cb',
      });
      expect(granted.status).toBe(200);
      expect(granted.body).toMatchObject({ token_type: 'bearer', workspace_id: sim.state.workspaceId });
      const reused = await token({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code'),
      });
      expect(reused.status).toBe(400);
      expect(reused.body).toMatchObject({ error: 'invalid_grant', error_description: expect.any(String) });
      const me = await call(sim, 'GET', '/v1/users/me', undefined, {
        authorization: `Bearer ${granted.body.access_token}`,
      });
      expect(me.body).toMatchObject({ object: 'user', type: 'bot', id: granted.body.bot_id });
      clock.advance(3_600_000);
      const expired = await call(sim, 'GET', '/v1/users/me', undefined, {
        authorization: `Bearer ${granted.body.access_token}`,
      });
      expect(expired.status).toBe(401);
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: granted.body.refresh_token,
      });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.refresh_token).not.toBe(granted.body.refresh_token);
      const again = await token({ grant_type: 'refresh_token', refresh_token: granted.body.refresh_token });
      expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    } finally {
      await sim.close();
    }
  });

  it('sends a refused consent back with access_denied and wants owner=user', async () => {
    const sim = await startNotionSimulator({ seed: false });
    try {
      const authorize = (owner: string) =>
        fetch(
          `${sim.url}/v1/oauth/authorize?client_id=lockstep-simulator-client&response_type=code&owner=${owner}&redirect_uri=${encodeURIComponent('https://app.example/cb')}&state=s1`,
          { redirect: 'manual' },
        );
      expect((await authorize('workspace')).status).toBe(400);
      sim.state.oauthConsent = 'deny';
      const denied = await authorize('user');
      expect(denied.status).toBe(302);
      const back = new URL(denied.headers.get('location')!);
      expect(back.searchParams.get('error')).toBe('access_denied');
      expect(back.searchParams.get('state')).toBe('s1');
      expect(back.searchParams.has('code')).toBe(false);
    } finally {
      await sim.close();
    }
  });

  it('limits an in-process grant to the data sources picked, through its refreshes', async () => {
    const sim = await startNotionSimulator({ seed: { people: 2 } });
    try {
      const people = sim.workspace?.peopleDataSourceId as string;
      const companies = sim.workspace?.companiesDataSourceId as string;
      const grant = sim.state.grantOAuth({ clientId: 'lockstep-simulator-client', dataSources: [people] });
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      expect(
        (await call(sim, 'GET', `/v1/data_sources/${people}`, undefined, bearer(grant.access_token))).status,
      ).toBe(200);
      expect(
        (await call(sim, 'GET', `/v1/data_sources/${companies}`, undefined, bearer(grant.access_token)))
          .status,
      ).toBe(404);
      const res = await fetch(`${sim.url}/v1/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('lockstep-simulator-client:lockstep-simulator-secret').toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: grant.refresh_token }),
      });
      const renewed = (await res.json()) as Json;
      expect(renewed.bot_id).toBe(grant.bot_id);
      expect(
        (await call(sim, 'GET', `/v1/data_sources/${people}`, undefined, bearer(renewed.access_token)))
          .status,
      ).toBe(200);
      expect(
        (await call(sim, 'GET', `/v1/data_sources/${companies}`, undefined, bearer(renewed.access_token)))
          .status,
      ).toBe(404);
    } finally {
      await sim.close();
    }
  });
});

describe('Notion simulator: query limits and filters of the current API', () => {
  let sim: NotionSimulator;
  beforeAll(async () => {
    sim = await startNotionSimulator({ idSeed: 7, rateLimit: false, queryResultLimit: 25 });
  });
  afterAll(() => sim.close());

  it('stops a query at its result limit with has_more false and request_status incomplete', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const pages: Json[] = [];
    let cursor: string | undefined;
    do {
      const res = await call(sim, 'POST', `/v1/data_sources/${ds}/query`, {
        page_size: 10,
        ...(cursor ? { start_cursor: cursor } : {}),
      });
      expect(res.status).toBe(200);
      pages.push(res.body);
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
    } while (cursor);
    expect(pages.map((p) => p.results.length)).toEqual([10, 10, 5]);
    expect(pages.at(-1)).toMatchObject({ has_more: false, next_cursor: null });
    for (const p of pages)
      expect(p.request_status).toEqual({
        type: 'incomplete',
        incomplete_reason: 'query_result_limit_reached',
      });
    // A narrower query (Notion's guide narrows by created_time windows) is complete and unmarked.
    const narrow = await call(sim, 'POST', `/v1/data_sources/${ds}/query`, {
      filter: { property: 'Owner', people: { is_not_empty: true } },
    });
    expect(narrow.body.results).toHaveLength(10);
    expect(narrow.body.request_status).toBeUndefined();
    // The default is Notion's 10,000.
    const defaults = await startNotionSimulator({ seed: false });
    expect(defaults.state.queryResultLimit).toBe(10_000);
    await defaults.close();
  });

  it('filters email, url and phone_number properties by their own keys', async () => {
    const people = sim.workspace!.peopleDataSourceId;
    const companies = sim.workspace!.companiesDataSourceId;
    const email = (sim.pageJson(sim.workspace!.personIds[0]!).properties as Json).Email.email as string;
    const byEmail = await call(sim, 'POST', `/v1/data_sources/${people}/query`, {
      filter: { property: 'Email', email: { equals: email } },
    });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.results.map((p: Json) => p.id)).toEqual([sim.workspace!.personIds[0]]);
    const byUrl = await call(sim, 'POST', `/v1/data_sources/${companies}/query`, {
      filter: { property: 'Website', url: { is_not_empty: true } },
    });
    expect(byUrl.status).toBe(200);
    expect(byUrl.body.results.length).toBe(sim.workspace!.companyIds.length);
    const byPhone = await call(sim, 'POST', `/v1/data_sources/${companies}/query`, {
      filter: { property: 'Phone', phone_number: { ends_with: '0101' } },
    });
    expect(byPhone.status).toBe(200);
    expect(byPhone.body.results).toHaveLength(1);
    // The key still has to fit the property's type.
    const wrong = await call(sim, 'POST', `/v1/data_sources/${people}/query`, {
      filter: { property: 'Email', url: { equals: email } },
    });
    expect(wrong.status).toBe(400);
  });

  it('returns only the properties named in filter_properties, on queries and page retrieval', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const schema = (await call(sim, 'GET', `/v1/data_sources/${ds}`)).body.properties as Json;
    const emailId = schema.Email.id as string;
    const query = await call(
      sim,
      'POST',
      `/v1/data_sources/${ds}/query?filter_properties=title&filter_properties=${encodeURIComponent(emailId)}`,
      { page_size: 2 },
    );
    expect(query.status).toBe(200);
    for (const page of query.body.results)
      expect(Object.keys(page.properties).sort()).toEqual(['Email', 'Name']);
    const page = await call(
      sim,
      'GET',
      `/v1/pages/${sim.workspace!.personIds[1]}?filter_properties[]=${encodeURIComponent(emailId)}`,
    );
    expect(Object.keys(page.body.properties)).toEqual(['Email']);
    const all = await call(sim, 'GET', `/v1/pages/${sim.workspace!.personIds[1]}`);
    expect(Object.keys(all.body.properties).length).toBeGreaterThan(10);
  });
});

describe('Notion simulator: rate limit reasons and overload', () => {
  it('names the exceeded limit in additional_data, shares a workspace limit across tokens, and answers 529', async () => {
    const clock = new ManualClock();
    const sim = await startNotionSimulator({
      clock,
      seed: { people: 2 },
      workspaceRateLimit: { perSecond: 5, burst: 12 },
    });
    try {
      const ds = sim.workspace!.peopleDataSourceId;
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await call(sim, 'GET', `/v1/data_sources/${ds}`)).status);
      expect(statuses.every((s) => s === 200)).toBe(true);
      const own = await call(sim, 'GET', `/v1/data_sources/${ds}`);
      expect(own.status).toBe(429);
      expect(own.body.additional_data).toEqual({ rate_limit_reason: 'public_api_request_rate_limit' });
      // Another connection has its own budget, but the workspace's is shared: 2 more, then 429.
      // A second connection: a public integration's grant (its own bot, so its own bucket).
      const grant = sim.state.grantOAuth({ clientId: 'lockstep-simulator-client' });
      const other = { authorization: `Bearer ${grant.access_token}` };
      expect((await call(sim, 'GET', `/v1/data_sources/${ds}`, undefined, other)).status).toBe(200);
      expect((await call(sim, 'GET', `/v1/data_sources/${ds}`, undefined, other)).status).toBe(200);
      const shared = await call(sim, 'GET', `/v1/data_sources/${ds}`, undefined, other);
      expect(shared.status).toBe(429);
      expect(shared.body.additional_data).toEqual({
        rate_limit_reason: 'public_api_space_request_rate_limit',
      });
      expect(Number(shared.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

      clock.advance(60_000);
      sim.overload(1, 3);
      const overloaded = await call(sim, 'GET', `/v1/data_sources/${ds}`);
      expect(overloaded.status).toBe(529);
      expect(overloaded.headers.get('retry-after')).toBe('3');
      expect(overloaded.body).toMatchObject({ object: 'error', status: 529, code: 'service_overload' });
      expect((await call(sim, 'GET', `/v1/data_sources/${ds}`)).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});
