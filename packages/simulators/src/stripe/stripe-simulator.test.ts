/**
 * Plain-fetch tests of what the official client does not show: error bodies and headers, keys and
 * modes, the rate limiter, params encoding, metadata rules, list cursors, idempotency details,
 * webhook deliveries and their signatures, event retention, faults and the in-app edit helpers.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_LIVE_TOKEN,
  type StartStripeSimulatorOptions,
  StripeApiError,
  type StripeSimulator,
  startStripeSimulator,
} from './index.ts';

type Json = Record<string, unknown> & {
  error?: Record<string, unknown> & { type: string; message: string; code?: string; param?: string };
  data?: Json[];
  has_more?: boolean;
  id?: string;
  metadata?: Record<string, string>;
};

const started: StripeSimulator[] = [];
const servers: Server[] = [];

async function start(options: StartStripeSimulatorOptions = {}): Promise<StripeSimulator> {
  const sim = await startStripeSimulator({
    rateLimit: false,
    idSeed: 9,
    clock: new ManualClock(),
    ...options,
  });
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
  sim: StripeSimulator,
  method: string,
  path: string,
  init: { form?: string; headers?: Record<string, string>; key?: string | null } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const key = init.key === undefined ? sim.token : init.key;
  if (key !== null) headers.authorization ??= `Bearer ${key}`;
  if (init.form !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers,
    ...(init.form !== undefined ? { body: init.form } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

const manual = (sim: StripeSimulator) => sim.clock as ManualClock;

describe('errors, keys and modes', () => {
  it('answers Stripe error bodies with Request-Id: no key, unknown key, unknown route, 404', async () => {
    const sim = await start();
    const none = await call(sim, 'GET', '/v1/customers', { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error?.type).toBe('invalid_request_error');
    expect(none.body.error?.message).toMatch(/^You did not provide an API key\./);
    const requestId = none.headers.get('request-id') as string;
    expect(requestId).toMatch(/^req_[A-Za-z0-9]{14}$/);
    expect(none.body.error?.request_log_url).toBe(
      `https://dashboard.stripe.com/test/logs/${requestId}?t=${Math.floor(sim.clock.now() / 1000)}`,
    );

    const unknown = await call(sim, 'GET', '/v1/customers', { key: 'sk_live_abcdefgh5678' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error?.message).toBe('Invalid API Key provided: sk_live_********5678');

    const route = await call(sim, 'GET', '/v1/charges_nope');
    expect(route.status).toBe(404);
    expect(route.body.error?.message).toMatch(/^Unrecognized request URL \(GET: \/v1\/charges_nope\)/);

    const missing = await call(sim, 'GET', '/v1/products/prod_nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'id',
      message: "No such product: 'prod_nope'",
      doc_url: 'https://stripe.com/docs/error-codes/resource-missing',
    });
    expect(missing.headers.get('stripe-version')).toBe('2026-10-28.endive');
  });

  it('takes the key as Basic auth user; test and live keys see separate objects', async () => {
    const sim = await start();
    const basic = `Basic ${Buffer.from(`${sim.token}:`).toString('base64')}`;
    const listed = await call(sim, 'GET', '/v1/customers?limit=1', { headers: { authorization: basic } });
    expect(listed.status).toBe(200);
    expect(listed.body.data?.[0]?.livemode).toBe(false);

    const live = await call(sim, 'GET', '/v1/customers', { key: DEFAULT_LIVE_TOKEN });
    expect(live.body.data).toEqual([]);
    const testCustomer = sim.seed?.customers[0] as string;
    const cross = await call(sim, 'GET', `/v1/customers/${testCustomer}`, { key: DEFAULT_LIVE_TOKEN });
    expect(cross.status).toBe(404);
    expect(cross.body.error?.message).toBe(
      `No such customer: '${testCustomer}'; a similar object exists in test mode, but a live mode key was used to make this request.`,
    );
    const created = await call(sim, 'POST', '/v1/customers', { key: DEFAULT_LIVE_TOKEN, form: 'name=Live' });
    expect(created.body.livemode).toBe(true);
    expect(created.body.error).toBeUndefined();
    const failedLive = await call(sim, 'GET', '/v1/customers/cus_x', { key: DEFAULT_LIVE_TOKEN });
    expect(failedLive.body.error?.request_log_url).toMatch(/^https:\/\/dashboard\.stripe\.com\/logs\/req_/);
  });

  it('refuses restricted keys what their permissions do not allow, naming the permission', async () => {
    const sim = await start({
      tokens: [{ token: 'rk_test_pricesonly00009999', permissions: { plan: 'write', product: 'read' } }],
    });
    const key = 'rk_test_pricesonly00009999';
    expect((await call(sim, 'GET', '/v1/prices', { key })).status).toBe(200);
    expect((await call(sim, 'GET', '/v1/products', { key })).status).toBe(200);
    const write = await call(sim, 'POST', '/v1/products', { key, form: 'name=X' });
    expect(write.status).toBe(403);
    expect(write.body.error?.message).toBe(
      `The provided key 'rk_test_${'*'.repeat(14)}9999' does not have the required permissions for this endpoint on account '${sim.state.accountId}'. Having the 'rak_product_write' permission would allow this request to continue.`,
    );
    const none = await call(sim, 'GET', '/v1/events', { key });
    expect(none.status).toBe(403);
    expect(none.body.error?.message).toContain("'rak_event_read'");
  });
});

describe('account', () => {
  it("answers the key's own account; a restricted key needs account read", async () => {
    const sim = await start({
      accountId: 'acct_1Own',
      tokens: [
        { token: 'rk_test_accountread', permissions: { account: 'read' } },
        { token: 'rk_test_customersonly', permissions: { customer: 'write' } },
      ],
    });
    const own = await call(sim, 'GET', '/v1/account');
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: 'acct_1Own', object: 'account', default_currency: 'usd' });
    expect((await call(sim, 'GET', '/v1/account', { key: 'rk_test_accountread' })).status).toBe(200);
    const refused = await call(sim, 'GET', '/v1/account', { key: 'rk_test_customersonly' });
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toMatch(/rak_account_read/);
  });
});

describe('rate limits', () => {
  it('allows 25 reads and 25 writes per second in test mode and 100 in live mode; 429 with Stripe-Should-Retry', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock, rateLimit: {}, seed: false });
    for (let i = 0; i < 25; i++) expect((await call(sim, 'GET', '/v1/customers')).status).toBe(200);
    const refused = await call(sim, 'GET', '/v1/customers');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('stripe-should-retry')).toBe('true');
    expect(refused.headers.get('request-id')).toMatch(/^req_/);
    expect(refused.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'rate_limit',
      doc_url: 'https://stripe.com/docs/error-codes/rate-limit',
    });
    // Writes count separately; live mode has its own, larger budget.
    expect((await call(sim, 'POST', '/v1/customers', { form: 'name=A' })).status).toBe(200);
    for (let i = 0; i < 100; i++) {
      expect((await call(sim, 'GET', '/v1/customers', { key: DEFAULT_LIVE_TOKEN })).status).toBe(200);
    }
    expect((await call(sim, 'GET', '/v1/customers', { key: DEFAULT_LIVE_TOKEN })).status).toBe(429);
    // A rolling second later the test budget is back; refused requests were not counted.
    clock.advance(1000);
    expect((await call(sim, 'GET', '/v1/customers')).status).toBe(200);
  });
});

describe('params, metadata and lists', () => {
  it('reads nested form params (metadata[k], address[...], expand[]), refuses unknown ones and JSON bodies', async () => {
    const sim = await start();
    const product = await call(sim, 'POST', '/v1/products', { form: 'name=Widget&metadata[color]=blue' });
    const price = await call(sim, 'POST', '/v1/prices', {
      form: `product=${product.body.id}&currency=USD&unit_amount=500&expand[]=product&recurring[interval]=year`,
    });
    expect(price.status).toBe(200);
    expect(price.body.currency).toBe('usd');
    expect((price.body.product as Json).metadata).toEqual({ color: 'blue' });
    expect(price.body.recurring).toMatchObject({ interval: 'year', interval_count: 1 });

    const listed = await call(sim, 'GET', '/v1/prices?limit=2&expand[0]=data.product');
    expect(typeof (listed.body.data?.[0]?.product as Json | undefined)?.name).toBe('string');
    const badExpand = await call(sim, 'GET', `/v1/prices/${price.body.id}?expand[]=currency`);
    expect(badExpand.status).toBe(400);
    expect(badExpand.body.error?.message).toBe('This property cannot be expanded (currency).');

    const unknown = await call(sim, 'POST', '/v1/customers', { form: 'nickname=x' });
    expect(unknown.body.error).toMatchObject({
      code: 'parameter_unknown',
      param: 'nickname',
      message: 'Received unknown parameter: nickname',
    });
    const badInt = await call(sim, 'POST', '/v1/prices', {
      form: `product=${product.body.id}&currency=usd&unit_amount=12.5`,
    });
    expect(badInt.body.error).toMatchObject({ param: 'unit_amount', message: 'Invalid integer: 12.5' });
    const json = await call(sim, 'POST', '/v1/customers', {
      form: JSON.stringify({ name: 'x' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(json.status).toBe(400);
  });

  it('applies the metadata rules: 50 keys, 40-character keys, 500-character values, "" removes', async () => {
    const sim = await start({ seed: false });
    const c = await call(sim, 'POST', '/v1/customers', { form: 'metadata[a]=1&metadata[b]=2' });
    const id = c.body.id as string;
    const removed = await call(sim, 'POST', `/v1/customers/${id}`, { form: 'metadata[a]=&metadata[c]=3' });
    expect(removed.body.metadata).toEqual({ b: '2', c: '3' });
    const cleared = await call(sim, 'POST', `/v1/customers/${id}`, { form: 'metadata=' });
    expect(cleared.body.metadata).toEqual({});

    const fifty = Array.from({ length: 50 }, (_, i) => `metadata[k${i}]=v`).join('&');
    expect((await call(sim, 'POST', `/v1/customers/${id}`, { form: fifty })).status).toBe(200);
    const fiftyOne = await call(sim, 'POST', `/v1/customers/${id}`, { form: 'metadata[one_more]=v' });
    expect(fiftyOne.status).toBe(400);
    expect(fiftyOne.body.error?.param).toBe('metadata');

    const longKey = await call(sim, 'POST', '/v1/customers', { form: `metadata[${'k'.repeat(41)}]=v` });
    expect(longKey.status).toBe(400);
    expect((await call(sim, 'POST', '/v1/customers', { form: `metadata[${'k'.repeat(40)}]=v` })).status).toBe(
      200,
    );
    const longValue = await call(sim, 'POST', '/v1/customers', { form: `metadata[k]=${'v'.repeat(501)}` });
    expect(longValue.status).toBe(400);
    expect(longValue.body.error?.param).toBe('metadata[k]');
    expect(
      (await call(sim, 'POST', '/v1/customers', { form: `metadata[k]=${'v'.repeat(500)}` })).status,
    ).toBe(200);
  });

  it('pages with limit (1..100), starting_after and ending_before', async () => {
    const sim = await start();
    const page1 = await call(sim, 'GET', '/v1/customers?limit=10');
    const page2 = await call(sim, 'GET', `/v1/customers?limit=10&starting_after=${page1.body.data?.[9]?.id}`);
    expect(page2.body.has_more).toBe(true);
    const back = await call(sim, 'GET', `/v1/customers?limit=3&ending_before=${page2.body.data?.[0]?.id}`);
    expect(back.body.data?.map((c) => c.id)).toEqual(page1.body.data?.slice(7).map((c) => c.id));
    expect(back.body.has_more).toBe(true);
    const page3 = await call(sim, 'GET', `/v1/customers?limit=10&starting_after=${page2.body.data?.[9]?.id}`);
    expect(page3.body.data).toHaveLength(5);
    expect(page3.body.has_more).toBe(false);

    expect((await call(sim, 'GET', '/v1/customers?limit=0')).status).toBe(400);
    expect((await call(sim, 'GET', '/v1/customers?limit=101')).body.error?.param).toBe('limit');
    expect((await call(sim, 'GET', '/v1/customers?limit=100')).body.data).toHaveLength(25);
    const badCursor = await call(sim, 'GET', '/v1/customers?starting_after=cus_gone');
    expect(badCursor.status).toBe(404);
    expect(badCursor.body.error?.param).toBe('starting_after');
    const both = await call(
      sim,
      'GET',
      `/v1/customers?starting_after=${page1.body.data?.[0]?.id}&ending_before=x`,
    );
    expect(both.status).toBe(400);
  });

  it('seeds a realistic account: 25 customers, products with monthly and yearly prices, one archived', async () => {
    const sim = await start();
    const customers = await call(sim, 'GET', '/v1/customers?limit=100');
    const one = customers.body.data?.find((c) => c.id === sim.seed?.customers[0]) as Json;
    expect(one).toMatchObject({
      email: 'ada.moreau@acme-analytics.com',
      name: 'Ada Moreau',
      metadata: { crm_id: 'crm-1000' },
    });
    expect((one.address as Json).city).toBe('Boston');
    const products = await call(sim, 'GET', '/v1/products?limit=100');
    expect(products.body.data?.map((p) => p.name).sort()).toEqual([
      'Lockstep Business',
      'Lockstep Starter',
      'Lockstep Team',
      'Onboarding',
    ]);
    const active = await call(sim, 'GET', '/v1/prices?limit=100');
    const inactive = await call(sim, 'GET', '/v1/prices?limit=100&active=false');
    expect(active.body.data).toHaveLength(7);
    expect(inactive.body.data?.map((p) => p.id)).toEqual([sim.seed?.prices[0]]);
    const subs = await call(sim, 'GET', '/v1/subscriptions?limit=100');
    expect(subs.body.data).toHaveLength(10);
  });
});

describe('idempotency', () => {
  it('replays with Idempotent-Replayed and Original-Request; other endpoint is refused; validation errors are not saved', async () => {
    const sim = await start({ seed: false });
    const headers = { 'idempotency-key': 'k-1' };
    const first = await call(sim, 'POST', '/v1/customers', { form: 'name=A&metadata[x]=1', headers });
    const replay = await call(sim, 'POST', '/v1/customers', { form: 'metadata[x]=1&name=A', headers });
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('original-request')).toBe(first.headers.get('request-id'));
    expect(replay.headers.get('idempotency-key')).toBe('k-1');

    const otherPath = await call(sim, 'POST', '/v1/products', { form: 'name=A&metadata[x]=1', headers });
    expect(otherPath.status).toBe(400);
    expect(otherPath.body.error?.type).toBe('idempotency_error');
    expect(otherPath.body.error?.message).toMatch(
      /same endpoint they were first used for \('\/v1\/customers' vs '\/v1\/products'\)/,
    );

    const bad = await call(sim, 'POST', '/v1/customers', {
      form: 'email=nope',
      headers: { 'idempotency-key': 'k-2' },
    });
    expect(bad.status).toBe(400);
    const fixed = await call(sim, 'POST', '/v1/customers', {
      form: 'email=ok@example.com',
      headers: { 'idempotency-key': 'k-2' },
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.email).toBe('ok@example.com');

    const tooLong = await call(sim, 'POST', '/v1/customers', {
      form: 'name=A',
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expect(tooLong.status).toBe(400);
  });
});

type Received = { body: string; headers: IncomingHttpHeaders };

async function receiver(
  status = 200,
): Promise<{ url: string; received: Received[]; setStatus: (s: number) => void }> {
  const received: Received[] = [];
  let answer = status;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(answer).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    setStatus: (s) => {
      answer = s;
    },
  };
}

describe('webhooks and events', () => {
  it('signs deliveries as t=<seconds>,v1=<hex HMAC-SHA256 of "t.body">, per mode and enabled events', async () => {
    const sim = await start({ seed: false });
    const hook = await receiver();
    const { secret } = sim.addWebhookEndpoint(hook.url, ['product.created']);
    const liveHook = await receiver();
    sim.addWebhookEndpoint(liveHook.url, ['*'], { livemode: true });
    manual(sim).advance(5000);
    await call(sim, 'POST', '/v1/products', { form: 'name=Signed' });
    await call(sim, 'POST', '/v1/customers', { form: 'name=Ignored' });
    await sim.flushWebhooks();
    expect(hook.received).toHaveLength(1);
    expect(liveHook.received).toHaveLength(0);
    const r = hook.received[0] as Received;
    const t = Math.floor(sim.clock.now() / 1000);
    const expected = createHmac('sha256', secret).update(`${t}.${r.body}`).digest('hex');
    expect(r.headers['stripe-signature']).toBe(`t=${t},v1=${expected}`);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const event = JSON.parse(r.body) as Json;
    expect(event).toMatchObject({
      object: 'event',
      type: 'product.created',
      livemode: false,
      pending_webhooks: 1,
    });
    expect(((event.data as unknown as Json).object as Json).name).toBe('Signed');
    const stored = await call(sim, 'GET', `/v1/events/${event.id}`);
    expect(stored.body.pending_webhooks).toBe(0);
  });

  it('records failed deliveries and retries them; disabled endpoints get nothing', async () => {
    const sim = await start({ seed: false });
    const hook = await receiver(500);
    const { id } = sim.addWebhookEndpoint(hook.url);
    sim.create('customer', { name: 'One' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.map((d) => d.status)).toEqual([500]);
    const event = await call(sim, 'GET', `/v1/events?delivery_success=false`);
    expect(event.body.data).toHaveLength(1);
    hook.setStatus(200);
    expect(sim.webhooks.retryFailed()).toBe(1);
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.map((d) => [d.status, d.attempt])).toEqual([
      [500, 1],
      [200, 2],
    ]);
    expect((await call(sim, 'GET', `/v1/events?delivery_success=true`)).body.data).toHaveLength(1);

    await call(sim, 'POST', `/v1/webhook_endpoints/${id}`, { form: 'disabled=true' });
    sim.create('customer', { name: 'Two' });
    await sim.flushWebhooks();
    expect(hook.received).toHaveLength(2);
  });

  it('keeps events 30 days; Dashboard edits make events with a null request id and follow the API rules', async () => {
    const sim = await start({ seed: false });
    const c = sim.create('customer', { email: 'dash@example.com', metadata: { a: '1' } });
    sim.update('customer', c.id as string, { name: 'Dash' });
    expect(() => sim.update('customer', c.id as string, { metadata: { ['x'.repeat(41)]: 'v' } })).toThrow(
      StripeApiError,
    );
    const events = await call(sim, 'GET', '/v1/events');
    expect(events.body.data?.map((e) => e.type)).toEqual(['customer.updated', 'customer.created']);
    expect(events.body.data?.[0]?.request).toEqual({ id: null, idempotency_key: null });
    const eventId = events.body.data?.[0]?.id as string;

    manual(sim).advance(30 * 86_400_000 + 1000);
    expect((await call(sim, 'GET', '/v1/events')).body.data).toEqual([]);
    expect((await call(sim, 'GET', `/v1/events/${eventId}`)).status).toBe(404);
  });

  it('validates webhook endpoints: url and enabled_events required, known event types only', async () => {
    const sim = await start({ seed: false });
    const missing = await call(sim, 'POST', '/v1/webhook_endpoints', { form: 'url=https://example.com/h' });
    expect(missing.body.error).toMatchObject({ code: 'parameter_missing', param: 'enabled_events' });
    const bogus = await call(sim, 'POST', '/v1/webhook_endpoints', {
      form: 'url=https://example.com/h&enabled_events[]=customer.exploded',
    });
    expect(bogus.body.error?.param).toBe('enabled_events[0]');
    const ok = await call(sim, 'POST', '/v1/webhook_endpoints', {
      form: 'url=https://example.com/h&enabled_events[]=*',
    });
    expect(ok.body.secret).toMatch(/^whsec_/);
    const read = await call(sim, 'GET', `/v1/webhook_endpoints/${ok.body.id}`);
    expect(read.body.secret).toBeUndefined();
    expect((await call(sim, 'DELETE', `/v1/webhook_endpoints/${ok.body.id}`)).body).toMatchObject({
      deleted: true,
    });
  });
});

describe('billing rules', () => {
  it('refuses one-time prices in subscription Checkout and archived default prices; coupons round-trip', async () => {
    const sim = await start();
    const oneTime = sim.seed?.prices[6] as string;
    const checkout = await call(sim, 'POST', '/v1/checkout/sessions', {
      form: `mode=subscription&success_url=https://x.example/ok&line_items[0][price]=${oneTime}&line_items[0][quantity]=1`,
    });
    expect(checkout.status).toBe(400);
    expect(checkout.body.error?.message).toBe(
      'You must provide at least one recurring price in `subscription` mode when using prices.',
    );
    const noMode = await call(sim, 'POST', '/v1/checkout/sessions', {
      form: 'success_url=https://x.example/ok',
    });
    expect(noMode.body.error?.param).toBe('mode');

    const product = sim.seed?.products[1] as string;
    const price = sim.seed?.prices[2] as string;
    await call(sim, 'POST', `/v1/products/${product}`, { form: `default_price=${price}` });
    const archive = await call(sim, 'POST', `/v1/prices/${price}`, { form: 'active=false' });
    expect(archive.body.error?.message).toBe(
      'This price cannot be archived because it is the default price of its product.',
    );

    const coupon = await call(sim, 'POST', '/v1/coupons', { form: 'id=SUMMER&percent_off=15&duration=once' });
    expect(coupon.body).toMatchObject({ id: 'SUMMER', percent_off: 15, duration: 'once', valid: true });
    const dup = await call(sim, 'POST', '/v1/coupons', { form: 'id=SUMMER&percent_off=15' });
    expect(dup.body.error?.code).toBe('resource_already_exists');
    expect((await call(sim, 'DELETE', '/v1/coupons/SUMMER')).body).toEqual({
      id: 'SUMMER',
      object: 'coupon',
      deleted: true,
    });
  });

  it('a deleted customer cancels its subscriptions (customer.subscription.deleted)', async () => {
    const sim = await start();
    const subId = sim.seed?.subscriptions[0] as string;
    const sub = await call(sim, 'GET', `/v1/subscriptions/${subId}`);
    await call(sim, 'DELETE', `/v1/customers/${sub.body.customer}`);
    const after = await call(sim, 'GET', `/v1/subscriptions/${subId}`);
    expect(after.body.status).toBe('canceled');
    const events = await call(sim, 'GET', '/v1/events?type=customer.subscription.deleted');
    expect(events.body.data?.[0]?.data).toMatchObject({ object: { id: subId, status: 'canceled' } });
  });
});

describe('faults and request log', () => {
  it('applies queued faults before the simulator and counts requests', async () => {
    const sim = await start({ seed: false });
    sim.faults.next({ status: 500, path: '/v1/customers', count: 2 });
    expect((await call(sim, 'GET', '/v1/customers')).status).toBe(500);
    expect((await call(sim, 'GET', '/v1/customers')).status).toBe(500);
    expect((await call(sim, 'GET', '/v1/customers')).status).toBe(200);
    sim.faults.next({ kind: 'rate_limit' });
    const limited = await call(sim, 'GET', '/v1/products');
    expect(limited.status).toBe(429);
    expect(limited.body.error?.code).toBe('rate_limit');
    expect(limited.headers.get('stripe-should-retry')).toBe('true');
    sim.faults.next({ kind: 'drop' });
    await expect(
      fetch(`${sim.url}/v1/customers`, { headers: { authorization: `Bearer ${sim.token}` } }),
    ).rejects.toThrow();
    expect(sim.requestLog.count({ path: '/v1/customers' })).toBe(4);
    expect(sim.requestLog.count({ status: 500 })).toBe(2);
    expect(sim.requestLog.byPath()['GET /v1/products']).toBe(1);
  });
});

describe('Connect (Standard accounts, OAuth)', () => {
  const redirect = 'https://platform.example/oauth/stripe/callback';

  async function connectAccount(sim: StripeSimulator, scope = 'read_write') {
    const auth = await fetch(
      `${sim.url}/oauth/authorize?response_type=code&client_id=${sim.connect.clientId}&scope=${scope}&state=s1`,
      { redirect: 'manual' },
    );
    const code = new URL(auth.headers.get('location') as string).searchParams.get('code') as string;
    return call(sim, 'POST', '/oauth/token', { form: `grant_type=authorization_code&code=${code}` });
  }

  it('authorize refuses an unknown client, a scope or redirect outside the platform and reports a denial', async () => {
    const sim = await start({ connect: { redirectUris: [redirect] } });
    const at = (q: string) => fetch(`${sim.url}/oauth/authorize?${q}`, { redirect: 'manual' });
    const unknown = await at('response_type=code&client_id=ca_nope&scope=read_write');
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as Json).error).toBe('invalid_client');
    const scope = await at(`response_type=code&client_id=${sim.connect.clientId}&scope=admin`);
    expect(((await scope.json()) as Json).error).toBe('invalid_scope');
    const elsewhere = await at(
      `response_type=code&client_id=${sim.connect.clientId}&scope=read_write&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    );
    expect(((await elsewhere.json()) as Json).error).toBe('invalid_redirect_uri');
    sim.connect.denyNext = true;
    const denied = await at(`response_type=code&client_id=${sim.connect.clientId}&scope=read_write&state=z`);
    const back = new URL(denied.headers.get('location') as string);
    expect(back.origin + back.pathname).toBe(redirect);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'access_denied', state: 'z' });
    expect(back.searchParams.has('code')).toBe(false);
  });

  it('the token call needs the platform secret key; codes expire after 5 minutes; refresh tokens mint new access tokens', async () => {
    const sim = await start({
      connect: { redirectUris: [redirect] },
      tokens: [{ token: 'rk_test_platformRestricted', permissions: { customer: 'write' } }],
    });
    const authorizeCode = async () => {
      const r = await fetch(
        `${sim.url}/oauth/authorize?response_type=code&client_id=${sim.connect.clientId}&scope=read_write`,
        { redirect: 'manual' },
      );
      return new URL(r.headers.get('location') as string).searchParams.get('code') as string;
    };
    const form = (code: string) => `grant_type=authorization_code&code=${code}`;
    const code = await authorizeCode();
    const restricted = await call(sim, 'POST', '/oauth/token', {
      form: form(code),
      key: 'rk_test_platformRestricted',
    });
    expect(restricted.status).toBe(401);
    expect(restricted.body.error).toBe('invalid_client');
    const byParam = await call(sim, 'POST', '/oauth/token', {
      form: `${form(code)}&client_secret=${sim.token}`,
      key: null,
    });
    expect(byParam.status).toBe(200);
    expect(sim.connect.connected.has(byParam.body.stripe_user_id as string)).toBe(true);

    const late = await authorizeCode();
    manual(sim).advance(5 * 60_000);
    const expired = await call(sim, 'POST', '/oauth/token', { form: form(late) });
    expect(expired.body).toEqual({
      error: 'invalid_grant',
      error_description: `Authorization code expired: ${late}`,
    });

    const refreshed = await call(sim, 'POST', '/oauth/token', {
      form: `grant_type=refresh_token&refresh_token=${byParam.body.refresh_token}`,
    });
    expect(refreshed.body).toMatchObject({
      stripe_user_id: byParam.body.stripe_user_id,
      scope: 'read_write',
    });
    expect(refreshed.body.access_token).not.toBe(byParam.body.access_token);
    const unsupported = await call(sim, 'POST', '/oauth/token', { form: 'grant_type=client_credentials' });
    expect(unsupported.body.error).toBe('unsupported_grant_type');

    // A live platform key makes live-mode credentials.
    const live = await call(sim, 'POST', '/oauth/token', {
      form: form(await authorizeCode()),
      key: DEFAULT_LIVE_TOKEN,
    });
    expect(live.body).toMatchObject({ livemode: true });
    expect(live.body.access_token).toMatch(/^sk_live_/);
  });

  it('Stripe-Account reaches only connected accounts, each with its own objects, events and idempotency keys', async () => {
    const sim = await start({
      connect: { redirectUris: [redirect], accounts: [{ id: 'acct_1Shop', seed: false }] },
    });
    const stranger = sim.addConnectedAccount({ id: 'acct_1Stranger', seed: false });
    stranger.create('customer', { email: 'stranger@example.com' });
    const token = await connectAccount(sim);
    expect(token.body.stripe_user_id).toBe('acct_1Shop');

    const onShop = { 'stripe-account': 'acct_1Shop', 'idempotency-key': 'same-key' };
    const made = await call(sim, 'POST', '/v1/customers', {
      form: 'email=a%40shop.example',
      headers: onShop,
    });
    expect(made.status).toBe(200);
    // The same idempotency key on the platform is another request.
    const platform = await call(sim, 'POST', '/v1/customers', {
      form: 'email=b%40platform.example',
      headers: { 'idempotency-key': 'same-key' },
    });
    expect(platform.status).toBe(200);
    expect(platform.body.id).not.toBe(made.body.id);
    const events = await call(sim, 'GET', '/v1/events?type=customer.created', {
      headers: { 'stripe-account': 'acct_1Shop' },
    });
    expect(events.body.data?.map((e) => (e.data as unknown as { object: Json }).object.id)).toEqual([
      made.body.id,
    ]);
    expect(
      (await call(sim, 'GET', '/v1/account', { headers: { 'stripe-account': 'acct_1Shop' } })).body.id,
    ).toBe('acct_1Shop');

    // Never connected: refused like an account the platform has no access to.
    const refused = await call(sim, 'GET', '/v1/customers', {
      headers: { 'stripe-account': 'acct_1Stranger' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'account_invalid',
      message: `The provided key 'sk_test_${'*'.repeat(sim.token.length - 12)}${sim.token.slice(-4)}' does not have access to account 'acct_1Stranger' (or that account does not exist). Application access may have been revoked.`,
    });
    // A connected account's own key cannot reach another account.
    const legacy = await call(sim, 'GET', '/v1/customers', {
      key: token.body.access_token as string,
      headers: { 'stripe-account': 'acct_1Stranger' },
    });
    expect(legacy.status).toBe(403);

    // The user disconnects the platform in their Dashboard.
    sim.connect.revoke('acct_1Shop');
    expect(
      (await call(sim, 'GET', '/v1/customers', { headers: { 'stripe-account': 'acct_1Shop' } })).status,
    ).toBe(403);
    const again = await call(sim, 'POST', '/oauth/deauthorize', {
      form: `client_id=${sim.connect.clientId}&stripe_user_id=acct_1Shop`,
    });
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('invalid_client');
  });
});
