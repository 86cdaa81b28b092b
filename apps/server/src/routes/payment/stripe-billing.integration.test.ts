import {
  ManualClock,
  type StripeSimulator,
  stripeSignature as signPayload,
  startStripeSimulator,
} from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { PAST_DUE_GRACE_DAYS, STRIPE_WEBHOOK_EVENTS } from '../../services/billing';

// Lockstep's own billing end to end against the Stripe simulator: the server's Stripe config points
// at it, its webhook endpoint (the events the README names, signed with the configured secret)
// delivers into the real route. Checkout -> the simulator's test completion -> webhooks -> the plan
// and its limits; a failed payment -> past_due, usable for the grace period, then expired; the
// portal and a cancellation; forged, stale and replayed deliveries.
const WEBHOOK_SECRET = 'whsec_lockstep_billing_integration_test';
const PUBLIC_URL = 'https://app.lockstep.test';
const DAY_MS = 24 * 60 * 60 * 1000;

let t: TestApp;
let sim: StripeSimulator;
let clock: ManualClock;
let prices: { starter: string; pro: string };
let deliver: typeof fetch = async () => new Response('not ready', { status: 503 });

const json = { 'content-type': 'application/json' };
type User = Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  clock = new ManualClock(Date.now());
  sim = await startStripeSimulator({
    clock,
    idSeed: 11,
    rateLimit: false,
    seed: false,
    webhooks: {
      endpoints: [
        {
          url: 'http://lockstep.test/webhooks/stripe',
          enabled_events: [...STRIPE_WEBHOOK_EVENTS],
          secret: WEBHOOK_SECRET,
        },
      ],
      fetch: ((input, init) => deliver(input, init)) as typeof fetch,
    },
  });
  const product = sim.create('product', { name: 'Lockstep' });
  const price = (amount: number, nickname: string) =>
    sim.create('price', {
      product: product.id,
      currency: 'usd',
      unit_amount: amount,
      nickname,
      recurring: { interval: 'month' },
    }).id as string;
  prices = { starter: price(1900, 'Starter'), pro: price(4900, 'Pro') };
  t = await createTestApp(
    {
      LOCKSTEP_STRIPE_SECRET_KEY: sim.token,
      LOCKSTEP_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      LOCKSTEP_STRIPE_PRICES: `starter=${prices.starter},pro=${prices.pro}`,
      LOCKSTEP_STRIPE_API_URL: sim.url,
      LOCKSTEP_PUBLIC_URL: PUBLIC_URL,
    },
    { runWorkers: false },
  );
  deliver = injectAsFetch(t.app);
});

afterAll(async () => {
  await t?.close();
  await sim?.close();
});

afterEach(() => {
  vi.useRealTimers();
  // A test that moved time puts the simulator's clock back with the server's.
  clock.set(Date.now());
});

