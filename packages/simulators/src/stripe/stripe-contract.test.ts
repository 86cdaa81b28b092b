/**
 * Contract test: Stripe's official Node client (stripe 23.1.0) against the simulator, through the
 * calls a sync makes. If the client cannot use the simulator, the simulator is wrong.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import { type StartStripeSimulatorOptions, type StripeSimulator, startStripeSimulator } from './index.ts';

const started: StripeSimulator[] = [];
const servers: Server[] = [];

async function start(
  options: StartStripeSimulatorOptions = {},
): Promise<{ sim: StripeSimulator; stripe: Stripe }> {
  const sim = await startStripeSimulator({
    rateLimit: false,
    idSeed: 5,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  return { sim, stripe: client(sim, sim.token) };
}

function client(sim: StripeSimulator, key: string): Stripe {
  // No retries: errors (429 included) must reach the caller as the client's own errors.
  return new Stripe(key, { host: '127.0.0.1', port: sim.port, protocol: 'http', maxNetworkRetries: 0 });
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
  while (servers.length) {
    const s = servers.pop();
    await new Promise<void>((resolve) => s?.close(() => resolve()));
  }
});

async function failure(p: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await p;
  } catch (err) {
    return err as Stripe.errors.StripeError;
  }
  throw new Error('expected the call to fail');
}

type Received = { body: string; headers: IncomingHttpHeaders };

async function receiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(200).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stripe`, received };
}

describe('stripe-node against the simulator', () => {
  it('customers: auto-pagination reads every customer once, newest first; create/retrieve/update/del', async () => {
    const { sim, stripe } = await start();
    const all = await stripe.customers.list({ limit: 10 }).autoPagingToArray({ limit: 1000 });
    expect(all).toHaveLength(25);
    expect(new Set(all.map((c) => c.id)).size).toBe(25);
    expect(new Set(all.map((c) => c.id))).toEqual(new Set(sim.seed?.customers));
    const created = all.map((c) => c.created);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    // 3 pages of at most 10.
    expect(sim.requestLog.count({ method: 'GET', path: '/v1/customers' })).toBe(3);

    const first = await stripe.customers.list({ limit: 2 });
    expect(first.object).toBe('list');
    expect(first.has_more).toBe(true);
    expect(first.url).toBe('/v1/customers');
    expect(first.data[0]?.id).toMatch(/^cus_/);

    const c = await stripe.customers.create({
      email: 'ops@lockstep.example',
      name: 'Ops Team',
      phone: '+1 555 0199',
      description: 'Created by the contract test',
      address: { line1: '1 Main St', city: 'Boston', country: 'US' },
      metadata: { crm_id: 'crm-9', tier: 'gold' },
    });
    expect(c.object).toBe('customer');
    expect(c.livemode).toBe(false);
    expect(c.email).toBe('ops@lockstep.example');
    expect(c.address).toEqual({
      line1: '1 Main St',
      line2: null,
      city: 'Boston',
      state: null,
      postal_code: null,
      country: 'US',
    });
    expect(c.metadata).toEqual({ crm_id: 'crm-9', tier: 'gold' });
    expect(c.created).toBe(Math.floor(sim.clock.now() / 1000));
    expect(typeof c.lastResponse.requestId).toBe('string');

    const updated = await stripe.customers.update(c.id, {
      name: 'Ops',
      metadata: { tier: '', region: 'emea' },
    });
    expect(updated.name).toBe('Ops');
    expect(updated.metadata).toEqual({ crm_id: 'crm-9', region: 'emea' });
    const read = await stripe.customers.retrieve(c.id);
    expect(read.deleted).toBeUndefined();
    expect((read as Stripe.Customer).metadata).toEqual({ crm_id: 'crm-9', region: 'emea' });

    const byEmail = await stripe.customers.list({ email: 'ops@lockstep.example' });
    expect(byEmail.data.map((x) => x.id)).toEqual([c.id]);

    const deleted = await stripe.customers.del(c.id);
    expect(deleted).toMatchObject({ id: c.id, object: 'customer', deleted: true });
    const afterDelete = await stripe.customers.retrieve(c.id);
    expect(afterDelete.deleted).toBe(true);
    const again = await stripe.customers.list({ limit: 100 });
    expect(again.data.map((x) => x.id)).not.toContain(c.id);
  });

  it('surfaces 404, validation 400, 401, 403 (restricted key) and 429 as the client errors', async () => {
    const clock = new ManualClock();
    const { sim, stripe } = await start({
      clock,
      rateLimit: { testPerSecond: 3 },
      tokens: [{ token: 'rk_test_readonlycustomers0001', permissions: { customer: 'read' } }],
    });

    const missing = await failure(stripe.customers.retrieve('cus_doesnotexist'));
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing.statusCode).toBe(404);
    expect(missing.code).toBe('resource_missing');
    expect(missing.param).toBe('id');
    expect(missing.message).toBe("No such customer: 'cus_doesnotexist'");
    expect(missing.requestId).toMatch(/^req_/);

    const invalid = await failure(stripe.customers.create({ email: 'not-an-email' }));
    expect(invalid).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.param).toBe('email');
    expect(invalid.code).toBe('email_invalid');

    clock.advance(1000);
    const badKey = await failure(client(sim, 'sk_test_wrongwrongwrong1234').customers.list());
    expect(badKey).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(badKey.statusCode).toBe(401);
    expect(badKey.message).toBe(`Invalid API Key provided: sk_test_${'*'.repeat(15)}1234`);

    const restricted = client(sim, 'rk_test_readonlycustomers0001');
    const list = await restricted.customers.list({ limit: 1 });
    expect(list.data).toHaveLength(1);
    const denied = await failure(restricted.customers.create({ name: 'Nope' }));
    expect(denied).toBeInstanceOf(Stripe.errors.StripePermissionError);
    expect(denied.statusCode).toBe(403);
    expect(denied.message).toContain(
      "Having the 'rak_customer_write' permission would allow this request to continue.",
    );

    clock.advance(1000);
    await stripe.customers.list({ limit: 1 });
    await stripe.customers.list({ limit: 1 });
    await stripe.customers.list({ limit: 1 });
    const limited = await failure(stripe.customers.list({ limit: 1 }));
    expect(limited).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect(limited.statusCode).toBe(429);
    expect(limited.code).toBe('rate_limit');
    // Writes have their own budget.
    const write = await stripe.customers.create({ name: 'Still allowed' });
    expect(write.name).toBe('Still allowed');
    clock.advance(1000);
    expect((await stripe.customers.list({ limit: 1 })).data).toHaveLength(1);
  });

  it('products and prices: create, amounts immutable, archive with active=false, no delete with prices', async () => {
    const { stripe } = await start();
    const product = await stripe.products.create({
      name: 'Sync Pro',
      description: 'Two-way',
      metadata: { sku: 'SP-1' },
    });
    expect(product).toMatchObject({
      object: 'product',
      name: 'Sync Pro',
      active: true,
      metadata: { sku: 'SP-1' },
    });
    expect(product.id).toMatch(/^prod_/);

    const price = await stripe.prices.create({
      product: product.id,
      currency: 'eur',
      unit_amount: 1999,
      recurring: { interval: 'month' },
      metadata: { plan: 'pro' },
    });
    expect(price.id).toMatch(/^price_/);
    expect(price).toMatchObject({
      unit_amount: 1999,
      currency: 'eur',
      type: 'recurring',
      active: true,
      product: product.id,
    });
    expect(price.recurring).toMatchObject({ interval: 'month', interval_count: 1, usage_type: 'licensed' });

    const expanded = await stripe.prices.retrieve(price.id, { expand: ['product'] });
    expect((expanded.product as Stripe.Product).name).toBe('Sync Pro');

    const immutable = await failure(
      stripe.prices.update(price.id, { unit_amount: 2999 } as unknown as Stripe.PriceUpdateParams),
    );
    expect(immutable.statusCode).toBe(400);
    expect(immutable.code).toBe('parameter_unknown');
    expect(immutable.param).toBe('unit_amount');

    const archived = await stripe.prices.update(price.id, { active: false });
    expect(archived.active).toBe(false);
    expect(archived.unit_amount).toBe(1999);
    const active = await stripe.prices.list({ product: product.id });
    expect(active.data).toHaveLength(0);
    const inactive = await stripe.prices.list({ product: product.id, active: false });
    expect(inactive.data.map((p) => p.id)).toEqual([price.id]);

    const noDelete = await failure(stripe.products.del(product.id));
    expect(noDelete.statusCode).toBe(400);
    expect(noDelete.message).toBe(
      'This product cannot be deleted because it has one or more user-created prices.',
    );
    const archivedProduct = await stripe.products.update(product.id, { active: false });
    expect(archivedProduct.active).toBe(false);

    const lonely = await stripe.products.create({ name: 'Temporary' });
    expect(await stripe.products.del(lonely.id)).toMatchObject({ id: lonely.id, deleted: true });
    expect((await failure(stripe.products.retrieve(lonely.id))).statusCode).toBe(404);

    const missingName = await failure(stripe.products.create({} as Stripe.ProductCreateParams));
    expect(missingName.code).toBe('parameter_missing');
    expect(missingName.param).toBe('name');

    const all = await stripe.products.list({ limit: 3 }).autoPagingToArray({ limit: 100 });
    expect(all.map((p) => p.id)).toContain(product.id);
    expect(all).toHaveLength(5); // 4 seeded + Sync Pro
  });

  it('events: every change is an event with previous_attributes, listed by type with paging', async () => {
    const { sim, stripe } = await start();
    const since = Math.floor(sim.clock.now() / 1000);
    const c = await stripe.customers.create({ email: 'e@example.com', metadata: { a: '1' } });
    (sim.clock as ManualClock).advance(2000);
    await stripe.customers.update(c.id, { name: 'Eve', metadata: { a: '', b: '2' } });
    await stripe.customers.del(c.id);
    sim.update('customer', sim.seed?.customers[0] as string, { phone: '+44 20 0000 0000' });

    const updated = await stripe.events.list({ type: 'customer.updated' });
    expect(updated.data).toHaveLength(2);
    const apiUpdate = updated.data.find((e) => (e.data.object as Stripe.Customer).id === c.id);
    expect(apiUpdate?.data.previous_attributes).toEqual({ name: null, metadata: { a: '1', b: null } });
    expect((apiUpdate?.data.object as Stripe.Customer | undefined)?.name).toBe('Eve');
    expect(apiUpdate?.request?.id).toMatch(/^req_/);
    const dashboardUpdate = updated.data.find((e) => e !== apiUpdate);
    expect(dashboardUpdate?.request?.id).toBeNull();

    const lifecycle = await stripe.events
      .list({ types: ['customer.created', 'customer.deleted'], created: { gte: since }, limit: 1 })
      .autoPagingToArray({ limit: 100 });
    expect(lifecycle.map((e) => e.type)).toEqual(['customer.deleted', 'customer.created']);
    expect(lifecycle.every((e) => e.id.startsWith('evt_') && e.object === 'event')).toBe(true);

    const wildcard = await stripe.events.list({
      type: 'customer.*',
      created: { gte: lifecycle[1]?.created as number },
    });
    expect(wildcard.data.map((e) => e.type).sort()).toEqual([
      'customer.created',
      'customer.deleted',
      'customer.updated',
      'customer.updated',
    ]);
    const one = await stripe.events.retrieve(lifecycle[0]?.id as string);
    expect(one.type).toBe('customer.deleted');
  });

  it('webhooks: endpoints created through the API get signed deliveries that constructEvent accepts', async () => {
    const { sim, stripe } = await start();
    const { url, received } = await receiver();
    const endpoint = await stripe.webhookEndpoints.create({
      url,
      enabled_events: ['customer.created', 'customer.updated'],
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(endpoint.status).toBe('enabled');
    const listed = await stripe.webhookEndpoints.list();
    expect(listed.data[0]?.id).toBe(endpoint.id);
    expect(listed.data[0]?.secret).toBeUndefined();

    const c = await stripe.customers.create({ email: 'hook@example.com' });
    await stripe.customers.update(c.id, { name: 'Hook' });
    await stripe.products.create({ name: 'Not subscribed' });
    await sim.flushWebhooks();
    expect(received).toHaveLength(2);

    // receivedAt is in milliseconds: the simulator's clock signs, so the receiver reads the same clock.
    const receivedAt = sim.clock.now();
    const events = received.map((r) =>
      stripe.webhooks.constructEvent(
        r.body,
        r.headers['stripe-signature'] as string,
        endpoint.secret as string,
        300,
        undefined,
        receivedAt,
      ),
    );
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated']);
    expect((events[1]?.data.object as Stripe.Customer | undefined)?.name).toBe('Hook');
    expect(events[1]?.data.previous_attributes).toEqual({ name: null });

    // A tampered body, the wrong secret, or an old signature are refused.
    const r0 = received[0] as Received;
    const sig = r0.headers['stripe-signature'] as string;
    expect(() =>
      stripe.webhooks.constructEvent(
        r0.body.replace('hook@', 'evil@'),
        sig,
        endpoint.secret as string,
        300,
        undefined,
        receivedAt,
      ),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() =>
      stripe.webhooks.constructEvent(r0.body, sig, 'whsec_wrong', 300, undefined, receivedAt),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() =>
      stripe.webhooks.constructEvent(
        r0.body,
        sig,
        endpoint.secret as string,
        300,
        undefined,
        receivedAt + 301_000,
      ),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
  });

  it('Idempotency-Key: a retry replays the first answer; other parameters are an idempotency error', async () => {
    const { sim, stripe } = await start({ seed: false });
    const first = await stripe.customers.create({ email: 'idem@example.com' }, { idempotencyKey: 'sync-42' });
    const second = await stripe.customers.create(
      { email: 'idem@example.com' },
      { idempotencyKey: 'sync-42' },
    );
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect((await stripe.customers.list()).data).toHaveLength(1);
    expect(sim.state.all('customer', false)).toHaveLength(1);

    const conflict = await failure(
      stripe.customers.create({ email: 'other@example.com' }, { idempotencyKey: 'sync-42' }),
    );
    expect(conflict).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(conflict.statusCode).toBe(400);
    expect(conflict.type).toBe('StripeIdempotencyError');

    // A saved error replays too.
    const e1 = await failure(
      stripe.customers.update('cus_missing', { name: 'x' }, { idempotencyKey: 'upd-1' }),
    );
    sim.create('customer', { email: 'noise@example.com' });
    const e2 = await failure(
      stripe.customers.update('cus_missing', { name: 'x' }, { idempotencyKey: 'upd-1' }),
    );
    expect(e2.statusCode).toBe(404);
    expect(e2.requestId).toBe(e1.requestId);

    // After 24 hours the key is forgotten.
    (sim.clock as ManualClock).advance(24 * 3_600_000);
    const third = await stripe.customers.create({ email: 'idem@example.com' }, { idempotencyKey: 'sync-42' });
    expect(third.id).not.toBe(first.id);
  });

  it('Checkout in subscription mode, completed by the customer; billing portal; subscriptions', async () => {
    const { sim, stripe } = await start();
    const prices = await stripe.prices.list({ type: 'recurring', limit: 100 });
    const monthly = prices.data.find(
      (p) => p.recurring?.interval === 'month' && p.unit_amount === 4900,
    ) as Stripe.Price;
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: monthly.id, quantity: 2 }],
      success_url: 'https://app.lockstep.example/billing/success?session_id={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://app.lockstep.example/billing',
      customer_email: 'buyer@newco.example',
      client_reference_id: 'workspace_77',
      metadata: { workspace: '77' },
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session).toMatchObject({
      status: 'open',
      payment_status: 'unpaid',
      mode: 'subscription',
      amount_total: 9800,
    });
    expect(session.url).toBe(`${sim.url}/c/pay/${session.id}`);
    const page = await fetch(session.url as string);
    expect(await page.text()).toContain(session.id);

    const done = await fetch(`${sim.url}/test/checkout/sessions/${session.id}/complete`, { method: 'POST' });
    expect(done.status).toBe(200);
    const completed = await stripe.checkout.sessions.retrieve(session.id, {
      expand: ['subscription', 'line_items'],
    });
    expect(completed).toMatchObject({
      status: 'complete',
      payment_status: 'paid',
      client_reference_id: 'workspace_77',
    });
    const sub = completed.subscription as Stripe.Subscription;
    expect(sub.status).toBe('active');
    expect(sub.items.data[0]).toMatchObject({ quantity: 2, price: { id: monthly.id } });
    expect(completed.line_items?.data[0]?.quantity).toBe(2);
    const customer = (await stripe.customers.retrieve(completed.customer as string)) as Stripe.Customer;
    expect(customer.email).toBe('buyer@newco.example');

    const invoices = await stripe.invoices.list({ customer: customer.id });
    expect(invoices.data).toHaveLength(1);
    expect(invoices.data[0]).toMatchObject({
      status: 'paid',
      amount_paid: 9800,
      billing_reason: 'subscription_create',
    });

    const completedEvents = await stripe.events.list({ type: 'checkout.session.completed' });
    expect((completedEvents.data[0]?.data.object as Stripe.Checkout.Session | undefined)?.subscription).toBe(
      sub.id,
    );

    const portal = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: 'https://app.lockstep.example/billing',
    });
    expect(portal.url).toBe(`${sim.url}/p/session/${portal.id}`);

    // Payment failure, then cancellation.
    const failed = await fetch(`${sim.url}/test/subscriptions/${sub.id}/fail_payment`, { method: 'POST' });
    expect(failed.status).toBe(200);
    const pastDue = await stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] });
    expect(pastDue.status).toBe('past_due');
    expect((pastDue.latest_invoice as Stripe.Invoice).status).toBe('open');
    expect((await stripe.events.list({ type: 'invoice.payment_failed' })).data).toHaveLength(1);

    // The customer pays the open invoice: active again.
    const paid = await fetch(`${sim.url}/test/subscriptions/${sub.id}/pay`, { method: 'POST' });
    expect(paid.status).toBe(200);
    const recovered = await stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] });
    expect(recovered.status).toBe('active');
    expect((recovered.latest_invoice as Stripe.Invoice).status).toBe('paid');
    const paidEvents = await stripe.events.list({ type: 'invoice.paid' });
    expect((paidEvents.data[0]?.data.object as Stripe.Invoice | undefined)?.id).toBe(
      (recovered.latest_invoice as Stripe.Invoice).id,
    );
    const again = await fetch(`${sim.url}/test/subscriptions/${sub.id}/pay`, { method: 'POST' });
    expect(again.status).toBe(400);

    const canceled = await stripe.subscriptions.cancel(sub.id);
    expect(canceled.status).toBe('canceled');
    const deletedEvent = await stripe.events.list({ type: 'customer.subscription.deleted' });
    expect((deletedEvent.data[0]?.data.object as Stripe.Subscription | undefined)?.id).toBe(sub.id);
    const open = await stripe.subscriptions.list({ customer: customer.id });
    expect(open.data).toHaveLength(0);
    const every = await stripe.subscriptions.list({ customer: customer.id, status: 'all' });
    expect(every.data.map((s) => s.id)).toEqual([sub.id]);
  });

  it('Connect: stripe.oauth.authorizeUrl and oauth.token connect an account; {stripeAccount} reads its own data; deauthorize ends it', async () => {
    const redirect = 'http://127.0.0.1:9/oauth/stripe/callback';
    const { sim, stripe } = await start({
      connect: {
        redirectUris: [redirect],
        accounts: [{ id: 'acct_1ConnectedShop0001', seed: { customers: 3 } }],
      },
    });
    const shop = sim.connectedAccount('acct_1ConnectedShop0001');
    const only = shop.create('customer', { email: 'only.in.shop@example.com', name: 'Shop Only' });

    const url = new URL(
      stripe.oauth.authorizeUrl({ client_id: sim.connect.clientId, state: 'csrf-1', redirect_uri: redirect }),
    );
    // The client builds https://<host>/oauth/authorize with read_write by default: the browser goes there.
    expect(url.pathname).toBe('/oauth/authorize');
    expect(url.searchParams.get('scope')).toBe('read_write');
    const consent = await fetch(`${sim.url}${url.pathname}${url.search}`, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location') as string);
    expect(back.origin + back.pathname).toBe(redirect);
    expect(back.searchParams.get('state')).toBe('csrf-1');
    const code = back.searchParams.get('code') as string;
    expect(code).toMatch(/^ac_/);

    const token = await stripe.oauth.token({ grant_type: 'authorization_code', code });
    expect(token).toMatchObject({
      stripe_user_id: 'acct_1ConnectedShop0001',
      scope: 'read_write',
      livemode: false,
      token_type: 'bearer',
    });
    expect(token.access_token).toMatch(/^sk_test_/);
    expect(token.refresh_token).toMatch(/^rt_/);
    expect(token.stripe_publishable_key).toMatch(/^pk_test_/);

    // The platform key on behalf of the account (the recommended way) sees the account's data only.
    const onBehalf = { stripeAccount: token.stripe_user_id as string };
    expect((await stripe.accounts.retrieveCurrent({}, onBehalf)).id).toBe('acct_1ConnectedShop0001');
    const theirs = await stripe.customers.list({ limit: 100 }, onBehalf);
    expect(theirs.data.map((c) => c.id)).toContain(only.id);
    expect(theirs.data).toHaveLength(4);
    const platform = await stripe.customers.list({ limit: 100 });
    expect(platform.data.map((c) => c.id)).not.toContain(only.id);
    const made = await stripe.customers.create({ email: 'made@example.com' }, onBehalf);
    expect(shop.state.get('customer', made.id, false)).toBeDefined();
    await expect(stripe.customers.retrieve(made.id)).rejects.toMatchObject({ statusCode: 404 });
    // The legacy access token works as the account's own key.
    expect((await client(sim, token.access_token as string).customers.retrieve(only.id as string)).id).toBe(
      only.id,
    );

    const spent = await failure(stripe.oauth.token({ grant_type: 'authorization_code', code }));
    expect(spent.type).toBe('StripeInvalidGrantError');

    const gone = await stripe.oauth.deauthorize({
      client_id: sim.connect.clientId,
      stripe_user_id: 'acct_1ConnectedShop0001',
    });
    expect(gone).toEqual({ stripe_user_id: 'acct_1ConnectedShop0001' });
    const refused = await failure(stripe.customers.list({ limit: 1 }, onBehalf));
    expect(refused.statusCode).toBe(403);
    expect(refused.code).toBe('account_invalid');
    expect(refused.type).toBe('StripePermissionError');
    const legacy = await failure(client(sim, token.access_token as string).customers.list({ limit: 1 }));
    expect(legacy.statusCode).toBe(401);
  });
});
