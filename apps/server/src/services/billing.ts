import { tierOfProductType } from '@lockstep/contract';
import { sql, type Transaction } from 'kysely';
import Stripe from 'stripe';
import type { StripeConfig } from '../config';
import type { Db } from '../db/database';
import type { Database } from '../db/schema';
import type { AppContext } from '../http/context';
import { HttpError } from '../http/http-error';
import { subscriptionOf } from './subscriptions';

/**
 * Lockstep's own billing through Stripe: Checkout for a plan, the billing portal, and the
 * subscription rows that Stripe's webhooks keep (POST /webhooks/stripe).
 *
 * A Stripe subscription is one `subscription` row (by stripe_subscription_id). Its access ends
 * (expires_at) at:
 *  - active or trialing: the end of the period paid for plus PAST_DUE_GRACE_DAYS, so a renewal
 *    whose webhook comes late does not cut anyone off (Stripe says past_due or canceled otherwise);
 *    when it is set to cancel at the period's end, that end;
 *  - past_due (a payment failed): PAST_DUE_GRACE_DAYS after the first failure Stripe told us of;
 *    the plan stays usable until then, then it is expired;
 *  - canceled (deleted, unpaid, incomplete_expired, paused): expired at once.
 */

/** Days a plan stays usable after a failed payment (status past_due) before it is expired. */
export const PAST_DUE_GRACE_DAYS = 3;
/**
 * Days a Stripe event id is kept once taken: Stripe keeps events 30 days (a resend from the
 * Dashboard or a duplicate delivery comes within them).
 */
export const STRIPE_EVENT_KEEP_DAYS = 30;
/** Webhook deliveries older than this (their signed time stamp, seconds) are refused. */
export const STRIPE_WEBHOOK_TOLERANCE_SECONDS = 300;
/** The events POST /webhooks/stripe acts on; give the endpoint in Stripe these. */
export const STRIPE_WEBHOOK_EVENTS = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
] as const;

const DAY_MS = 24 * 60 * 60 * 1000;

const clients = new WeakMap<StripeConfig, Stripe>();

/** The official client, pointed at LOCKSTEP_STRIPE_API_URL (the simulator in tests). */
export function stripeClient(config: StripeConfig): Stripe {
  let client = clients.get(config);
  if (!client) {
    const url = new URL(config.apiUrl);
    const http = url.protocol === 'http:';
    client = new Stripe(config.secretKey, {
      host: url.hostname,
      port: url.port ? Number(url.port) : http ? 80 : 443,
      protocol: http ? 'http' : 'https',
      maxNetworkRetries: 2,
      timeout: 20_000,
      appInfo: { name: 'Lockstep' },
    });
    clients.set(config, client);
  }
  return client;
}

export function paymentsNotSetUp(): HttpError {
  return new HttpError(
    503,
    'Payments are not set up on this server',
    'Payments are not set up on this server, so plans cannot be bought here. Start a trial from the plan page, or ask your administrator to assign a plan.',
    'payments_not_configured',
  );
}

function requireStripe(ctx: AppContext): { config: StripeConfig; stripe: Stripe } {
  const config = ctx.config.billing;
  if (!config) throw paymentsNotSetUp();
  return { config, stripe: stripeClient(config) };
}

/** The price of a product type: its own entry (`pro_v2`) first, then its tier's (`pro`). */
export function priceOf(config: StripeConfig, productType: string): string | null {
  const type = productType.trim().toLowerCase();
  const tier = tierOfProductType(type);
  return config.prices[type] ?? (tier ? (config.prices[tier] ?? null) : null);
}

/** The product type a price is configured for, or null. */
export function productTypeOfPrice(config: StripeConfig, priceId: string | null | undefined): string | null {
  if (!priceId) return null;
  return Object.entries(config.prices).find(([, price]) => price === priceId)?.[0] ?? null;
}

/** A failure of Stripe's API, for the user: 502 with what to do (the details are in the log). */
function stripeFailed(what: string, error: unknown): HttpError {
  const detail = error instanceof Error ? error.message : String(error);
  return new HttpError(
    502,
    `Stripe failed to ${what}: ${detail}`,
    `Stripe could not ${what} just now. Try again in a minute; if it keeps failing, contact support.`,
    'payment_provider',
  );
}

