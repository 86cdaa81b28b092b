/**
 * Plain-fetch tests of what the official client's contract test does not reach: rate-limit
 * headers and windows, auth details, webhooks (registration, deliveries, signatures, retries),
 * OAuth, publishing states, value validation, faults and the request log.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebflowClient } from 'webflow-api';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_OAUTH_APP,
  type StartWebflowSimulatorOptions,
  startWebflowSimulator,
  WebflowApiError,
  type WebflowSimulator,
} from './index.ts';

type Json = Record<string, unknown> & {
  items?: Item[];
  pagination?: { limit: number; offset: number; total: number };
  code?: string;
  message?: string;
  details?: { param: string; description: string }[];
  fieldData?: Record<string, unknown>;
  id?: string;
  isDraft?: boolean;
  lastPublished?: string | null;
  secretKey?: string;
  webhooks?: { id: string }[];
};
type Item = {
  id: string;
  fieldData: Record<string, unknown>;
  isDraft: boolean;
  lastPublished: string | null;
};

const started: WebflowSimulator[] = [];
const servers: Server[] = [];

async function start(options: StartWebflowSimulatorOptions = {}): Promise<WebflowSimulator> {
  const sim = await startWebflowSimulator({
    rateLimit: false,
    idSeed: 3,
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
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function call(
  sim: WebflowSimulator,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; form?: Record<string, string> } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? sim.token : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  } else if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    redirect: 'manual',
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

const clockOf = (sim: WebflowSimulator) => sim.clock as ManualClock;

type Received = { headers: IncomingHttpHeaders; body: string };

/** A local receiver for webhook deliveries; answers `status` (default 200). */
async function receiver(status: () => number = () => 200): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status());
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

const hmac = (key: string, ts: string, body: string) =>
  createHmac('sha256', key).update(`${ts}:${body}`).digest('hex');

describe('auth', () => {
  it('answers 401 not_authorized without a token, with an unknown one or a revoked one', async () => {
    const sim = await start();
    const path = `/v2/sites/${sim.siteId}`;
    for (const token of [null, 'nope']) {
      const r = await call(sim, path, { token });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({
        message: 'Request not authorized',
        code: 'not_authorized',
        externalReference: null,
        details: [],
      });
    }
    expect((await call(sim, path)).status).toBe(200);
    sim.revokeToken(sim.token);
    expect((await call(sim, path)).status).toBe(401);
  });

  it('a site token reaches only its site; a malformed id is a validation error', async () => {
    const sim = await start();
    const other = sim.state.addSite({ displayName: 'Other', shortName: 'other' });
    const sites = await call(sim, '/v2/sites');
    expect((sites.body.sites as { id: string }[]).map((s) => s.id)).toEqual([sim.siteId]);
    expect((await call(sim, `/v2/sites/${other.id}`)).status).toBe(401);
    const bad = await call(sim, '/v2/collections/not-an-id');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      code: 'validation_error',
      message: 'Validation Error: Provided ID is invalid',
    });
    const unknown = await call(sim, '/v2/sites/ffffffffffffffffffffffff');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Requested resource not found: The site cannot be found');
  });
});

describe('rate limits', () => {
  it('sends X-RateLimit-Limit/Remaining on every response and 429 with Retry-After past 60 a minute', async () => {
    const sim = await start({ rateLimit: {}, tokens: [{ token: 'second-key' }] });
    const path = `/v2/sites/${sim.siteId}`;
    const first = await call(sim, path);
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    for (let i = 0; i < 59; i++) await call(sim, path);
    clockOf(sim).advance(20_000);
    const refused = await call(sim, path);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      message: 'Too Many Requests',
      code: 'too_many_requests',
      externalReference: null,
      details: [],
    });
    expect(refused.headers.get('retry-after')).toBe('40');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // Limits are per key.
    expect((await call(sim, path, { token: 'second-key' })).status).toBe(200);
    // A refused request does not count; the window resets a minute after it began.
    clockOf(sim).advance(40_000);
    const again = await call(sim, path);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it('takes a plan limit (120 per minute)', async () => {
    const sim = await start({ rateLimit: { perMinute: 120 } });
    const r = await call(sim, '/v2/sites');
    expect(r.headers.get('x-ratelimit-limit')).toBe('120');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('119');
  });
});

