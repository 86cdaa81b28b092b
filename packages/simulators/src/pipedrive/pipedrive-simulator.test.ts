import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  type PipedriveSimulator,
  type StartPipedriveSimulatorOptions,
  startPipedriveSimulator,
} from './index.ts';

type Json = Record<string, unknown> & {
  success?: boolean;
  data?: unknown;
  error?: string;
  additional_data?: Record<string, unknown> | null;
};

const started: PipedriveSimulator[] = [];
const servers: Server[] = [];

async function start(options: StartPipedriveSimulatorOptions = {}): Promise<PipedriveSimulator> {
  const sim = await startPipedriveSimulator({ rateLimit: false, clock: new ManualClock(), ...options });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
  while (servers.length) {
    const s = servers.pop();
    await new Promise<void>((resolve) => s?.close(() => resolve()));
  }
});

async function call(
  sim: PipedriveSimulator,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; bearer?: string } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? sim.token : init.token;
  if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
  else if (token !== null) headers['x-api-token'] = token;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

/** A webhook receiver that records each request's headers and JSON body. */
async function receiver(): Promise<{
  url: string;
  received: { headers: IncomingHttpHeaders; body: Json }[];
}> {
  const received: { headers: IncomingHttpHeaders; body: Json }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json,
      });
      res.writeHead(200).end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