/** The user's Stripe customer, kept on their subscription rows (the latest one that has it). */
export async function stripeCustomerOf(db: Db, userId: string): Promise<string | null> {
  const row = await db
    .selectFrom('subscription')
    .select('stripe_customer_id')
    .where('user_id', '=', userId)
    .where('stripe_customer_id', 'is not', null)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.stripe_customer_id ?? null;
}

/**
 * The user's Stripe customer, made on first use: kept on their latest subscription row, or on a row
 * of status 'incomplete' (grants nothing) when they have none yet. The idempotency key makes two
 * checkouts started at once share one customer.
 */
async function ensureCustomer(ctx: AppContext, stripe: Stripe, userId: string, productType: string) {
  const existing = await stripeCustomerOf(ctx.db, userId);
  if (existing) return existing;
  const user = await ctx.db
    .selectFrom('user')
    .select(['email', 'name'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  let customer: Stripe.Customer;
  try {
    customer = await stripe.customers.create(
      { email: user.email, ...(user.name ? { name: user.name } : {}), metadata: { userId } },
      { idempotencyKey: `lockstep-customer-${userId}` },
    );
  } catch (error) {
    throw stripeFailed('create your billing account', error);
  }
  await ctx.db.transaction().execute(async (trx) => {
    const latest = await trx
      .selectFrom('subscription')
      .select(['id', 'stripe_customer_id'])
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .limit(1)
      .forUpdate()
      .executeTakeFirst();
    if (latest?.stripe_customer_id) return;
    if (latest)
      await trx
        .updateTable('subscription')
        .set({ stripe_customer_id: customer.id, updated_at: new Date() })
        .where('id', '=', latest.id)
        .execute();
    else
      await trx
        .insertInto('subscription')
        .values({
          user_id: userId,
          product_type: productType,
          status: 'incomplete',
          stripe_customer_id: customer.id,
        })
        .execute();
  });
  return (await stripeCustomerOf(ctx.db, userId)) ?? customer.id;
}

/**
 * POST /payment/checkout/{productType}: a Checkout Session in subscription mode for the product
 * type's price, for the user's customer; the webhook gives the plan once Stripe says it is paid.
 */
export async function startCheckout(
  ctx: AppContext,
  userId: string,
  productType: string,
  rewardfulReferral: string | undefined,
): Promise<{ url: string }> {
  const { config, stripe } = requireStripe(ctx);
  const type = productType.trim().toLowerCase();
  if (!tierOfProductType(type))
    throw new HttpError(
      400,
      `Unknown product type ${productType}`,
      `"${productType}" is not a plan. Use one of the tiers (for example "pro" or "pro_v2").`,
      'validation',
    );
  const price = priceOf(config, type);
  if (!price)
    throw new HttpError(
      400,
      `No price for ${type}`,
      `The ${type} plan cannot be bought here: this server has no price for it. Choose another plan or contact support.`,
      'validation',
    );
  const current = await subscriptionOf(ctx.db, userId);
  if (current.billedByStripe && current.status !== 'expired' && current.status !== 'none')
    throw new HttpError(
      409,
      'Already subscribed',
      'You already pay for a plan. Change or cancel it with Manage billing on the subscription page.',
      'conflict',
    );
  const customer = await ensureCustomer(ctx, stripe, userId, type);
  const metadata: Record<string, string> = {
    userId,
    productType: type,
    ...(rewardfulReferral ? { rewardfulReferral } : {}),
  };
  const base = ctx.config.publicUrl;
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer,
      client_reference_id: userId,
      line_items: [{ price, quantity: 1 }],
      metadata,
      subscription_data: { metadata },
      success_url: `${base}/subscription/manage?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${base}/account/signup/${encodeURIComponent(type)}?checkout=canceled`,
    });
  } catch (error) {
    throw stripeFailed('start the checkout', error);
  }
  if (!session.url) throw stripeFailed('start the checkout', new Error('the session has no url'));
  return { url: session.url };
}

