/**
 * Plain-fetch tests of what the official client does not reach: key checks, the rate limit and
 * its headers, routes Memberstack does not have, Svix-signed webhooks (checked with the `svix`
 * package), in-app edits, and fault injection.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'svix';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_PLANS,
  INVALID_KEY_CODE,
  MemberstackApiError,
  type MemberstackSimulator,
  RATE_LIMIT_MESSAGE,
  type StartMemberstackSimulatorOptions,
  startMemberstackSimulator,
  svixSignature,
} from './index.ts';

type Json = Record<string, unknown> & {
  code?: string;
  message?: string;
  data?: Record<string, unknown> | Record<string, unknown>[] | null;
  totalCount?: number;
  endCursor?: number;
  hasNextPage?: boolean;
};

const started: MemberstackSimulator[] = [];
const servers: Server[] = [];

async function start(options: StartMemberstackSimulatorOptions = {}): Promise<MemberstackSimulator> {
  const sim = await startMemberstackSimulator({
    rateLimit: false,
    idSeed: 9,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  while (started.length) await started.pop()!.close();
  while (servers.length) {
    const s = servers.pop()!;
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function call(
  sim: MemberstackSimulator,
  path: string,
  init: {
    method?: string;
    body?: unknown;
    rawBody?: string;
    key?: string | null;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; body: Json; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const key = init.key === undefined ? sim.token : init.key;
  if (key !== null) headers['x-api-key'] = key;
  const payload = init.rawBody ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await res.text();
  let body: Json = {};
  try {
    body = text ? (JSON.parse(text) as Json) : {};
  } catch {
    body = {};
  }
  return { status: res.status, body, text, headers: res.headers };
}

const FREE = DEFAULT_PLANS[0]!.id;

describe('secret keys', () => {
  it('a missing or malformed key is 400, an unknown, revoked or expired one 401, both validation/invalid-secret-key', async () => {
    const clock = new ManualClock();
    const sim = await start({
      clock,
      tokens: [{ token: 'sk_sb_expiring000000001', expiresAt: clock.now() + 1000 }],
    });
    for (const key of [null, 'nope', 'pk_sb_1234567890abcdef']) {
      const r = await call(sim, '/members', { key });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ code: INVALID_KEY_CODE, message: expect.any(String) });
    }
    expect((await call(sim, '/members', { key: 'sk_sb_0123456789abcdef0123' })).status).toBe(401);
    expect((await call(sim, '/members', { key: 'sk_sb_expiring000000001' })).status).toBe(200);
    clock.advance(1000);
    const expired = await call(sim, '/members', { key: 'sk_sb_expiring000000001' });
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe(INVALID_KEY_CODE);
    sim.revokeKey(sim.token);
    expect((await call(sim, '/members')).status).toBe(401);
  });

  it('takes the key only from X-API-KEY: there is no OAuth or bearer token on the Admin API', async () => {
    const sim = await start();
    const bearer = await call(sim, '/members', {
      key: null,
      headers: { authorization: `Bearer ${sim.token}` },
    });
    expect(bearer.status).toBe(400);
    expect(bearer.body.code).toBe(INVALID_KEY_CODE);
    expect((await call(sim, '/oauth/token', { method: 'POST', body: {} })).status).toBe(404);
  });
});

describe('routes and parameters', () => {
  it('answers routes Memberstack does not have (there is no plans endpoint) with Express 404 HTML', async () => {
    const sim = await start();
    const r = await call(sim, '/plans');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.text).toContain('<pre>Cannot GET /plans</pre>');
    expect((await call(sim, '/members', { method: 'PUT', body: {} })).text).toContain('Cannot PUT /members');
  });

  it('first wins over limit, includeJSON adds the json blob, a bad after is refused', async () => {
    const sim = await start();
    const r = await call(sim, '/members?limit=3&first=2');
    expect((r.body.data as unknown[]).length).toBe(2);
    expect((r.body.data as Record<string, unknown>[])[0]).not.toHaveProperty('json');
    const withJson = await call(sim, '/members?limit=1&includeJSON=true');
    expect((withJson.body.data as Record<string, unknown>[])[0]).toHaveProperty('json', {
      preferences: { theme: 'dark', digest: 'weekly' },
    });
    expect((await call(sim, '/members?after=abc')).status).toBe(400);
    const empty = await call(sim, `/members?after=${Number.MAX_SAFE_INTEGER}`);
    expect(empty.body).toEqual({
      totalCount: 40,
      endCursor: Number.MAX_SAFE_INTEGER,
      hasNextPage: false,
      data: [],
    });
  });

  it('refuses a body that is not JSON with validation/invalid-json', async () => {
    const sim = await start();
    const r = await call(sim, '/members', { method: 'POST', rawBody: '{"email": ' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation/invalid-json');
  });

  it('metaData drops keys set falsy, customFields clear on null or empty string', async () => {
    const sim = await start();
    const id = sim.seeded!.members[0]!;
    const r = await call(sim, `/members/${id}`, {
      method: 'PATCH',
      body: { metaData: { source: '', extra: 'x' }, customFields: { phone: null, company: '' } },
    });
    const data = r.body.data as { metaData: Record<string, unknown>; customFields: Record<string, unknown> };
    expect(data.metaData).toEqual({ extra: 'x', newsletterOptIn: true });
    expect(data.customFields).not.toHaveProperty('phone');
    expect(data.customFields).not.toHaveProperty('company');
    expect(data.customFields).toHaveProperty('first-name', 'Ada');
  });

  it('keeps only the custom fields the app defines, in the seed and on writes', async () => {
    const sim = await start({ customFields: [{ key: 'company', label: 'Company' }] });
    const seeded = await call(sim, `/members/${sim.seeded!.members[0]!}`);
    expect((seeded.body.data as { customFields: unknown }).customFields).toEqual({
      company: 'Acme Analytics',
    });
    const r = await call(sim, '/members', {
      method: 'POST',
      body: {
        email: 'cf@example.com',
        password: 'long-enough-1',
        customFields: { company: 'Co', 'first-name': 'X' },
      },
    });
    expect(r.status).toBe(200);
    expect((r.body.data as { customFields: unknown }).customFields).toEqual({ company: 'Co' });
  });

  it('a test-mode app holds at most 50 members', async () => {
    const sim = await start({ seed: { members: 49 } });
    const ok = await call(sim, '/members', {
      method: 'POST',
      body: { email: 'fifty@example.com', password: 'long-enough-1' },
    });
    expect(ok.status).toBe(200);
    const over = await call(sim, '/members', {
      method: 'POST',
      body: { email: 'x51@example.com', password: 'long-enough-1' },
    });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('generic-message');
    expect(sim.state.count('sandbox')).toBe(50);
  });
});

describe('rate limit', () => {
  it('sends RateLimit headers, refuses the 26th request in a second with 429 and Retry-After, per key', async () => {
    const clock = new ManualClock();
    const other = 'sk_sb_otherkey0000000000';
    const sim = await start({ rateLimit: {}, clock, tokens: [{ token: other }] });
    const first = await call(sim, '/members?limit=1');
    expect(first.headers.get('ratelimit-limit')).toBe('25');
    expect(first.headers.get('ratelimit-remaining')).toBe('24');
    expect(first.headers.get('ratelimit-reset')).toBe('1');
    for (let i = 0; i < 24; i++) await call(sim, '/members?limit=1');
    const refused = await call(sim, '/members?limit=1');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 'generic-message', message: RATE_LIMIT_MESSAGE });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    // Another key has its own budget.
    expect((await call(sim, '/members?limit=1', { key: other })).status).toBe(200);
    clock.advance(1000);
    const again = await call(sim, '/members?limit=1');
    expect(again.status).toBe(200);
    expect(again.headers.get('ratelimit-remaining')).toBe('24');
  });

  it('perSecond can be changed, and rateLimit: false sends no limit headers', async () => {
    const sim = await start({ rateLimit: { perSecond: 2 } });
    await call(sim, '/members');
    await call(sim, '/members');
    expect((await call(sim, '/members')).status).toBe(429);
    const off = await start();
    expect((await call(off, '/members')).headers.get('ratelimit-limit')).toBeNull();
  });
});

type Received = { headers: IncomingHttpHeaders; body: string };

async function receiver(
  status = 200,
): Promise<{ url: string; got: Received[]; setStatus: (s: number) => void }> {
  const got: Received[] = [];
  let answer = status;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(answer).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/memberstack`,
    got,
    setStatus: (s) => {
      answer = s;
    },
  };
}

function svixHeaders(r: Received): Record<string, string> {
  return {
    'svix-id': String(r.headers['svix-id']),
    'svix-timestamp': String(r.headers['svix-timestamp']),
    'svix-signature': String(r.headers['svix-signature']),
  };
}

type Delivered = { event: string; payload: Record<string, unknown>; timestamp: number; reason?: string[] };

describe('webhooks through Svix', () => {
  // Svix checks timestamps against the real time, so these simulators run on it.
  const realClock = () => new ManualClock(Date.now());

  it('signs every delivery so svix Webhook.verify accepts it, and a wrong secret or a changed body fails', async () => {
    const target = await receiver();
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const sim = await start({ clock: realClock(), webhooks: { url: target.url, secret } });
    const created = await call(sim, '/members', {
      method: 'POST',
      body: { email: 'svix@example.com', password: 'long-enough-1', plans: [{ planId: FREE }] },
    });
    const id = (created.body.data as { id: string }).id;
    await call(sim, `/members/${id}`, {
      method: 'PATCH',
      body: { customFields: { company: 'Svix' }, verified: true },
    });
    await call(sim, `/members/${id}/remove-plan`, { method: 'POST', body: { planId: FREE } });
    await call(sim, `/members/${id}`, { method: 'DELETE' });
    await sim.flushWebhooks();

    const wh = new Webhook(secret);
    const events = target.got.map((r) => wh.verify(r.body, svixHeaders(r)) as Delivered);
    expect(events.map((e) => e.event)).toEqual([
      'member.created',
      'member.plan.added',
      'member.updated',
      'member.plan.canceled',
      'member.deleted',
    ]);
    expect(events[0]!.payload).toMatchObject({ id, auth: { email: 'svix@example.com' }, verified: false });
    expect(events[1]!.payload).toMatchObject({
      member: { id, email: 'svix@example.com' },
      planConnection: { planId: FREE, status: 'ACTIVE', active: true, type: 'FREE' },
    });
    expect(events[2]!.reason).toEqual(['customFields.updated', 'verified']);
    expect(events[2]!.payload).toMatchObject({ id, verified: true, customFields: { company: 'Svix' } });
    expect(events[2]!.payload).not.toHaveProperty('planConnections');
    expect(events[3]!.payload).toMatchObject({
      planConnection: { planId: FREE, status: 'CANCELED', active: false },
    });
    expect(events[4]!.payload).toEqual({ id });
    expect(events.every((e) => e.timestamp === events[0]!.timestamp)).toBe(true);

    const first = target.got[0]!;
    expect(first.headers['svix-id']).toMatch(/^msg_[A-Za-z0-9]{27}$/);
    expect(first.headers['svix-signature']).toBe(
      svixSignature(
        secret,
        String(first.headers['svix-id']),
        String(first.headers['svix-timestamp']),
        first.body,
      ),
    );
    expect(() =>
      new Webhook('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').verify(first.body, svixHeaders(first)),
    ).toThrow();
    expect(() => wh.verify(first.body.replace('svix@', 'evil@'), svixHeaders(first))).toThrow();
  });

  it('in-app edits send the same events; json-only changes and unsubscribed events send none', async () => {
    const target = await receiver();
    const sim = await start({
      clock: realClock(),
      webhooks: { url: target.url, events: ['member.updated', 'member.deleted'] },
    });
    expect(sim.webhooks!.secret).toMatch(/^whsec_/);
    const id = sim.seeded!.members[3]!;
    sim.update(id, { json: { only: 'json' }, loginRedirect: '/elsewhere' });
    sim.update(id, { metaData: { crmId: '7' } });
    sim.update(id, { metaData: { crmId: '7' } });
    const made = sim.create({ email: 'inapp@example.com', password: 'long-enough-1' });
    sim.remove(made.id);
    expect(() => sim.create({ email: sim.state.get(id)!.email, password: 'long-enough-1' })).toThrow(
      MemberstackApiError,
    );
    await sim.flushWebhooks();
    const wh = new Webhook(sim.webhooks!.secret);
    const events = target.got.map((r) => wh.verify(r.body, svixHeaders(r)) as Delivered);
    expect(events.map((e) => [e.event, e.reason])).toEqual([
      ['member.updated', ['metaData.updated']],
      ['member.deleted', undefined],
    ]);
  });

  it('retryFailed sends a failed message again with the same svix-id and a fresh signature', async () => {
    const target = await receiver(500);
    const clock = realClock();
    const sim = await start({ clock, webhooks: { url: target.url } });
    sim.update(sim.seeded!.members[2]!, { verified: true });
    sim.update(sim.seeded!.members[0]!, { verified: true }); // verified already: no event
    await sim.flushWebhooks();
    expect(target.got).toHaveLength(1);
    expect(sim.webhooks!.deliveries[0]).toMatchObject({ status: 500, attempt: 1 });
    target.setStatus(200);
    clock.advance(5000);
    expect(sim.webhooks!.retryFailed()).toBe(1);
    await sim.flushWebhooks();
    expect(target.got).toHaveLength(2);
    const [a, b] = target.got as [Received, Received];
    expect(b.headers['svix-id']).toBe(a.headers['svix-id']);
    expect(Number(b.headers['svix-timestamp']) - Number(a.headers['svix-timestamp'])).toBe(5);
    expect(b.headers['svix-signature']).not.toBe(a.headers['svix-signature']);
    expect(new Webhook(sim.webhooks!.secret).verify(b.body, svixHeaders(b))).toMatchObject({
      event: 'member.updated',
    });
    expect(sim.webhooks!.retryFailed()).toBe(0);
  });

  it('a sandbox endpoint gets nothing from live-mode changes', async () => {
    const target = await receiver();
    const live = 'sk_live0000000000000000';
    const sim = await start({ clock: realClock(), tokens: [{ token: live }], webhooks: { url: target.url } });
    const r = await call(sim, '/members', {
      method: 'POST',
      key: live,
      body: { email: 'live@example.com', password: 'long-enough-1' },
    });
    expect(r.status).toBe(200);
    await sim.flushWebhooks();
    expect(target.got).toHaveLength(0);
    // The sandbox does not see the live member either.
    expect((await call(sim, '/members/live@example.com')).body).toEqual({ data: null });
  });
});

describe('faults and request log', () => {
  it('injects statuses, Memberstack 429s and dropped sockets, and counts requests by path', async () => {
    const sim = await start();
    sim.faults.next({ status: 503, method: 'GET', path: '/members', count: 2 });
    expect((await call(sim, '/members')).status).toBe(503);
    expect((await call(sim, `/members/${sim.seeded!.members[0]!}`)).status).toBe(503);
    expect((await call(sim, '/members')).status).toBe(200);

    sim.faults.next({ kind: 'rate_limit' });
    const limited = await call(sim, '/members');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ code: 'generic-message', message: RATE_LIMIT_MESSAGE });
    expect(limited.headers.get('retry-after')).toBe('1');

    sim.faults.next({ kind: 'drop', path: /^\/members$/ });
    await expect(call(sim, '/members')).rejects.toThrow();

    expect(sim.requestLog.count({ status: 503 })).toBe(2);
    expect(sim.requestLog.count({ status: 429 })).toBe(1);
    expect(sim.requestLog.byPath()['GET /members']).toBe(4);
    expect(sim.faults.pending).toBe(0);
  });
});
