/**
 * Plain-fetch tests of what the contract test does not reach: the limits and their headers,
 * v1 auth and page tokens, the API version header, webhook subscriptions and deliveries (no
 * signature: Affinity signs nothing), in-app edits, faults and the request log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  type AffinitySimulator,
  type StartAffinitySimulatorOptions,
  startAffinitySimulator,
} from './index.ts';

const started: AffinitySimulator[] = [];

async function start(options: StartAffinitySimulatorOptions = {}) {
  const clock = new ManualClock('2026-01-31T23:59:00Z');
  const sim = await startAffinitySimulator({ clock, ...options });
  started.push(sim);
  return { sim, clock };
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

const basic = (token: string) => `Basic ${Buffer.from(`:${token}`).toString('base64')}`;

function call(sim: AffinitySimulator, method: string, path: string, body?: unknown, auth = basic(sim.token)) {
  return fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}
const v2 = (sim: AffinitySimulator, path: string, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}${path}`, { headers: { authorization: `Bearer ${sim.token}`, ...headers } });

type Captured = { url: string; body: string; headers: Record<string, string> };
function captureFetch(status = 200) {
  const calls: Captured[] = [];
  const impl: typeof fetch = async (input, init) => {
    calls.push({
      url: String(input),
      body: String(init?.body),
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
    });
    return new Response('ok', { status });
  };
  return { calls, impl };
}

describe('rate limits', () => {
  it('every response carries the user (per minute) and org (per month) headers', async () => {
    const { sim } = await start();
    const res = await v2(sim, '/v2/lists');
    expect(Object.fromEntries([...res.headers].filter(([k]) => k.startsWith('x-ratelimit')))).toEqual({
      'x-ratelimit-limit-user': '900',
      'x-ratelimit-limit-user-remaining': '899',
      'x-ratelimit-limit-user-reset': '60',
      'x-ratelimit-limit-org': '100000',
      'x-ratelimit-limit-org-remaining': '99999',
      // 23:59:00 on January 31st: the month resets in 60 seconds.
      'x-ratelimit-limit-org-reset': '60',
    });
    const v1 = await call(sim, 'GET', '/lists');
    expect(v1.headers.get('x-ratelimit-limit-user-remaining')).toBe('898');
  });

  it('refuses past the per-minute limit with 429 (not counted) until the minute is over', async () => {
    const { sim, clock } = await start({ rateLimit: { perMinute: 2 } });
    await v2(sim, '/v2/lists');
    clock.advance(20_000);
    await call(sim, 'GET', '/lists');
    const refused = await v2(sim, '/v2/lists');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      errors: [
        { code: 'rate-limit', message: 'Per-minute rate limit of 2 requests exceeded for this API key.' },
      ],
    });
    expect(refused.headers.get('x-ratelimit-limit-user-reset')).toBe('40');
    const v1 = await call(sim, 'GET', '/lists');
    expect(v1.status).toBe(429);
    expect(await v1.json()).toEqual({
      errors: ['Per-minute rate limit of 2 requests exceeded for this API key.'],
    });
    clock.advance(40_000);
    const again = await v2(sim, '/v2/lists');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-limit-user-remaining')).toBe('1');
    // The minute crossed midnight into February: the month's count restarted with the last call.
    expect(sim.limiter.status(sim.token)).toMatchObject({ rate: { org_monthly: { used: 1 } } });
  });

  it('the monthly allowance is per account, skips whoami and /rate-limit, and resets with the month', async () => {
    const { sim, clock } = await start({
      rateLimit: { monthly: 2 },
      tokens: [{ token: 'second-user-key', user: 1 }],
    });
    expect((await v2(sim, '/v2/lists')).status).toBe(200);
    expect((await call(sim, 'GET', '/lists', undefined, basic('second-user-key'))).status).toBe(200);
    const refused = await v2(sim, '/v2/lists');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { errors: { message: string }[] }).errors[0]?.message).toMatch(
      /Monthly/,
    );
    expect(refused.headers.get('x-ratelimit-limit-org-remaining')).toBe('0');
    expect((await v2(sim, '/v2/auth/whoami')).status).toBe(200);
    const status = await call(sim, 'GET', '/rate-limit');
    expect(await status.json()).toEqual({
      rate: {
        org_monthly: { limit: 2, remaining: 0, reset: 60, used: 2 },
        // This key's minute: /v2/lists, whoami and this call (the refused request did not count).
        api_key_per_minute: { limit: 900, remaining: 897, reset: 60, used: 3 },
      },
    });
    clock.advance(61_000); // February
    expect((await v2(sim, '/v2/lists')).status).toBe(200);
  });

  it('rateLimit: false turns the limits off but keeps the headers', async () => {
    const { sim } = await start({ rateLimit: false });
    sim.limiter.take(sim.token);
    for (let i = 0; i < 3; i++) expect((await v2(sim, '/v2/lists')).status).toBe(200);
    expect(sim.limiter.enabled).toBe(false);
  });
});

describe('auth and protocol', () => {
  it('v2 takes only a Bearer key; v1 takes Basic (empty user) or Bearer', async () => {
    const { sim } = await start();
    const basicOnV2 = await fetch(`${sim.url}/v2/lists`, { headers: { authorization: basic(sim.token) } });
    expect(basicOnV2.status).toBe(401);
    expect(await basicOnV2.json()).toEqual({
      errors: [
        {
          code: 'authentication',
          message: 'Affinity API v2 uses bearer authentication; provide your API key as the bearer token.',
        },
      ],
    });
    expect((await call(sim, 'GET', '/lists')).status).toBe(200);
    expect((await call(sim, 'GET', '/lists', undefined, `Bearer ${sim.token}`)).status).toBe(200);
    const none = await fetch(`${sim.url}/lists`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ errors: ['Your API key is invalid.'] });
    sim.revokeToken(sim.token);
    expect((await v2(sim, '/v2/lists')).status).toBe(401);
  });

  it('answers with X-Affinity-Api-Version and refuses a version it does not serve', async () => {
    const { sim } = await start();
    expect((await v2(sim, '/v2/lists')).headers.get('x-affinity-api-version')).toBe('2024-01-01');
    const bad = await v2(sim, '/v2/lists', { 'X-Affinity-Api-Version': '2026-09-17' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { param: string }[] }).errors[0]?.param).toBe(
      'X-Affinity-Api-Version',
    );
  });

  it('v1 page tokens page through search results and must keep the same query', async () => {
    const { sim } = await start();
    const first = (await (await call(sim, 'GET', '/persons?page_size=20')).json()) as {
      persons: { id: number; organization_ids?: number[] }[];
      next_page_token: string | null;
    };
    expect(first.persons).toHaveLength(20);
    expect(first.persons[0]?.organization_ids).toBeUndefined();
    const second = (await (
      await call(sim, 'GET', `/persons?page_size=20&page_token=${first.next_page_token}`)
    ).json()) as {
      persons: unknown[];
      next_page_token: string | null;
    };
    expect(second.persons).toHaveLength(12);
    expect(second.next_page_token).toBeNull();
    const wrong = await call(sim, 'GET', `/persons?page_size=20&term=a&page_token=${first.next_page_token}`);
    expect(wrong.status).toBe(422);
    expect(await wrong.json()).toEqual({ errors: ['Invalid page_token variable'] });
    const term = (await (await call(sim, 'GET', '/organizations?term=northwind')).json()) as {
      organizations: { name: string }[];
    };
    expect(term.organizations.map((o) => o.name)).toEqual(['Northwind Analytics']);
  });

  it('v1 has no modified-since filter: the change feeds are webhooks and field values timestamps', async () => {
    const { sim } = await start();
    const res = (await (
      await call(sim, 'GET', '/persons?min_last_updated=2026-01-01&page_size=500')
    ).json()) as {
      persons: unknown[];
    };
    // An unknown parameter filters nothing, as on Affinity.
    expect(res.persons).toHaveLength(32);
  });
});

describe('webhooks', () => {
  it('delivers {type, body, sent_at} for subscribed events, unsigned, for API and in-app edits', async () => {
    const cap = captureFetch();
    const { sim, clock } = await start({ webhooks: { fetch: cap.impl } });
    const sub = await call(sim, 'POST', '/webhook/subscribe', {
      webhook_url: 'https://hooks.example.com/affinity/s3cret',
      subscriptions: ['person.created', 'person.updated', 'field_value.created'],
    });
    expect(await sub.json()).toMatchObject({
      webhook_url: 'https://hooks.example.com/affinity/s3cret',
      disabled: false,
      created_by: sim.state.owner.id,
    });
    expect(JSON.parse(cap.calls[0]?.body ?? '{}')).toMatchObject({ type: 'webhook.probe' });
    cap.calls.length = 0;

    const created = (await (
      await call(sim, 'POST', '/persons', { first_name: 'Ada', last_name: 'L', emails: ['ada@x.io'] })
    ).json()) as {
      id: number;
    };
    await call(sim, 'POST', '/organizations', { name: 'Not subscribed' });
    clock.advance(5_000);
    sim.update('person', created.id, { last_name: 'Lovelace' });
    await sim.flushWebhooks();
    expect(cap.calls.map((c) => JSON.parse(c.body).type)).toEqual(['person.created', 'person.updated']);
    const updated = JSON.parse(cap.calls[1]?.body ?? '{}');
    expect(updated).toEqual({
      type: 'person.updated',
      sent_at: Math.floor(Date.parse('2026-01-31T23:59:05Z') / 1000),
      body: {
        id: created.id,
        type: 0,
        first_name: 'Ada',
        last_name: 'Lovelace',
        primary_email: 'ada@x.io',
        emails: ['ada@x.io'],
        organization_ids: [],
      },
    });
    expect(cap.calls[0]?.url).toBe('https://hooks.example.com/affinity/s3cret');
    expect(Object.keys(cap.calls[0]?.headers ?? {}).filter((h) => /sign|secret|hmac/i.test(h))).toEqual([]);
  });

  it('an empty subscription list means every event; disabled subscriptions get nothing', async () => {
    const cap = captureFetch();
    const { sim } = await start({ webhooks: { fetch: cap.impl, probe: false } });
    const sub = (await (
      await call(sim, 'POST', '/webhook/subscribe', { webhook_url: 'https://h.example.com/all' })
    ).json()) as {
      id: number;
      subscriptions: string[];
    };
    expect(sub.subscriptions).toEqual([]);
    const pipeline = sim.seed?.lists.pipeline as number;
    sim.create('opportunity', { name: 'In-app deal', list_id: pipeline });
    await sim.flushWebhooks();
    expect(cap.calls.map((c) => JSON.parse(c.body).type)).toEqual([
      'opportunity.created',
      'list_entry.created',
    ]);
    const off = await call(sim, 'PUT', `/webhook/${sub.id}`, { disabled: true });
    expect(await off.json()).toMatchObject({ disabled: true });
    sim.create('organization', { name: 'Quiet Co' });
    await sim.flushWebhooks();
    expect(cap.calls).toHaveLength(2);
  });

  it('deleting a person reports its field values and list entries before the person', async () => {
    const cap = captureFetch();
    const { sim } = await start({ webhooks: { fetch: cap.impl, probe: false } });
    await call(sim, 'POST', '/webhook/subscribe', { webhook_url: 'https://h.example.com/x' });
    const founder = sim.seed?.persons[0] as number;
    expect(await (await call(sim, 'DELETE', `/persons/${founder}`)).json()).toEqual({ success: true });
    await sim.flushWebhooks();
    expect(cap.calls.map((c) => JSON.parse(c.body).type)).toEqual([
      'field_value.deleted',
      'field_value.deleted',
      'field_value.deleted',
      'list_entry.deleted',
      'person.deleted',
    ]);
  });

  it('refuses a URL that fails the probe, a fourth subscription, unknown events; failed deliveries can be retried', async () => {
    const bad = captureFetch(500);
    const { sim } = await start({ webhooks: { fetch: bad.impl } });
    const refused = await call(sim, 'POST', '/webhook/subscribe', {
      webhook_url: 'https://down.example.com',
    });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({ errors: ['The webhook URL did not return a valid response.'] });
    const unknown = await call(sim, 'POST', '/webhook/subscribe', {
      webhook_url: 'https://x.example.com',
      subscriptions: ['person.exploded'],
    });
    expect(unknown.status).toBe(422);

    const good = captureFetch(503);
    const { sim: sim2 } = await start({ webhooks: { fetch: good.impl, probe: false } });
    for (let i = 0; i < 3; i++)
      expect(
        (await call(sim2, 'POST', '/webhook/subscribe', { webhook_url: `https://h${i}.example.com` })).status,
      ).toBe(200);
    const fourth = await call(sim2, 'POST', '/webhook/subscribe', { webhook_url: 'https://h4.example.com' });
    expect(fourth.status).toBe(422);
    const list = (await (await call(sim2, 'GET', '/webhook')).json()) as { id: number }[];
    expect(list).toHaveLength(3);
    expect(await (await call(sim2, 'DELETE', `/webhook/${list[2]?.id}`)).json()).toEqual({ success: true });
    expect((await call(sim2, 'GET', `/webhook/${list[2]?.id}`)).status).toBe(404);
    sim2.create('organization', { name: 'Retry Co' });
    await sim2.flushWebhooks();
    expect(sim2.webhooks.failed).toHaveLength(2);
    expect(sim2.webhooks.retryFailed()).toBe(2);
    await sim2.flushWebhooks();
    expect(sim2.webhooks.deliveries.filter((d) => d.attempt === 2)).toHaveLength(2);
  });

  it('only the creator may update a subscription', async () => {
    const { sim } = await start({ webhooks: { probe: false }, tokens: [{ token: 'sam-key', user: 1 }] });
    const sub = (await (
      await call(sim, 'POST', '/webhook/subscribe', { webhook_url: 'https://h.example.com' })
    ).json()) as { id: number };
    const other = await call(sim, 'PUT', `/webhook/${sub.id}`, { disabled: true }, basic('sam-key'));
    expect(other.status).toBe(403);
  });
});

describe('faults and request log', () => {
  it('injects statuses, dropped sockets and rate limits, and counts requests', async () => {
    const { sim } = await start();
    sim.faults.next({ path: '/v2/persons', status: 503, count: 2 });
    expect((await v2(sim, '/v2/persons')).status).toBe(503);
    expect((await v2(sim, '/v2/persons')).status).toBe(503);
    expect((await v2(sim, '/v2/persons')).status).toBe(200);
    sim.faults.next({ kind: 'rate_limit' });
    const limited = await v2(sim, '/v2/lists');
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('rate-limit');
    sim.faults.next({ kind: 'drop', method: 'GET', path: '/lists' });
    await expect(call(sim, 'GET', '/lists')).rejects.toThrow();
    expect(sim.requestLog.count({ path: '/v2/persons', status: 503 })).toBe(2);
    expect(sim.requestLog.byPath()['GET /v2/persons']).toBe(3);
  });
});

describe('associations', () => {
  it("reads a person's organizations as the v2 association field `companies`, kept in step with v1 writes", async () => {
    const { sim } = await start();
    const fields = (await (await v2(sim, '/v2/persons/fields')).json()) as { data: { id: string }[] };
    expect(fields.data.find((f) => f.id === 'companies')).toEqual({
      id: 'companies',
      name: 'Organizations',
      type: 'list',
      enrichmentSource: null,
      valueType: 'company-multi',
    });
    const seed = sim.seed;
    if (!seed) throw new Error('seeded');
    const [o1, o2] = seed.organizations as [number, number];
    const made = (await (
      await call(sim, 'POST', '/persons', {
        first_name: 'Ana',
        last_name: 'Assoc',
        emails: ['ana@assoc.example'],
        organization_ids: [o2, o1],
      })
    ).json()) as { id: number };
    type Page = { data: { id: number; fields?: { id: string; value: { type: string; data: unknown } }[] }[] };
    const read = async () =>
      ((await (await v2(sim, `/v2/persons?ids=${made.id}&fieldIds=companies`)).json()) as Page).data[0]
        ?.fields;
    const ids = (f: Awaited<ReturnType<typeof read>>) =>
      (f?.[0]?.value.data as { id: number }[] | null)?.map((c) => c.id) ?? null;
    expect((await read())?.[0]?.value.type).toBe('company-multi');
    expect(ids(await read())).toEqual([o2, o1]);
    // Not asked for: no association (fields are selected by id or type).
    const plain = (await (await v2(sim, `/v2/persons/${made.id}`)).json()) as { fields?: unknown };
    expect(plain.fields).toBeUndefined();
    await call(sim, 'PUT', `/persons/${made.id}`, { organization_ids: [] });
    expect(ids(await read())).toBeNull();
    // Companies carry no persons association in v2.
    const companyFields = (await (await v2(sim, '/v2/companies/fields')).json()) as {
      data: { id: string }[];
    };
    expect(companyFields.data.some((f) => f.id === 'persons' || f.id === 'companies')).toBe(false);
  });
});