/** POST /payment/portal: Stripe's billing portal for the user's customer. */
export async function openPortal(ctx: AppContext, userId: string): Promise<{ url: string }> {
  const { stripe } = requireStripe(ctx);
  const customer = await stripeCustomerOf(ctx.db, userId);
  if (!customer)
    throw new HttpError(
      409,
      'No Stripe customer for this user',
      'There is no billing to manage yet: you have not paid for a plan. Choose a plan to pay for one.',
      'conflict',
    );
  try {
    const session = await stripe.billingPortal.sessions.create({
      customer,
      return_url: `${ctx.config.publicUrl}/subscription/manage`,
    });
    return { url: session.url };
  } catch (error) {
    throw stripeFailed('open the billing portal', error);
  }
}

// ---------------------------------------------------------------------------------------------
// Webhooks

type RowStatus = 'active' | 'trialing' | 'past_due' | 'canceled' | 'incomplete';

/** Stripe's subscription status as a row status (canceled rows are expired). */
export function rowStatusOf(status: Stripe.Subscription.Status): RowStatus {
  switch (status) {
    case 'active':
      return 'active';
    case 'trialing':
      return 'trialing';
    case 'past_due':
      return 'past_due';
    case 'incomplete':
      return 'incomplete';
    default:
      // canceled, unpaid, incomplete_expired, paused: no access until Stripe says otherwise.
      return 'canceled';
  }
}

/** What an event tells about one subscription: where to read it, and who bought it. */
type Target = { subscriptionId: string; userId?: string; productType?: string };

const idOf = (v: string | { id: string } | null | undefined) => (typeof v === 'string' ? v : (v?.id ?? null));

/** The subscription an event is about, or null for events we do not act on. */
export function targetOf(event: Stripe.Event): Target | null {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      const subscriptionId = idOf(session.subscription);
      if (session.mode !== 'subscription' || !subscriptionId) return null;
      const userId = session.client_reference_id ?? session.metadata?.userId;
      const productType = session.metadata?.productType;
      return { subscriptionId, ...(userId ? { userId } : {}), ...(productType ? { productType } : {}) };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return { subscriptionId: event.data.object.id };
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      // parent.subscription_details since API version 2025-03-31; `subscription` before it.
      const subscriptionId =
        idOf(invoice.parent?.subscription_details?.subscription) ??
        idOf((invoice as unknown as { subscription?: string | { id: string } | null }).subscription);
      return subscriptionId ? { subscriptionId } : null;
    }
    default:
      return null;
  }
}

/** The subscription's state as a row, from Stripe's subscription object. */
export type SubscriptionState = {
  stripeSubscriptionId: string;
  stripeCustomerId: string;
  status: RowStatus;
  priceId: string | null;
  currentPeriodEnd: Date | null;
  cancelAt: Date | null;
  cancelAtPeriodEnd: boolean;
  endedAt: Date | null;
  metadata: Record<string, string>;
};

export function stateOf(sub: Stripe.Subscription): SubscriptionState {
  const items = sub.items?.data ?? [];
  // The period moved from the subscription to its items in API version 2025-03-31.
  const ends = items
    .map((it) => it.current_period_end)
    .concat((sub as unknown as { current_period_end?: number }).current_period_end ?? [])
    .filter((n): n is number => typeof n === 'number');
  const seconds = (n: number | null | undefined) => (typeof n === 'number' ? new Date(n * 1000) : null);
  return {
    stripeSubscriptionId: sub.id,
    stripeCustomerId: idOf(sub.customer) ?? '',
    status: rowStatusOf(sub.status),
    priceId: items[0]?.price?.id ?? null,
    currentPeriodEnd: ends.length ? new Date(Math.max(...ends) * 1000) : null,
    cancelAt: seconds(sub.cancel_at),
    cancelAtPeriodEnd: sub.cancel_at_period_end === true,
    endedAt: seconds(sub.ended_at),
    metadata: sub.metadata ?? {},
  };
}