describe('items', () => {
  it('validates values per field type and reports every problem in one ValidationError', async () => {
    const sim = await start();
    const { contacts, deals } = sim.crm!.collections;
    const r = await call(sim, `/v2/collections/${deals}/items`, {
      method: 'POST',
      body: {
        fieldData: {
          name: 'Deal',
          slug: 'Not A Slug',
          amount: '12',
          stage: 'no-such-option',
          contacts: [sim.crm!.contacts[0], 'cccccccccccccccccccccccc'],
          'close-date': 'tomorrow',
          nope: 1,
        },
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_error');
    expect(r.body.details!.map((d) => d.param).sort()).toEqual(
      ['amount', 'close-date', 'contacts', 'nope', 'slug', 'stage'].sort(),
    );
    expect(sim.state.listItems(deals)).toHaveLength(10);

    const email = await call(sim, `/v2/collections/${contacts}/items`, {
      method: 'POST',
      body: { fieldData: { name: 'No Mail', slug: 'no-mail', email: 'not-an-email' } },
    });
    expect(email.body.details).toEqual([{ param: 'email', description: 'Invalid email address' }]);
    const missing = await call(sim, `/v2/collections/${contacts}/items`, {
      method: 'POST',
      body: { fieldData: { slug: 'no-name' } },
    });
    expect(missing.body.details!.map((d) => d.param).sort()).toEqual(['email', 'name']);
  });

  it('refuses more than 100 items and a limit over 100', async () => {
    const sim = await start();
    const { contacts } = sim.crm!.collections;
    const items = Array.from({ length: 101 }, (_, i) => ({
      fieldData: { name: `P${i}`, slug: `p-${i}`, email: `p${i}@example.com` },
    }));
    const r = await call(sim, `/v2/collections/${contacts}/items`, { method: 'POST', body: { items } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_error');
    expect((await call(sim, `/v2/collections/${contacts}/items?limit=101`)).status).toBe(400);
    const ok = await call(sim, `/v2/collections/${contacts}/items`, {
      method: 'POST',
      body: { items: items.slice(0, 100) },
    });
    expect(ok.status).toBe(202);
    expect(ok.body.items).toHaveLength(100);
  });

  it('unpublishing makes an item a draft off the live site; archived items leave it at the next site publish', async () => {
    const sim = await start();
    const { contacts } = sim.crm!.collections;
    const [a, b] = sim.crm!.contacts as [string, string];
    expect(
      (await call(sim, `/v2/collections/${contacts}/items/${a}/live`, { method: 'DELETE' })).status,
    ).toBe(204);
    const item = await call(sim, `/v2/collections/${contacts}/items/${a}`);
    expect(item.body).toMatchObject({ isDraft: true, lastPublished: null });
    expect((await call(sim, `/v2/collections/${contacts}/items/${a}/live`)).status).toBe(404);

    await call(sim, `/v2/collections/${contacts}/items/${b}`, {
      method: 'PATCH',
      body: { isArchived: true },
    });
    expect((await call(sim, `/v2/collections/${contacts}/items/${b}/live`)).status).toBe(200);
    const pub = await call(sim, `/v2/sites/${sim.siteId}/publish`, {
      method: 'POST',
      body: { publishToWebflowSubdomain: true },
    });
    expect(pub.status).toBe(202);
    expect((await call(sim, `/v2/collections/${contacts}/items/${b}/live`)).status).toBe(404);
    // The draft stays unpublished.
    expect((await call(sim, `/v2/collections/${contacts}/items/${a}/live`)).status).toBe(404);
  });

  it('a live PATCH of an item never published is a 409 conflict; a live write publishes at once', async () => {
    const sim = await start();
    const { contacts } = sim.crm!.collections;
    const draft = sim.crm!.contacts.at(-1)!;
    const r = await call(sim, `/v2/collections/${contacts}/items/${draft}/live`, {
      method: 'PATCH',
      body: { fieldData: { phone: '1' } },
    });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      code: 'conflict',
      message:
        "Conflict: Conflict with server data: Live PATCH updates can't be applied to items that have never been published",
    });
    const live = await call(sim, `/v2/collections/${contacts}/items/live`, {
      method: 'POST',
      body: { fieldData: { name: 'Live One', slug: 'live-one', email: 'live@example.com' } },
    });
    expect(live.status).toBe(202);
    const read = await call(sim, `/v2/collections/${contacts}/items/${live.body.id}/live`);
    expect(read.body.fieldData).toMatchObject({ name: 'Live One' });
    expect(typeof read.body.lastPublished).toBe('string');
  });

  it('in-app edits follow the same rules as API writes', async () => {
    const sim = await start();
    const { contacts } = sim.crm!.collections;
    expect(() => sim.create(contacts, { name: 'Dup', slug: 'ada-moreau', email: 'd@example.com' })).toThrow(
      WebflowApiError,
    );
    const item = sim.create(contacts, { name: 'App Made', slug: 'app-made', email: 'app@example.com' });
    sim.update(contacts, item.id, { 'job-title': 'Founder' });
    const r = await call(sim, `/v2/collections/${contacts}/items/${item.id}`);
    expect(r.body.fieldData).toMatchObject({ name: 'App Made', 'job-title': 'Founder' });
    sim.remove(contacts, item.id);
    expect((await call(sim, `/v2/collections/${contacts}/items/${item.id}`)).status).toBe(404);
  });
});

describe('webhooks', () => {
  it('delivers item events signed with the site-token webhook secret, from API writes and in-app edits', async () => {
    const sim = await start();
    const { contacts } = sim.crm!.collections;
    const hook = await receiver();
    const secrets: Record<string, string> = {};
    for (const triggerType of [
      'collection_item_created',
      'collection_item_changed',
      'collection_item_deleted',
      'collection_item_unpublished',
    ]) {
      const r = await call(sim, `/v2/sites/${sim.siteId}/webhooks`, {
        method: 'POST',
        body: { triggerType, url: hook.url },
      });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ triggerType, url: hook.url, siteId: sim.siteId, filter: null });
      expect(r.body.secretKey).toMatch(/^[0-9a-f]{64}$/);
      secrets[triggerType] = r.body.secretKey!;
    }
    const list = await call(sim, `/v2/sites/${sim.siteId}/webhooks`);
    expect(list.body.webhooks).toHaveLength(4);
    expect(list.body.webhooks![0]).not.toHaveProperty('secretKey');

    const created = await call(sim, `/v2/collections/${contacts}/items`, {
      method: 'POST',
      body: { fieldData: { name: 'Hooked', slug: 'hooked', email: 'hook@example.com' } },
    });
    clockOf(sim).advance(1000);
    sim.update(contacts, created.body.id!, { phone: '+1 555 0100' });
    sim.unpublish(contacts, [sim.crm!.contacts[0]!]);
    sim.remove(contacts, created.body.id!);
    await sim.flushWebhooks();

    const events = hook.received.map((r) => JSON.parse(r.body) as { triggerType: string; payload: Json });
    expect(events.map((e) => e.triggerType)).toEqual([
      'collection_item_created',
      'collection_item_changed',
      'collection_item_unpublished',
      'collection_item_deleted',
    ]);
    expect(events[0]!.payload).toMatchObject({
      id: created.body.id,
      siteId: sim.siteId,
      collectionId: contacts,
      workspaceId: sim.state.workspaceId,
      isDraft: false,
      fieldData: { name: 'Hooked', slug: 'hooked' },
    });
    expect(events[1]!.payload.fieldData).toMatchObject({ phone: '+1 555 0100' });
    for (const [i, r] of hook.received.entries()) {
      const ts = String(r.headers['x-webflow-timestamp']);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-webflow-signature']).toBe(hmac(secrets[events[i]!.triggerType]!, ts, r.body));
    }
    expect(Number(hook.received[1]!.headers['x-webflow-timestamp'])).toBe(clockOf(sim).now());
  });

  it('signs OAuth-made webhooks with the app client secret (the official verifySignature agrees); get and delete', async () => {
    const sim = await start({ tokens: [{ token: 'oauth-token', kind: 'oauth' }] });
    const { companies } = sim.crm!.collections;
    const hook = await receiver();
    const r = await call(sim, `/v2/sites/${sim.siteId}/webhooks`, {
      method: 'POST',
      token: 'oauth-token',
      body: { triggerType: 'collection_item_changed', url: hook.url },
    });
    expect(r.status).toBe(201);
    expect(r.body).not.toHaveProperty('secretKey');
    const id = r.body.id!;
    expect((await call(sim, `/v2/webhooks/${id}`)).body).toMatchObject({
      id,
      triggerType: 'collection_item_changed',
    });

    sim.update(companies, sim.crm!.companies[0]!, { employees: 121 });
    await sim.flushWebhooks();
    const [got] = hook.received;
    expect(got).toBeDefined();
    const ts = String(got!.headers['x-webflow-timestamp']);
    expect(got!.headers['x-webflow-signature']).toBe(hmac(DEFAULT_OAUTH_APP.clientSecret, ts, got!.body));
    const client = new WebflowClient({ accessToken: 'x' });
    const headers = {
      'x-webflow-timestamp': ts,
      'x-webflow-signature': String(got!.headers['x-webflow-signature']),
    };
    expect(
      await client.webhooks.verifySignature({
        headers,
        body: got!.body,
        secret: DEFAULT_OAUTH_APP.clientSecret,
      }),
    ).toBe(true);
    expect(
      await client.webhooks.verifySignature({
        headers,
        body: `${got!.body} `,
        secret: DEFAULT_OAUTH_APP.clientSecret,
      }),
    ).toBe(false);

    expect((await call(sim, `/v2/webhooks/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(sim, `/v2/webhooks/${id}`)).status).toBe(404);
    sim.update(companies, sim.crm!.companies[0]!, { employees: 122 });
    await sim.flushWebhooks();
    expect(hook.received).toHaveLength(1);
  });

  it('refuses an unknown trigger type, a bad url and a token without sites:write', async () => {
    const sim = await start({
      tokens: [{ token: 'cms-only', scopes: ['cms:read', 'cms:write', 'sites:read'] }],
    });
    const path = `/v2/sites/${sim.siteId}/webhooks`;
    const bad = await call(sim, path, {
      method: 'POST',
      body: { triggerType: 'item_moved', url: 'https://x.example' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details![0]!.param).toBe('triggerType');
    const url = await call(sim, path, {
      method: 'POST',
      body: { triggerType: 'collection_item_created', url: 'nope' },
    });
    expect(url.status).toBe(400);
    const scope = await call(sim, path, {
      method: 'POST',
      token: 'cms-only',
      body: { triggerType: 'collection_item_created', url: 'https://x.example' },
    });
    expect(scope.status).toBe(403);
    expect(scope.body.message).toBe('OAuthForbidden: You are missing the following scopes - sites:write');
  });

  it('records a failed delivery and retries it up to three more times', async () => {
    const sim = await start();
    let answer = 500;
    const hook = await receiver(() => answer);
    await call(sim, `/v2/sites/${sim.siteId}/webhooks`, {
      method: 'POST',
      body: { triggerType: 'collection_item_created', url: hook.url },
    });
    sim.create(sim.crm!.collections.companies, { name: 'Retry Co', slug: 'retry-co' });
    await sim.flushWebhooks();
    for (let i = 0; i < 3; i++) {
      expect(sim.webhooks.retryFailed()).toBe(1);
      await sim.flushWebhooks();
    }
    expect(sim.webhooks.retryFailed()).toBe(0);
    expect(sim.webhooks.deliveries.map((d) => [d.attempt, d.status])).toEqual([
      [0, 500],
      [1, 500],
      [2, 500],
      [3, 500],
    ]);
    expect(new Set(hook.received.map((r) => r.body)).size).toBe(1);
    answer = 200;
  });
});

describe('oauth', () => {
  const app = DEFAULT_OAUTH_APP;

  async function authorize(sim: WebflowSimulator, scope: string, extra = '') {
    return call(
      sim,
      `/oauth/authorize?response_type=code&client_id=${app.clientId}&scope=${encodeURIComponent(scope)}&state=xyz${extra}`,
      { token: null },
    );
  }

  it('authorize redirects with a code; the code buys an access token once, with the scopes asked', async () => {
    const sim = await start();
    const r = await authorize(sim, 'cms:read sites:read');
    expect(r.status).toBe(302);
    const location = new URL(r.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(app.redirectUri);
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code')!;

    const form = {
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code,
      grant_type: 'authorization_code',
    };
    const token = await call(sim, '/oauth/access_token', { method: 'POST', token: null, form });
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'bearer', scope: 'cms:read sites:read' });
    expect(token.body).not.toHaveProperty('refresh_token');
    const access = String(token.body.access_token);
    expect((await call(sim, '/v2/sites', { token: access })).status).toBe(200);
    const write = await call(sim, `/v2/sites/${sim.siteId}/publish`, {
      method: 'POST',
      token: access,
      body: { publishToWebflowSubdomain: true },
    });
    expect(write.status).toBe(403);

    const reused = await call(sim, '/oauth/access_token', { method: 'POST', token: null, body: form });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');

    const revoke = await call(sim, '/oauth/revoke_authorization', {
      method: 'POST',
      token: null,
      body: { client_id: app.clientId, client_secret: app.clientSecret, access_token: access },
    });
    expect(revoke.body).toEqual({ did_revoke: true });
    expect((await call(sim, '/v2/sites', { token: access })).status).toBe(401);
  });

  it('introspect shows the app and the sites of an OAuth token, and a site token as client_credentials; authorized_by needs its scope', async () => {
    const sim = await start();
    const r = await authorize(sim, 'cms:read sites:read authorized_user:read');
    const code = new URL(r.headers.get('location')!).searchParams.get('code')!;
    const token = await call(sim, '/oauth/access_token', {
      method: 'POST',
      token: null,
      body: {
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code,
        grant_type: 'authorization_code',
      },
    });
    const access = String(token.body.access_token);
    const info = await call(sim, '/v2/token/introspect', { token: access });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      authorization: {
        grantType: 'authorization_code',
        scope: 'cms:read,sites:read,authorized_user:read',
        authorizedTo: {
          siteIds: [sim.siteId],
          workspaceIds: [sim.state.workspaceId],
          userIds: [sim.oauth.user.id],
        },
      },
      application: { displayName: 'Simulated App' },
    });
    const who = await call(sim, '/v2/token/authorized_by', { token: access });
    expect(who.body).toEqual(sim.oauth.user);

    const site = await call(sim, '/v2/token/introspect');
    expect(site.body.authorization).toMatchObject({
      grantType: 'client_credentials',
      authorizedTo: { userIds: [] },
    });
    expect(site.body).not.toHaveProperty('application');
    const refused = await call(sim, '/v2/token/authorized_by');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('missing_scopes');
    expect((await call(sim, '/v2/token/introspect', { token: 'nope' })).status).toBe(401);
  });

  it('refuses a wrong secret, a stale code, a redirect mismatch, unknown scopes and refresh tokens', async () => {
    const sim = await start();
    const codeOf = async (extra = '') =>
      new URL((await authorize(sim, 'cms:read', extra)).headers.get('location')!).searchParams.get('code')!;
    const exchange = (body: Record<string, string>) =>
      call(sim, '/oauth/access_token', { method: 'POST', token: null, body });
    const base = { client_id: app.clientId, client_secret: app.clientSecret };

    const wrong = await exchange({ ...base, client_secret: 'wrong', code: await codeOf() });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');

    const stale = await codeOf();
    clockOf(sim).advance(15 * 60_000);
    expect((await exchange({ ...base, code: stale })).body.error).toBe('invalid_grant');

    const withRedirect = await codeOf(`&redirect_uri=${encodeURIComponent(app.redirectUri)}`);
    expect((await exchange({ ...base, code: withRedirect })).body.error).toBe('invalid_grant');

    const badScope = await authorize(sim, 'cms:read ecommerce:write');
    expect(badScope.status).toBe(400);
    expect(badScope.body.error).toBe('invalid_scope');

    const refresh = await exchange({ ...base, code: await codeOf(), grant_type: 'refresh_token' });
    expect(refresh.body.error).toBe('unsupported_grant_type');
  });
});

describe('faults and request log', () => {
  it('injects statuses, Webflow 429s and dropped connections, and counts requests', async () => {
    const sim = await start();
    const path = `/v2/sites/${sim.siteId}/collections`;
    sim.faults.next({ status: 500, count: 1, path: '/v2/sites' });
    sim.faults.next({ kind: 'rate_limit', path: '/v2/sites' });
    expect((await call(sim, path)).status).toBe(500);
    const limited = await call(sim, path);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('too_many_requests');
    expect(limited.headers.get('retry-after')).toBe('60');
    expect((await call(sim, path)).status).toBe(200);
    sim.faults.next({ kind: 'drop' });
    await expect(call(sim, path)).rejects.toThrow();
    expect(sim.requestLog.count({ path, status: 200 })).toBe(1);
    expect(sim.requestLog.count({ path })).toBe(4);
    expect(sim.requestLog.byPath()[`GET ${path}`]).toBe(4);
  });
});