describe('Pipedrive simulator', () => {
  it('auth: x-api-token header, api_token query, 401 in Pipedrive shape', async () => {
    const sim = await start();
    expect((await call(sim, '/api/v2/persons?limit=1')).status).toBe(200);
    const query = await fetch(`${sim.url}/api/v2/persons?limit=1&api_token=${sim.token}`);
    expect(query.status).toBe(200);
    const bad = await call(sim, '/api/v2/persons', { token: 'nope' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ success: false, error: 'unauthorized access', errorCode: 401 });
    expect(bad.body.error_info).toMatch(/developers\.pipedrive\.com/);
    const none = await call(sim, '/api/v2/persons', { token: null });
    expect(none.status).toBe(401);
    const bearer = await call(sim, '/api/v2/persons', { bearer: 'unknown' });
    expect(bearer.body).toMatchObject({ errorCode: 401, error: 'Invalid token: access token is invalid' });
  });

  it('limit: v2 refuses more than 500, defaults to 100; v1 caps at 500 and pages with start', async () => {
    const sim = await start({ seed: { persons: 120 } });
    const refused = await call(sim, '/api/v2/persons?limit=501');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, data: null, additional_data: null });
    expect(refused.body.error).toMatch(/500/);
    const dflt = await call(sim, '/api/v2/persons');
    expect(dflt.body.data).toHaveLength(100);
    expect(dflt.body.additional_data?.next_cursor).toEqual(expect.any(String));
    const v1 = await call(sim, '/api/v1/persons?start=100&limit=1000');
    expect(v1.status).toBe(200);
    expect(v1.body.data).toHaveLength(20);
    expect(v1.body.additional_data).toEqual({
      pagination: { start: 100, limit: 500, more_items_in_collection: false },
    });
    const first = await call(sim, '/api/v1/persons?limit=50');
    expect(first.body.additional_data).toMatchObject({
      pagination: { more_items_in_collection: true, next_start: 50 },
    });
    const p = (first.body.data as Record<string, unknown>[])[0];
    expect(p?.add_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(p?.org_id).toMatchObject({ value: sim.crm?.organizations[0] });
    // v1 custom fields sit at the top level; an enum value is its option id as a string.
    expect(p?.[sim.crm?.fields.leadSource.key as string]).toEqual(expect.stringMatching(/^\d+$/));
  });

  it('validation: unknown option ids, unknown fields, read-only fields, missing name, bad RFC3339', async () => {
    const sim = await start();
    const key = sim.crm?.fields.leadSource.key as string;
    const badOption = await call(sim, '/api/v2/persons', {
      method: 'POST',
      body: { name: 'X', custom_fields: { [key]: 4242 } },
    });
    expect(badOption.status).toBe(400);
    expect(badOption.body.error).toContain('4242');
    const setKey = sim.crm?.fields.interests.key as string;
    expect(
      (
        await call(sim, '/api/v2/persons', {
          method: 'POST',
          body: { name: 'X', custom_fields: { [setKey]: [1] } },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call(sim, '/api/v2/persons', { method: 'POST', body: { name: 'X', bogus: 1 } })).status,
    ).toBe(400);
    const ro = await call(sim, '/api/v2/persons/1', {
      method: 'PATCH',
      body: { update_time: '2025-01-01T00:00:00Z' },
    });
    expect(ro.status).toBe(400);
    expect(ro.body.error).toMatch(/read-only/);
    expect((await call(sim, '/api/v2/persons', { method: 'POST', body: { emails: [] } })).status).toBe(400);
    expect((await call(sim, '/api/v2/persons?updated_since=yesterday')).status).toBe(400);
    expect((await call(sim, '/api/v2/persons/999999')).status).toBe(404);
    expect((await call(sim, '/api/v2/persons/999999', { method: 'PATCH', body: { name: 'Y' } })).status).toBe(
      404,
    );
    expect(sim.state.list('persons')).toHaveLength(30);
  });

  it('rate limits: burst per token over a rolling 2 s window, with headers', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock, rateLimit: { burst: 3 } });
    const first = await call(sim, '/api/v2/persons/1');
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(first.headers.get('x-ratelimit-reset')).toBe('2');
    await call(sim, '/api/v2/persons/1');
    clock.advance(1000);
    await call(sim, '/api/v2/persons/1');
    const refused = await call(sim, '/api/v2/persons/1');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, errorCode: 429, error: 'Request over limit' });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe('1');
    // The two oldest leave the window after 2 s from them.
    clock.advance(1000);
    expect((await call(sim, '/api/v2/persons/1')).status).toBe(200);
  });

  it('rate limits: a daily token budget per company, spent by endpoint cost, reset at midnight', async () => {
    const clock = new ManualClock('2026-01-15T23:59:00Z');
    const sim = await start({ clock, rateLimit: { dailyTokens: 25 } });
    const list = await call(sim, '/api/v2/persons');
    expect(list.headers.get('x-daily-requests-left')).toBe('15');
    const single = await call(sim, '/api/v2/persons/1');
    expect(single.headers.get('x-daily-requests-left')).toBe('14');
    const write = await call(sim, '/api/v2/persons/1', { method: 'PATCH', body: { job_title: 'CTO' } });
    expect(write.headers.get('x-daily-requests-left')).toBe('9');
    // A list costs 10: refused, and nothing is spent.
    const refused = await call(sim, '/api/v2/organizations');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, errorCode: 429 });
    expect(refused.headers.get('x-daily-requests-left')).toBe('9');
    // Another token of the same company shares the budget.
    sim.state.tokens.add({ token: 'f'.repeat(40), scopes: [], kind: 'pat', userId: '21000002' });
    expect((await call(sim, '/api/v2/organizations', { token: 'f'.repeat(40) })).status).toBe(429);
    expect((await call(sim, '/api/v1/personFields', { token: 'f'.repeat(40) })).status).toBe(429);
    clock.advance(60_000);
    const nextDay = await call(sim, '/api/v2/organizations');
    expect(nextDay.status).toBe(200);
    expect(nextDay.headers.get('x-daily-requests-left')).toBe('15');
  });

  it('webhooks: v2 payloads with Basic auth for API writes and in-app edits', async () => {
    const sim = await start();
    const { url, received } = await receiver();
    const added = await call(sim, '/api/v1/webhooks', {
      method: 'POST',
      body: {
        subscription_url: url,
        event_action: '*',
        event_object: 'person',
        name: 'sync',
        http_auth_user: 'lockstep',
        http_auth_password: 's3cret',
        version: '2.0',
      },
    });
    expect(added.status).toBe(201);
    const webhookId = (added.body.data as { id: number }).id;
    const key = sim.crm?.fields.leadSource.key as string;
    const option = sim.crm?.fields.leadSource.options?.[2]?.id;

    const created = await call(sim, '/api/v2/persons', {
      method: 'POST',
      body: { name: 'Hook Person', emails: [{ value: 'hook@example.com' }] },
    });
    const id = (created.body.data as { id: number }).id;
    sim.update('persons', id, { custom_fields: { [key]: option } });
    await call(sim, `/api/v2/persons/${id}`, { method: 'DELETE' });
    // An organization change is not subscribed to.
    sim.update('organizations', sim.crm?.organizations[0] as number, { name: 'Acme Inc' });
    await sim.flushWebhooks();

    expect(received).toHaveLength(3);
    const basic = `Basic ${Buffer.from('lockstep:s3cret').toString('base64')}`;
    for (const r of received) {
      expect(r.headers.authorization).toBe(basic);
      expect(r.headers['x-pipedrive-signature']).toBeUndefined();
    }
    const [create, change, del] = received.map((r) => r.body) as [Json, Json, Json];
    expect(create.meta).toMatchObject({
      action: 'create',
      entity: 'person',
      entity_id: String(id),
      change_source: 'api',
      version: '2.0',
      webhook_id: String(webhookId),
      attempt: 1,
      correlation_id: expect.any(String),
      timestamp: expect.stringMatching(/Z$/),
    });
    expect(create.data).toMatchObject({
      id,
      name: 'Hook Person',
      emails: [{ value: 'hook@example.com', primary: true }],
    });
    expect(create.previous).toBeNull();
    expect(change.meta).toMatchObject({ action: 'change', change_source: 'app' });
    expect((change.data as { custom_fields: Record<string, unknown> }).custom_fields[key]).toBe(option);
    expect(change.previous).toEqual({ custom_fields: { [key]: null } });
    expect(del.meta).toMatchObject({ action: 'delete', change_source: 'api' });
    expect(del.data).toBeNull();
    expect(del.previous).toMatchObject({ id, name: 'Hook Person' });

    // A write that changes nothing sends nothing.
    sim.update('persons', sim.crm?.persons[0] as number, { name: sim.state.get('persons', 1)?.values.name });
    await sim.flushWebhooks();
    expect(received).toHaveLength(3);

    const listed = await call(sim, '/api/v1/webhooks');
    expect((listed.body.data as { last_http_status: number }[])[0]?.last_http_status).toBe(200);
    const invalid = await call(sim, '/api/v1/webhooks', {
      method: 'POST',
      body: { subscription_url: 'not a url', event_action: 'merge', event_object: 'person', name: 'x' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ success: false, status: 'error' });
    expect(Object.keys(invalid.body.errors as object).sort()).toEqual(['event_action', 'subscription_url']);
  });

  it('webhooks: a failed delivery is retried with attempt + 1', async () => {
    let calls = 0;
    const sim = await start({
      webhooks: {
        fetch: async () => {
          calls += 1;
          return new Response('', { status: calls === 1 ? 500 : 200 });
        },
      },
    });
    await call(sim, '/api/v1/webhooks', {
      method: 'POST',
      body: {
        subscription_url: 'http://127.0.0.1:9/x',
        event_action: 'create',
        event_object: '*',
        name: 'n',
      },
    });
    sim.create('deals', { title: 'App deal' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries[0]).toMatchObject({ status: 500, attempt: 1 });
    expect(sim.webhooks.deliveries[0]?.authorization).toBeUndefined();
    expect(sim.webhooks.retryFailed()).toBe(1);
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries[1]).toMatchObject({ status: 200, attempt: 2 });
    expect(sim.webhooks.deliveries[1]?.payload.meta).toMatchObject({
      attempt: 2,
      entity: 'deal',
      change_source: 'app',
    });
  });

  it('OAuth: authorization_code and refresh_token grants with Basic client auth; expired tokens get 401', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock });
    const client = sim.oauth.clients.values().next().value;
    if (!client) throw new Error('client');
    const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
    const token = (body: Record<string, string>, auth = basic) =>
      fetch(`${sim.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body).toString(),
      });

    // The consent redirect carries the code and the state.
    const consent = await fetch(
      `${sim.url}/oauth/authorize?client_id=${client.clientId}&redirect_uri=${encodeURIComponent(client.redirectUri)}&state=xyz`,
      { redirect: 'manual' },
    );
    expect(consent.status).toBe(302);
    const location = new URL(consent.headers.get('location') ?? '');
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code') ?? '';

    const wrongSecret = await token(
      { grant_type: 'authorization_code', code },
      `Basic ${Buffer.from(`${client.clientId}:nope`).toString('base64')}`,
    );
    expect(wrongSecret.status).toBe(401);
    const granted = await token({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri });
    expect(granted.status).toBe(200);
    const tokens = (await granted.json()) as Record<string, unknown>;
    // api_domain is the company's own host (a second listener), not the API host.
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3599, api_domain: sim.companyUrl });
    expect(sim.companyUrl).not.toBe(sim.url);
    // A code works once.
    expect((await token({ grant_type: 'authorization_code', code })).status).toBe(400);

    const access = tokens.access_token as string;
    expect((await call(sim, '/api/v2/persons?limit=1', { bearer: access })).status).toBe(200);
    clock.advance(3600_000);
    const expired = await call(sim, '/api/v2/persons?limit=1', { bearer: access });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({
      success: false,
      errorCode: 401,
      error: 'Invalid token: access token is expired',
    });

    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as Record<string, unknown>;
    expect(next.access_token).not.toBe(access);
    expect(next.api_domain).toBe(sim.companyUrl);
    const onCompanyHost = sim.companyRequestLog.total;
    const me = await fetch(`${next.api_domain}/api/v1/users/me`, {
      headers: { authorization: `Bearer ${next.access_token}` },
    });
    expect(((await me.json()) as Json).data).toMatchObject({
      company_id: sim.state.companyId,
      api_domain: sim.companyUrl,
    });
    // The company host's requests are in its own log and in the log of every request.
    expect(sim.companyRequestLog.total).toBe(onCompanyHost + 1);
    expect(sim.requestLog.count({ path: '/api/v1/users/me' })).toBe(1);
    expect((await token({ grant_type: 'refresh_token', refresh_token: 'bogus' })).status).toBe(400);
    expect((await token({ grant_type: 'password' })).status).toBe(400);

    // Revoking the refresh token ends the grant's access tokens.
    await fetch(`${sim.url}/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: tokens.refresh_token as string,
        token_type_hint: 'refresh_token',
      }).toString(),
    });
    expect((await call(sim, '/api/v2/persons?limit=1', { bearer: next.access_token as string })).status).toBe(
      401,
    );
  });

  it('fault injection and the request log', async () => {
    const sim = await start({ rateLimit: {} });
    sim.faults.next({ status: 503, count: 2, path: '/api/v2/deals' });
    expect((await call(sim, '/api/v2/deals')).status).toBe(503);
    expect((await call(sim, '/api/v2/persons/1')).status).toBe(200);
    expect((await call(sim, '/api/v2/deals')).status).toBe(503);
    expect((await call(sim, '/api/v2/deals')).status).toBe(200);
    sim.faults.next({ kind: 'rate_limit' });
    const limited = await call(sim, '/api/v2/deals');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, errorCode: 429 });
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    sim.faults.next({ kind: 'drop' });
    await expect(call(sim, '/api/v2/deals')).rejects.toThrow();
    expect(sim.requestLog.count({ path: '/api/v2/deals', status: 503 })).toBe(2);
    expect(sim.requestLog.byPath()['GET /api/v2/deals']).toBe(5);
    expect(sim.requestLog.total).toBe(6);
  });

  it('cursor paging by update_time stays consistent; ids, owner_id and org_id filters', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock });
    const crm = sim.crm;
    if (!crm) throw new Error('seeded');
    const orgId = crm.organizations[0] as number;
    const byOrg = await call(sim, `/api/v2/persons?org_id=${orgId}`);
    const expected = sim.state
      .list('persons')
      .filter((p) => p.values.org_id === orgId)
      .map((p) => p.id);
    expect((byOrg.body.data as { id: number }[]).map((p) => p.id)).toEqual(expected);
    const byIds = await call(sim, '/api/v2/persons?ids=3,1,999');
    expect((byIds.body.data as { id: number }[]).map((p) => p.id)).toEqual([1, 3]);
    const page1 = await call(sim, '/api/v2/persons?sort_by=update_time&limit=20');
    clock.advance(1000);
    // Touch one already read: it moves behind the cursor's position and shows up again at the end.
    sim.update('persons', 1, { job_title: 'Moved' });
    const cursor = page1.body.additional_data?.next_cursor as string;
    const page2 = await call(sim, `/api/v2/persons?sort_by=update_time&limit=20&cursor=${cursor}`);
    expect((page2.body.data as { id: number }[]).map((p) => p.id)).toEqual([...crm.persons.slice(20), 1]);
    expect(page2.body.additional_data?.next_cursor).toBeNull();
    expect((await call(sim, '/api/v2/persons?cursor=garbage')).status).toBe(400);
  });

  it('lists pipelines and stages (v2, cursor pages, stages by pipeline_id) and the users (v1)', async () => {
    const sim = await start({});
    const pipelines = await call(sim, '/api/v2/pipelines');
    expect(pipelines.status).toBe(200);
    expect((pipelines.body.data as { id: number; name: string }[]).map((p) => [p.id, p.name])).toEqual(
      sim.state.pipelines.map((p) => [p.id, p.name]),
    );
    const first = await call(sim, '/api/v2/stages?limit=4');
    const rest = await call(sim, `/api/v2/stages?limit=4&cursor=${first.body.additional_data?.next_cursor}`);
    const stages = [...(first.body.data as Json[]), ...(rest.body.data as Json[])];
    expect(stages.map((s) => [s.id, s.name, s.pipeline_id])).toEqual(
      sim.state.stages.map((s) => [s.id, s.name, s.pipeline_id]),
    );
    expect(rest.body.additional_data?.next_cursor).toBeNull();
    const partnerships = await call(sim, '/api/v2/stages?pipeline_id=2');
    expect((partnerships.body.data as Json[]).map((s) => s.name)).toEqual(['Intro', 'Signed']);
    expect((await call(sim, '/api/v2/stages?limit=501')).status).toBe(400);
    const users = await call(sim, '/api/v1/users');
    expect(users.status).toBe(200);
    expect((users.body.data as Json[]).map((u) => [u.id, u.name, u.email, u.active_flag])).toEqual(
      sim.state.users.map((u) => [u.id, u.name, u.email, true]),
    );
    expect((await call(sim, '/api/v1/users', { token: 'wrong' })).status).toBe(401);
  });
});