/** When access ends for a subscription in this state (see the top of this file). */
export function accessEndsAt(state: SubscriptionState, pastDueSince: Date | null, now: Date): Date | null {
  switch (state.status) {
    case 'canceled':
      return state.endedAt ?? now;
    case 'past_due':
      return new Date((pastDueSince ?? now).getTime() + PAST_DUE_GRACE_DAYS * DAY_MS);
    case 'incomplete':
      return null;
    default: {
      if (state.cancelAtPeriodEnd || state.cancelAt) return state.cancelAt ?? state.currentPeriodEnd;
      return state.currentPeriodEnd
        ? new Date(state.currentPeriodEnd.getTime() + PAST_DUE_GRACE_DAYS * DAY_MS)
        : null;
    }
  }
}

/**
 * Reads the subscription an event is about from Stripe (its state now, whatever order the events
 * come in), or null for events we do not act on.
 */
export async function readEventTarget(
  stripe: Stripe,
  event: Stripe.Event,
): Promise<{ target: Target; state: SubscriptionState } | null> {
  const target = targetOf(event);
  if (!target) return null;
  const sub = await stripe.subscriptions.retrieve(target.subscriptionId);
  return { target, state: stateOf(sub) };
}

export type ApplyResult = { applied: boolean; reason?: string };

/**
 * Writes a subscription's state to its row (made on the first event that names it). The user is
 * the row's, else the one Checkout was started for (client_reference_id, or the userId metadata
 * Checkout put on the subscription), else the one whose row holds the customer.
 */
export async function applySubscriptionState(
  trx: Transaction<Database>,
  config: StripeConfig,
  input: { target: Target; state: SubscriptionState; eventAt: Date; now: Date },
): Promise<ApplyResult> {
  const { target, state, eventAt, now } = input;
  // Stripe sends a new subscription's events at once (invoice.paid, customer.subscription.created,
  // checkout.session.completed): one at a time per subscription, so the first makes its row and the
  // others update it.
  await sql`select pg_advisory_xact_lock(hashtext(${`stripe:${state.stripeSubscriptionId}`}))`.execute(trx);
  const existing = await trx
    .selectFrom('subscription')
    .selectAll()
    .where('stripe_subscription_id', '=', state.stripeSubscriptionId)
    .forUpdate()
    .executeTakeFirst();
  let userId = existing?.user_id ?? target.userId ?? state.metadata.userId ?? null;
  if (!userId && state.stripeCustomerId) {
    const byCustomer = await trx
      .selectFrom('subscription')
      .select('user_id')
      .where('stripe_customer_id', '=', state.stripeCustomerId)
      .limit(1)
      .executeTakeFirst();
    userId = byCustomer?.user_id ?? null;
  }
  if (!userId) return { applied: false, reason: 'no Lockstep user for this subscription' };
  const user = await trx.selectFrom('user').select('id').where('id', '=', userId).executeTakeFirst();
  if (!user) return { applied: false, reason: 'the user no longer exists' };

  const productType =
    productTypeOfPrice(config, state.priceId) ??
    existing?.product_type ??
    target.productType ??
    state.metadata.productType ??
    null;
  if (!productType || !tierOfProductType(productType))
    return { applied: false, reason: `price ${state.priceId} is not one of LOCKSTEP_STRIPE_PRICES` };

  const pastDueSince =
    state.status === 'past_due'
      ? existing?.past_due_since
        ? new Date(existing.past_due_since)
        : eventAt
      : null;
  const values = {
    product_type: productType.toLowerCase(),
    status: state.status,
    expires_at: accessEndsAt(state, pastDueSince, now),
    stripe_customer_id: state.stripeCustomerId || existing?.stripe_customer_id || null,
    current_period_end: state.currentPeriodEnd,
    cancel_at_period_end: state.cancelAtPeriodEnd || state.cancelAt !== null,
    past_due_since: pastDueSince,
    updated_at: now,
  };
  if (existing) await trx.updateTable('subscription').set(values).where('id', '=', existing.id).execute();
  else
    await trx
      .insertInto('subscription')
      .values({ user_id: userId, stripe_subscription_id: state.stripeSubscriptionId, ...values })
      .execute();
  return { applied: true };
}