async function subscriptionOf(user: User) {
  const res = await t.app.inject({ url: '/rest/users/current', headers: user.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().lockstepUser.subscription;
}

async function limitsOf(user: User) {
  return (await t.app.inject({ url: '/rest/users/limit-data', headers: user.auth })).json();
}

async function createSync(user: User) {
  return t.app.inject({
    method: 'POST',
    url: '/rest/core-bases',
    headers: { ...user.auth, ...json },
    payload: { name: 'A sync' },
  });
}

async function startCheckout(user: User, productType = 'pro', payload: unknown = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/payment/checkout/${productType}`,
    headers: { ...user.auth, ...json },
    payload: payload as Record<string, unknown>,
  });
}

/** Reads an object through Stripe's API on the simulator. */
async function stripeGet(path: string) {
  const res = await fetch(`${sim.url}${path}`, { headers: { authorization: `Bearer ${sim.token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Checkout for a plan, paid on the simulator's hosted page; answers the Checkout Session. */
async function buy(user: User, productType = 'pro') {
  const res = await startCheckout(user, productType);
  expect(res.statusCode, res.body).toBe(200);
  const sessionId = new URL(res.json().url).pathname.split('/').pop() as string;
  const paid = await fetch(`${sim.url}/test/checkout/sessions/${sessionId}/complete`, { method: 'POST' });
  expect(paid.status).toBe(200);
  await sim.flushWebhooks();
  // Every delivery taken (events of one subscription arrive at once: none may fail on another).
  expect(
    sim.webhooks.deliveries.filter((d) => d.status !== 200).map((d) => `${d.eventType}: ${d.status}`),
  ).toEqual([]);
  return stripeGet(`/v1/checkout/sessions/${sessionId}`);
}

/** Moves the simulator's clock and the server's now (Date) together; a fresh token for the user. */
async function moveTime(ms: number, user: User) {
  clock.advance(ms);
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(new Date(Date.now() + ms));
  // Bearer tokens last five minutes: mint one at the new time from the session cookie.
  const res = await t.app.inject({ url: '/api/auth/token', headers: { cookie: user.cookie } });
  expect(res.statusCode, res.body).toBe(200);
  user.auth.authorization = `Bearer ${res.json().token}`;
}

describe('Stripe checkout', () => {
  it('gives the plan with its limits once Stripe says it is paid', async () => {
    const user = await signUp(t.app, 'buyer@billing.test', 'Ada Buyer');
    // No plan (and not a local server): the plan gate refuses a sync.
    expect(await subscriptionOf(user)).toMatchObject({ status: 'none' });
    expect((await createSync(user)).statusCode).toBe(402);

    const res = await startCheckout(user, 'pro', { rewardfulReferral: 'ref-7d1c' });
    expect(res.statusCode, res.body).toBe(200);
    const { url } = res.json();
    expect(url.startsWith(`${sim.url}/c/pay/cs_test_`)).toBe(true);
    const sessionId = new URL(url).pathname.split('/').pop() as string;
    const session = await stripeGet(`/v1/checkout/sessions/${sessionId}?expand[]=line_items`);
    expect(session).toMatchObject({
      mode: 'subscription',
      client_reference_id: user.userId,
      metadata: { userId: user.userId, productType: 'pro', rewardfulReferral: 'ref-7d1c' },
      success_url: `${PUBLIC_URL}/subscription/manage?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${PUBLIC_URL}/account/signup/pro?checkout=canceled`,
    });
    expect((session.line_items as { data: { price: { id: string } }[] }).data[0]?.price.id).toBe(prices.pro);
    // The customer is the user's, made for them and kept on their subscription row.
    const customer = await stripeGet(`/v1/customers/${session.customer}`);
    expect(customer).toMatchObject({ email: 'buyer@billing.test', metadata: { userId: user.userId } });
    // Not paid yet: no plan.
    expect(await subscriptionOf(user)).toMatchObject({ status: 'none' });

    const paid = await fetch(`${sim.url}/test/checkout/sessions/${sessionId}/complete`, { method: 'POST' });
    expect(paid.status).toBe(200);
    await sim.flushWebhooks();
    const delivered = sim.webhooks.deliveries.filter((d) => d.eventType === 'checkout.session.completed');
    expect(delivered.at(-1)?.status).toBe(200);

    const sub = await subscriptionOf(user);
    expect(sub).toMatchObject({
      status: 'active',
      planDisplayName: 'Pro',
      productType: 'pro',
      billedByStripe: true,
      cancelAtPeriodEnd: false,
    });
    // Monthly: the renewal is 28 to 31 days away.
    expect(sub.daysRemaining).toBeGreaterThanOrEqual(28);
    expect(sub.daysRemaining).toBeLessThanOrEqual(31);
    expect(await limitsOf(user)).toMatchObject({ baseLimit: 15, recordLimit: 250_000 });
    expect((await createSync(user)).statusCode).toBe(201);

    // A second checkout while paying would bill twice: refused, pointing at the portal.
    const again = await startCheckout(user, 'starter');
    expect(again.statusCode).toBe(409);
    expect(again.json().response.userFacingMessage).toMatch(/Manage billing/);
  });

  it('reuses the customer of a trial user and keeps the plan the price names', async () => {
    const user = await signUp(t.app, 'trial-then-buy@billing.test');
    const trial = await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...user.auth, ...json },
      payload: { productType: 'pro' },
    });
    expect(trial.json()).toMatchObject({ status: 'trialing' });
    const first = await startCheckout(user, 'starter');
    const second = await startCheckout(user, 'starter');
    const customerOf = async (url: string) =>
      (await stripeGet(`/v1/checkout/sessions/${new URL(url).pathname.split('/').pop()}`)).customer;
    const customer = await customerOf(first.json().url);
    expect(await customerOf(second.json().url)).toBe(customer);
    // Still the trial until Stripe says paid.
    expect(await subscriptionOf(user)).toMatchObject({ status: 'trialing', productType: 'pro' });
    const paidSession = await buy(user, 'starter');
    expect(paidSession.customer).toBe(customer);
    expect(await subscriptionOf(user)).toMatchObject({
      status: 'active',
      planDisplayName: 'Starter',
      billedByStripe: true,
    });
    expect(await limitsOf(user)).toMatchObject({ baseLimit: 3, recordLimit: 10_000 });
  });

  it('refuses an unknown plan, a plan without a price, and a caller without a token', async () => {
    const user = await signUp(t.app, 'bad-plan@billing.test');
    const unknown = await startCheckout(user, 'gold');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ statusCode: 400, path: '/payment/checkout/gold' });
    expect(unknown.json().response.userFacingMessage).toMatch(/"gold" is not a plan/);
    const unpriced = await startCheckout(user, 'business');
    expect(unpriced.statusCode).toBe(400);
    expect(unpriced.json().response.userFacingMessage).toMatch(/no price/);
    const anonymous = await t.app.inject({ method: 'POST', url: '/payment/checkout/pro' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ statusCode: 401, path: '/payment/checkout/pro' });
    expect(await subscriptionOf(user)).toMatchObject({ status: 'none' });
  });
});

