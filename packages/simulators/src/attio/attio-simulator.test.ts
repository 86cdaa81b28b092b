/**
 * Plain-fetch tests of what the typed client does not reach: rate limits (reads and writes
 * apart, Retry-After as an HTTP date), auth and scopes, webhook signatures and in-app edits,
 * value history, shorthand inputs, OAuth, fault injection and the request log.
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { type AttioSimulator, type StartAttioSimulatorOptions, startAttioSimulator } from './index.ts';

// Bodies are read loosely here; the contract test checks their shapes against the OpenAPI schemas.
// biome-ignore lint/suspicious/noExplicitAny: see above
type Json = { [key: string]: any };

const started: AttioSimulator[] = [];
type Delivery = { url: string; headers: Headers; body: string };

async function start(options: StartAttioSimulatorOptions = {}) {
  const deliveries: Delivery[] = [];
  const capture: typeof fetch = async (url, init) => {
    deliveries.push({ url: String(url), headers: new Headers(init?.headers), body: String(init?.body) });
    return new Response(null, { status: 200 });
  };
  const sim = await startAttioSimulator({
    rateLimit: false,
    idSeed: 5,
    clock: new ManualClock(),
    webhooks: { fetch: capture },
    ...options,
  });
  started.push(sim);
  return { sim, deliveries, clock: sim.clock as ManualClock };
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

async function call(
  sim: AttioSimulator,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = sim.token,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

const query = (sim: AttioSimulator, object: string, body: unknown = {}) =>
  call(sim, 'POST', `/v2/objects/${object}/records/query`, body);

describe('Attio simulator: rate limits', () => {
  it('counts reads and writes apart and answers 429 with Retry-After as an HTTP date, until the next second', async () => {
    const { sim, clock } = await start({ rateLimit: { readsPerSecond: 3, writesPerSecond: 2 } });
    clock.set(Date.UTC(2026, 0, 15, 9, 0, 0, 400));
    for (let i = 0; i < 3; i++) expect((await call(sim, 'GET', '/v2/objects')).status).toBe(200);
    // records/query is a POST but a read.
    const refused = await query(sim, 'people', { limit: 1 });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      status_code: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      message: 'Rate limit exceeded, please try again later',
    });
    expect(refused.headers.get('retry-after')).toBe('Thu, 15 Jan 2026 09:00:01 GMT');

    // Writes have their own allowance in the same second.
    const write = (n: number) =>
      call(sim, 'POST', '/v2/objects/projects/records', { data: { values: { name: `P${n}` } } });
    expect((await write(1)).status).toBe(200);
    expect((await write(2)).status).toBe(200);
    expect((await write(3)).status).toBe(429);
    // Reads are still refused in this second; the refused write was not processed (below).
    expect((await query(sim, 'projects')).status).toBe(429);

    clock.advance(600);
    const after = await query(sim, 'projects');
    expect(after.status).toBe(200);
    expect(after.body.data.map((r: Json) => r.values.name[0].value)).toEqual([
      'Migration for Acme Analytics',
      'Rollout for Northwind Traders',
      'Audit for Globex Logistics',
      'P1',
      'P2',
    ]);
  });

  it('rateLimit: false turns the limits off', async () => {
    const { sim } = await start({ rateLimit: false });
    for (let i = 0; i < 120; i++) expect((await call(sim, 'GET', '/v2/lists')).status).toBe(200);
  });
});

describe('Attio simulator: auth and scopes', () => {
  it('401 without or with an unknown token, in Attio error shape', async () => {
    const { sim } = await start();
    const none = await call(sim, 'GET', '/v2/objects', undefined, null);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ status_code: 401, type: 'auth_error', code: 'unauthorized' });
    expect((await call(sim, 'GET', '/v2/objects', undefined, 'nope')).status).toBe(401);
    sim.revokeToken(sim.token);
    expect((await call(sim, 'GET', '/v2/objects')).status).toBe(401);
  });

  it('403 when the token lacks a scope; read-write implies read', async () => {
    const { sim } = await start({
      tokens: [{ token: 'reader', scopes: ['record_permission:read', 'object_configuration:read'] }],
    });
    expect((await call(sim, 'POST', '/v2/objects/people/records/query', {}, 'reader')).status).toBe(200);
    const write = await call(
      sim,
      'POST',
      '/v2/objects/projects/records',
      { data: { values: { name: 'X' } } },
      'reader',
    );
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ status_code: 403, type: 'auth_error', code: 'unauthorized' });
    expect(write.body.message).toContain('record_permission:read-write');
    expect((await call(sim, 'GET', '/v2/webhooks', undefined, 'reader')).status).toBe(403);
    expect((await call(sim, 'GET', '/v2/lists', undefined, 'reader')).status).toBe(403);
    sim.addToken('writer', ['record_permission:read-write', 'object_configuration:read']);
    expect((await call(sim, 'POST', '/v2/objects/people/records/query', {}, 'writer')).status).toBe(200);
  });

  it('OAuth: the code exchange gives a non-expiring token that /v2/self describes', async () => {
    const { sim, clock } = await start({
      oauth: {
        clientId: 'client-1',
        clientSecret: 's3cret',
        scopes: ['record_permission:read', 'object_configuration:read'],
      },
    });
    const auth = await fetch(
      `${sim.url}/oauth/authorize?client_id=client-1&response_type=code&redirect_uri=${encodeURIComponent('https://app.example/cb')}&state=xyz`,
      { redirect: 'manual' },
    );
    expect(auth.status).toBe(302);
    const location = new URL(auth.headers.get('location') ?? '');
    expect(location.origin + location.pathname).toBe('https://app.example/cb');
    expect(location.searchParams.get('state')).toBe('xyz');
    const form = new URLSearchParams({
      client_id: 'client-1',
      client_secret: 's3cret',
      grant_type: 'authorization_code',
      code: location.searchParams.get('code') ?? '',
    });
    const res = await fetch(`${sim.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    const token = (await res.json()) as { access_token: string; token_type: string };
    expect(token.token_type).toBe('Bearer');
    // The code is single-use.
    const again = await fetch(`${sim.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(again.status).toBe(400);

    clock.advance(365 * 86_400_000);
    const self = await call(sim, 'GET', '/v2/self', undefined, token.access_token);
    expect(self.body).toMatchObject({
      active: true,
      client_id: 'client-1',
      exp: null,
      scope: 'record_permission:read object_configuration:read',
    });
    expect((await call(sim, 'POST', '/v2/objects/people/records/query', {}, token.access_token)).status).toBe(
      200,
    );
    expect((await call(sim, 'GET', '/v2/self', undefined, 'unknown')).body).toEqual({ active: false });
  });

  it('OAuth: registered redirect URLs only, the same redirect_uri at the exchange, and POST /oauth/introspect', async () => {
    const { sim } = await start({
      oauth: { clientId: 'client-2', clientSecret: 's3cret', redirectUris: ['https://app.example/cb'] },
    });
    const authorize = (redirect: string) =>
      fetch(
        `${sim.url}/authorize?client_id=client-2&response_type=code&redirect_uri=${encodeURIComponent(redirect)}`,
        { redirect: 'manual' },
      );
    const elsewhere = await authorize('https://evil.example/cb');
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.json()).toMatchObject({ type: 'invalid_request_error', code: 'validation_type' });
    const code = () =>
      authorize('https://app.example/cb').then(
        (r) => new URL(r.headers.get('location') ?? '').searchParams.get('code') ?? '',
      );
    const exchange = (c: string, redirect: string) =>
      fetch(`${sim.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: 'client-2',
          client_secret: 's3cret',
          grant_type: 'authorization_code',
          code: c,
          redirect_uri: redirect,
        }),
      });
    const mismatched = await exchange(await code(), 'https://app.example/other');
    expect(mismatched.status).toBe(400);
    expect(await mismatched.json()).toMatchObject({ code: 'invalid_grant' });
    const granted = await exchange(await code(), 'https://app.example/cb');
    expect(granted.status).toBe(200);
    const { access_token } = (await granted.json()) as { access_token: string };
    const introspect = (token: string) =>
      fetch(`${sim.url}/oauth/introspect`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(await (await introspect(access_token)).json()).toMatchObject({
      active: true,
      client_id: 'client-2',
      token_type: 'Bearer',
      exp: null,
      workspace_id: sim.state.workspace.id,
    });
    sim.revokeToken(access_token);
    expect(await (await introspect(access_token)).json()).toEqual({ active: false });
  });
});

describe('Attio simulator: webhooks', () => {
  async function createWebhook(sim: AttioSimulator, subscriptions: unknown[]) {
    const res = await call(sim, 'POST', '/v2/webhooks', {
      data: { target_url: 'https://receiver.example/attio', subscriptions },
    });
    expect(res.status).toBe(200);
    return res.body.data as Json & { secret: string; id: { webhook_id: string } };
  }

  it('signs each delivery with Attio-Signature = hex HMAC-SHA256 of the body; API writes and in-app edits', async () => {
    const { sim, deliveries } = await start();
    const hook = await createWebhook(sim, [
      { event_type: 'record.created', filter: null },
      { event_type: 'record.updated', filter: null },
      { event_type: 'record.deleted', filter: null },
    ]);
    const created = await call(sim, 'POST', '/v2/objects/people/records', {
      data: { values: { email_addresses: 'new@person.example' } },
    });
    const recordId = created.body.data.id.record_id as string;
    await sim.flushWebhooks();
    expect(deliveries).toHaveLength(1);
    const first = deliveries[0] as Delivery;
    const expected = createHmac('sha256', hook.secret).update(first.body).digest('hex');
    expect(first.headers.get('attio-signature')).toBe(expected);
    expect(first.headers.get('x-attio-signature')).toBe(expected);
    expect(first.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    const payload = JSON.parse(first.body) as { webhook_id: string; events: Json[] };
    expect(payload.webhook_id).toBe(hook.id.webhook_id);
    expect(payload.events).toEqual([
      {
        event_type: 'record.created',
        id: {
          workspace_id: sim.state.workspace.id,
          object_id: sim.state.object('people').id,
          record_id: recordId,
        },
        actor: { type: 'api-token', id: expect.any(String) },
      },
    ]);

    // An in-app edit by a workspace member: one record.updated per changed attribute.
    sim.update('people', recordId, { job_title: 'CTO', name: 'Mia Chen' }, 'overwrite');
    sim.update('people', recordId, { job_title: 'CTO' }, 'overwrite'); // no change, no event
    await sim.flushWebhooks();
    const updates = deliveries
      .slice(1)
      .map((d) => (JSON.parse(d.body) as { events: Json[] }).events[0] as Json);
    expect(updates.map((e) => (e.id as Json).attribute_id)).toEqual([
      sim.state.attribute(sim.state.object('people').id, 'job_title')?.id,
      sim.state.attribute(sim.state.object('people').id, 'name')?.id,
    ]);
    expect(updates[0]?.actor).toEqual({ type: 'workspace-member', id: sim.member });

    sim.remove('people', recordId);
    await sim.flushWebhooks();
    expect(JSON.parse(deliveries.at(-1)?.body ?? '{}').events[0].event_type).toBe('record.deleted');
  });

  it('subscription filters on event fields (equals / not_equals); https targets only', async () => {
    const { sim, deliveries } = await start();
    const deals = sim.state.object('deals').id;
    await createWebhook(sim, [
      {
        event_type: 'record.updated',
        filter: { $and: [{ field: 'id.object_id', operator: 'equals', value: deals }] },
      },
    ]);
    sim.update('people', sim.seed?.people[0] ?? '', { job_title: 'Chief of Staff' });
    sim.update('deals', sim.seed?.deals[0] ?? '', { stage: 'Won 🎉' });
    await sim.flushWebhooks();
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]?.body ?? '{}').events[0].id.object_id).toBe(deals);

    const http = await call(sim, 'POST', '/v2/webhooks', {
      data: {
        target_url: 'http://receiver.example/attio',
        subscriptions: [{ event_type: 'record.created', filter: null }],
      },
    });
    expect(http.status).toBe(400);
    expect(http.body.code).toBe('validation_type');
  });
});

describe('Attio simulator: values', () => {
  it('keeps overwritten values with active_until, readable with show_historic=true', async () => {
    const { sim, clock } = await start();
    const id = sim.seed?.people[0] ?? '';
    const t0 = clock.now();
    clock.advance(60_000);
    const put = await call(sim, 'PUT', `/v2/objects/people/records/${id}`, {
      data: { values: { job_title: 'COO' } },
    });
    expect(put.status).toBe(200);

    const current = await call(sim, 'GET', `/v2/objects/people/records/${id}/attributes/job_title/values`);
    expect(current.body.data.map((v: Json) => v.value)).toEqual(['COO']);

    const history = await call(
      sim,
      'GET',
      `/v2/objects/people/records/${id}/attributes/job_title/values?show_historic=true`,
    );
    expect(history.body.data.map((v: Json) => [v.value, v.active_until])).toEqual([
      ['CEO', new Date(t0 + 60_000).toISOString().replace('Z', '000000Z')],
      ['COO', null],
    ]);

    const nonHistoric = await call(
      sim,
      'GET',
      `/v2/objects/people/records/${id}/attributes/created_at/values?show_historic=true`,
    );
    expect(nonHistoric.status).toBe(400);
  });

  it('accepts the documented shorthands and refuses read-only attributes, unknown attributes and bad values', async () => {
    const { sim } = await start();
    const res = await call(sim, 'POST', '/v2/objects/companies/records', {
      data: {
        values: {
          name: 'Shorthand Inc',
          domains: 'https://www.shorthand.example/about',
          categories: ['SaaS', 'B2B'],
          employee_range: '11-50',
          is_customer: true,
          account_rating: 4,
          founded_on: '2020-02-29',
        },
      },
    });
    expect(res.status).toBe(200);
    const v: Json = res.body.data.values;
    expect(v.domains?.[0]).toMatchObject({ domain: 'shorthand.example', root_domain: 'shorthand.example' });
    expect(v.categories.map((o: Json) => o.option.title)).toEqual(['SaaS', 'B2B']);
    expect(v.employee_range[0].option.title).toBe('11-50');
    expect(v.founded_on?.[0]).toMatchObject({ value: '2020-02-29', attribute_type: 'date' });

    const readOnly = await call(sim, 'POST', '/v2/objects/companies/records', {
      data: { values: { name: 'X', created_at: '2020-01-01T00:00:00Z' } },
    });
    expect(readOnly.status).toBe(400);
    expect(readOnly.body.message).toContain('created_at');
    const unknown = await call(sim, 'POST', '/v2/objects/companies/records', {
      data: { values: { nope: 'x' } },
    });
    expect(unknown.body).toMatchObject({ status_code: 400, code: 'value_not_found' });
    const badEmail = await call(sim, 'POST', '/v2/objects/people/records', {
      data: { values: { email_addresses: 'not-an-email' } },
    });
    expect(badEmail.body).toMatchObject({ status_code: 400, code: 'validation_type' });
    const notMulti = await call(sim, 'POST', '/v2/objects/companies/records', {
      data: { values: { employee_range: ['1-10', '11-50'] } },
    });
    expect(notMulti.status).toBe(400);
    const badFilter = await query(sim, 'people', { filter: { nope: 'x' } });
    expect(badFilter.body).toMatchObject({ status_code: 400, code: 'filter_error' });
    const tooMany = await query(sim, 'people', { limit: 501 });
    expect(tooMany.status).toBe(400);
  });
});

describe('Attio simulator: faults and request log', () => {
  it('injects faults before the simulator sees the request and logs every request', async () => {
    const { sim } = await start();
    sim.faults.next({ status: 503, path: '/v2/objects/people/records/query', count: 2 });
    sim.faults.next({ kind: 'rate_limit', method: 'GET' });
    expect((await query(sim, 'people')).status).toBe(503);
    expect((await query(sim, 'people')).status).toBe(503);
    const limited = await call(sim, 'GET', '/v2/lists');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limit_exceeded');
    expect(limited.headers.get('retry-after')).toMatch(/GMT$/);
    expect((await query(sim, 'people')).status).toBe(200);
    expect(sim.requestLog.count({ path: '/v2/objects/people/records/query' })).toBe(3);
    expect(sim.requestLog.count({ status: 503 })).toBe(2);
    expect(sim.requestLog.byPath()['GET /v2/lists']).toBe(1);
  });
});