describe('failed payments', () => {
  it(`keeps the plan usable as past_due for ${PAST_DUE_GRACE_DAYS} days, then expires it`, async () => {
    const user = await signUp(t.app, 'late-payer@billing.test');
    const session = await buy(user, 'pro');
    sim.failPayment(session.subscription as string);
    await sim.flushWebhooks();
    expect(
      sim.webhooks.deliveries.filter((d) => d.eventType === 'invoice.payment_failed').at(-1)?.status,
    ).toBe(200);
    expect(await subscriptionOf(user)).toMatchObject({
      status: 'past_due',
      planDisplayName: 'Pro',
      daysRemaining: PAST_DUE_GRACE_DAYS,
    });
    expect(await limitsOf(user)).toMatchObject({ baseLimit: 15 });
    expect((await createSync(user)).statusCode).toBe(201);

    // Within the grace period: still usable.
    await moveTime((PAST_DUE_GRACE_DAYS - 1) * DAY_MS, user);
    expect(await subscriptionOf(user)).toMatchObject({ status: 'past_due', daysRemaining: 1 });
    expect((await createSync(user)).statusCode).toBe(201);

    // Past it: expired, limits 0, syncs cannot be created.
    await moveTime(DAY_MS + 60_000, user);
    expect(await subscriptionOf(user)).toMatchObject({ status: 'expired', daysRemaining: 0 });
    expect(await limitsOf(user)).toMatchObject({ baseLimit: 0, recordLimit: 0 });
    expect((await createSync(user)).statusCode).toBe(402);
  });
});

describe('a failed payment paid after all', () => {
  it('is active again on invoice.paid', async () => {
    const user = await signUp(t.app, 'pays-later@billing.test');
    const session = await buy(user, 'pro');
    sim.failPayment(session.subscription as string);
    await sim.flushWebhooks();
    expect(await subscriptionOf(user)).toMatchObject({ status: 'past_due' });
    sim.payInvoice(session.subscription as string);
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.filter((d) => d.eventType === 'invoice.paid').at(-1)?.status).toBe(200);
    const sub = await subscriptionOf(user);
    expect(sub).toMatchObject({ status: 'active', planDisplayName: 'Pro', billedByStripe: true });
    // The renewal paid for the next month: its end is about two months from the first payment.
    expect(sub.daysRemaining).toBeGreaterThanOrEqual(58);
    const row = await t.ctx.db
      .selectFrom('subscription')
      .select('past_due_since')
      .where('stripe_subscription_id', '=', session.subscription as string)
      .executeTakeFirstOrThrow();
    expect(row.past_due_since).toBeNull();
  });
});

describe('billing portal', () => {
  it('answers 409 before the user has a Stripe customer', async () => {
    const user = await signUp(t.app, 'no-customer@billing.test');
    const res = await t.app.inject({ method: 'POST', url: '/payment/portal', headers: user.auth });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ statusCode: 409, path: '/payment/portal' });
    expect(res.json().response.userFacingMessage).toMatch(/no billing to manage/);
  });

  it("opens the portal for the user's customer; a cancellation there is followed", async () => {
    const user = await signUp(t.app, 'canceler@billing.test');
    const session = await buy(user, 'pro');
    const res = await t.app.inject({ method: 'POST', url: '/payment/portal', headers: user.auth });
    expect(res.statusCode, res.body).toBe(200);
    const { url } = res.json();
    expect(url.startsWith(`${sim.url}/p/session/bps_`)).toBe(true);
    const portal = sim.state
      .all('billing_portal.session', false)
      .find((s) => s.id === new URL(url).pathname.split('/').pop());
    expect(portal).toMatchObject({
      customer: session.customer,
      return_url: `${PUBLIC_URL}/subscription/manage`,
    });

    // In the portal: "Cancel plan" (at the end of the period paid for).
    const subscriptionId = session.subscription as string;
    sim.update('subscription', subscriptionId, { cancel_at_period_end: true });
    await sim.flushWebhooks();
    const canceling = await subscriptionOf(user);
    expect(canceling).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    expect(canceling.daysRemaining).toBeGreaterThanOrEqual(28);

    // The period ends: Stripe deletes the subscription.
    sim.cancelSubscription(subscriptionId);
    await sim.flushWebhooks();
    expect(await subscriptionOf(user)).toMatchObject({ status: 'expired', planDisplayName: 'Pro' });
    expect(await limitsOf(user)).toMatchObject({ baseLimit: 0, recordLimit: 0 });

    // Ended: the user may buy again, with the same customer.
    const again = await buy(user, 'starter');
    expect(again.customer).toBe(session.customer);
    expect(await subscriptionOf(user)).toMatchObject({ status: 'active', planDisplayName: 'Starter' });
  });
});

describe('webhook deliveries', () => {
  /** A checkout.session.completed for a user who never paid, as a forger would send it. */
  function forgedEvent(userId: string, subscriptionId: string) {
    return JSON.stringify({
      id: 'evt_forged_1',
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: 'cs_test_forged',
          object: 'checkout.session',
          mode: 'subscription',
          client_reference_id: userId,
          subscription: subscriptionId,
          metadata: { userId, productType: 'enterprise' },
        },
      },
    });
  }

  const post = (body: string, signature?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/webhooks/stripe',
      headers: { ...json, ...(signature ? { 'stripe-signature': signature } : {}) },
      payload: body,
    });

  it('refuses forged, unsigned and stale deliveries in the envelope, changing nothing', async () => {
    const user = await signUp(t.app, 'forger@billing.test');
    const payer = await signUp(t.app, 'real-payer@billing.test');
    const paid = await buy(payer, 'pro');
    const body = forgedEvent(user.userId, paid.subscription as string);
    const now = Math.floor(Date.now() / 1000);

    const wrongSecret = await post(body, signPayload(body, 'whsec_not_the_secret', now));
    expect(wrongSecret.statusCode).toBe(401);
    expect(wrongSecret.json()).toMatchObject({ statusCode: 401, path: '/webhooks/stripe' });
    expect(wrongSecret.json().response.userFacingMessage).toMatch(/signature does not match/);

    const unsigned = await post(body);
    expect(unsigned.statusCode).toBe(401);

    // Signed with the right secret, but over another body.
    const tampered = await post(body, signPayload(body.replace('forged_1', 'forged_2'), WEBHOOK_SECRET, now));
    expect(tampered.statusCode).toBe(401);

    const stale = await post(body, signPayload(body, WEBHOOK_SECRET, now - 301));
    expect(stale.statusCode).toBe(400);
    expect(stale.json().response.userFacingMessage).toMatch(/too old/);

    expect(await subscriptionOf(user)).toMatchObject({ status: 'none' });
    const seen = await t.ctx.db
      .selectFrom('stripe_webhook_event')
      .select('event_id')
      .where('event_id', '=', 'evt_forged_1')
      .execute();
    expect(seen).toEqual([]);
  });

  it('applies a replayed event once', async () => {
    const user = await signUp(t.app, 'replayed@billing.test');
    const session = await buy(user, 'pro');
    const delivery = sim.webhooks.deliveries.find(
      (d) => d.eventType === 'checkout.session.completed' && JSON.parse(d.body).data.object.id === session.id,
    );
    expect(delivery?.status).toBe(200);
    const before = await t.ctx.db
      .selectFrom('subscription')
      .select(['updated_at', 'status'])
      .where('stripe_subscription_id', '=', session.subscription as string)
      .executeTakeFirstOrThrow();
    const reads = () =>
      sim.requestLog.count({ method: 'GET', path: `/v1/subscriptions/${session.subscription as string}` });
    const readsBefore = reads();

    // The same event again, freshly signed (as Stripe's retries are).
    const body = delivery?.body as string;
    const res = await post(body, signPayload(body, WEBHOOK_SECRET, Math.floor(clock.now() / 1000)));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, duplicate: true });
    expect(reads()).toBe(readsBefore);
    const after = await t.ctx.db
      .selectFrom('subscription')
      .select(['updated_at', 'status'])
      .where('stripe_subscription_id', '=', session.subscription as string)
      .executeTakeFirstOrThrow();
    expect(after).toEqual(before);
    expect(await subscriptionOf(user)).toMatchObject({ status: 'active' });
  });
});

describe('without payments set up', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await createTestApp({}, { runWorkers: false });
  });
  afterAll(async () => {
    await plain?.close();
  });

  it('says so for checkout, the portal and the webhook; trials still work', async () => {
    const user = await signUp(plain.app, 'no-payments@billing.test');
    const config = (await plain.app.inject({ url: '/api/config' })).json();
    expect(config.payments).toBe(false);
    expect((await t.app.inject({ url: '/api/config' })).json().payments).toBe(true);

    for (const url of ['/payment/checkout/pro', '/payment/portal']) {
      const res = await plain.app.inject({
        method: 'POST',
        url,
        headers: { ...user.auth, ...json },
        payload: {},
      });
      expect(res.statusCode, url).toBe(503);
      expect(res.json()).toMatchObject({
        statusCode: 503,
        path: url,
        response: { code: 'payments_not_configured' },
      });
      expect(res.json().response.userFacingMessage).toMatch(/Payments are not set up on this server/);
    }
    const hook = await plain.app.inject({
      method: 'POST',
      url: '/webhooks/stripe',
      headers: json,
      payload: '{}',
    });
    expect(hook.statusCode).toBe(404);

    const trial = await plain.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...user.auth, ...json },
      payload: { productType: 'pro' },
    });
    expect(trial.json()).toMatchObject({ status: 'trialing', planDisplayName: 'Pro' });
  });
});
