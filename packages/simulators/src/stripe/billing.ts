/**
 * Billing: subscriptions (create, update metadata / cancel_at_period_end, cancel), invoices
 * (read-only; made by subscriptions), Checkout Sessions in subscription mode (completed through a
 * test helper, as a customer paying on the hosted page would), billing portal sessions, and the
 * test helpers that fail a renewal payment or cancel a subscription. Shapes follow the current
 * API (stripe-node 23's types): periods live on subscription items, an invoice names its
 * subscription under `parent.subscription_details`.
 */
import { badRequest } from './errors.ts';
import type { Ctx, Json, StripeState } from './model.ts';
import {
  allowOnly,
  allowOnlyNested,
  applyMetadata,
  bool,
  type FormValue,
  int,
  invalidParam,
  list,
  missingParam,
  nullableStr,
  oneOf,
  type Params,
  str,
} from './params.ts';
import { createCustomer } from './resources.ts';

const DAY = 86_400;

/** The end of a billing period: calendar months and years, as Stripe bills. */
export function addInterval(start: number, interval: string, count: number): number {
  const d = new Date(start * 1000);
  if (interval === 'day') d.setUTCDate(d.getUTCDate() + count);
  else if (interval === 'week') d.setUTCDate(d.getUTCDate() + 7 * count);
  else if (interval === 'month') d.setUTCMonth(d.getUTCMonth() + count);
  else d.setUTCFullYear(d.getUTCFullYear() + count);
  return Math.floor(d.getTime() / 1000);
}

type ItemInput = { price: string; quantity: number };

function itemsParam(
  state: StripeState,
  params: Params,
  name: string,
  ctx: Ctx,
): { price: Json; quantity: number }[] {
  const items = list(params, name);
  if (items === undefined || items.length === 0) throw missingParam(name);
  const out: { price: Json; quantity: number }[] = [];
  items.forEach((raw, i) => {
    if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParam(`${name}[${i}]`, 'Invalid object');
    const item = raw as Record<string, FormValue>;
    allowOnlyNested(item, `${name}[${i}]`, ['price', 'quantity', 'metadata']);
    const priceId = str(item as Params, 'price');
    if (priceId === undefined) throw missingParam(`${name}[${i}][price]`);
    const price = state.get('price', priceId, ctx.livemode, `${name}[${i}][price]`);
    if (price.active !== true) {
      throw invalidParam(
        `${name}[${i}][price]`,
        `The price specified is inactive. This field only accepts active prices.`,
      );
    }
    const quantity = int(item as Params, 'quantity', 0) ?? 1;
    out.push({ price, quantity });
  });
  return out;
}

function requireRecurring(items: { price: Json }[], param: string): void {
  for (const [i, it] of items.entries()) {
    if (it.price.type !== 'recurring') {
      throw invalidParam(
        `${param}[${i}][price]`,
        'The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.',
      );
    }
  }
  const currencies = new Set(items.map((it) => it.price.currency));
  if (currencies.size > 1)
    throw invalidParam(param, 'All prices on a subscription must have the same currency.');
}

function planOf(price: Json): Json {
  const r = price.recurring as Json;
  return {
    id: price.id,
    object: 'plan',
    active: price.active,
    amount: price.unit_amount,
    amount_decimal: price.unit_amount_decimal,
    billing_scheme: 'per_unit',
    created: price.created,
    currency: price.currency,
    interval: r.interval,
    interval_count: r.interval_count,
    livemode: price.livemode,
    metadata: price.metadata,
    meter: null,
    nickname: price.nickname,
    product: price.product,
    tiers_mode: null,
    transform_usage: null,
    trial_period_days: null,
    usage_type: r.usage_type,
  };
}

// ---------------------------------------------------------------------------------------------
// Invoices

function newInvoice(
  state: StripeState,
  sub: Json,
  ctx: Ctx,
  opts: { reason: string; paid: boolean; periodStart: number; periodEnd: number },
): Json {
  const customer = state.get('customer', sub.customer as string, ctx.livemode);
  const now = state.now();
  const id = state.newId('in');
  const items = (sub.items as Json).data as Json[];
  const currency = sub.currency as string;
  const lines = items.map((it) => {
    const price = it.price as Json;
    const quantity = it.quantity as number;
    const product = state.entry('product', price.product as string, ctx.livemode).obj;
    const amount = (price.unit_amount as number) * quantity;
    return {
      id: state.newId('il'),
      object: 'line_item',
      amount,
      currency,
      description: `${quantity} × ${product.name} (at ${formatAmount(price.unit_amount as number, currency)} / ${(price.recurring as Json).interval})`,
      discount_amounts: [],
      discountable: true,
      discounts: [],
      invoice: id,
      livemode: ctx.livemode,
      metadata: {},
      parent: {
        type: 'subscription_item_details',
        invoice_item_details: null,
        subscription_item_details: {
          invoice_item: null,
          proration: false,
          proration_details: { credited_items: null },
          subscription: sub.id,
          subscription_item: it.id,
        },
      },
      period: { end: opts.periodEnd, start: opts.periodStart },
      pretax_credit_amounts: [],
      pricing: {
        price_details: { price: price.id, product: price.product },
        type: 'price_details',
        unit_amount_decimal: price.unit_amount_decimal,
      },
      quantity,
      taxes: [],
    };
  });
  const total = lines.reduce((sum, l) => sum + l.amount, 0);
  const sequence = customer.next_invoice_sequence as number;
  customer.next_invoice_sequence = sequence + 1;
  const invoice: Json = {
    id,
    object: 'invoice',
    account_country: 'US',
    account_name: 'Lockstep Simulator',
    account_tax_ids: null,
    amount_due: total,
    amount_overpaid: 0,
    amount_paid: opts.paid ? total : 0,
    amount_remaining: opts.paid ? 0 : total,
    amount_shipping: 0,
    application: null,
    attempt_count: 1,
    attempted: true,
    auto_advance: !opts.paid,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: null,
    billing_reason: opts.reason,
    collection_method: 'charge_automatically',
    created: now,
    currency,
    custom_fields: null,
    customer: customer.id,
    customer_account: null,
    customer_address: customer.address,
    customer_email: customer.email,
    customer_name: customer.name,
    customer_phone: customer.phone,
    customer_shipping: null,
    customer_tax_exempt: customer.tax_exempt,
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    due_date: null,
    effective_at: now,
    ending_balance: 0,
    footer: null,
    from_invoice: null,
    hosted_invoice_url: `${state.baseUrl}/invoice/${id}`,
    invoice_pdf: `${state.baseUrl}/invoice/${id}/pdf`,
    issuer: { type: 'self' },
    last_finalization_error: null,
    latest_revision: null,
    lines: {
      object: 'list',
      data: lines,
      has_more: false,
      total_count: lines.length,
      url: `/v1/invoices/${id}/lines`,
    },
    livemode: ctx.livemode,
    metadata: {},
    next_payment_attempt: opts.paid ? null : now + 3 * DAY,
    number: `${customer.invoice_prefix}-${String(sequence).padStart(4, '0')}`,
    on_behalf_of: null,
    parent: {
      quote_details: null,
      subscription_details: { metadata: sub.metadata, subscription: sub.id },
      type: 'subscription_details',
    },
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: opts.periodStart,
    period_start: opts.periodStart,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status: opts.paid ? 'paid' : 'open',
    status_transitions: {
      finalized_at: now,
      marked_uncollectible_at: null,
      paid_at: opts.paid ? now : null,
      voided_at: null,
    },
    subtotal: total,
    subtotal_excluding_tax: total,
    test_clock: null,
    total,
    total_discount_amounts: [],
    total_excluding_tax: total,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: null,
  };
  state.insert('invoice', invoice);
  state.emit('invoice.created', invoice, ctx);
  state.emit('invoice.finalized', invoice, ctx);
  if (opts.paid) {
    state.emit('invoice.paid', invoice, ctx);
    state.emit('invoice.payment_succeeded', invoice, ctx);
  } else {
    state.emit('invoice.payment_failed', invoice, ctx);
  }
  return invoice;
}

function formatAmount(minor: number, currency: string): string {
  const symbol: Record<string, string> = { usd: '$', eur: '€', gbp: '£' };
  const major = (minor / 100).toFixed(2);
  return symbol[currency] ? `${symbol[currency]}${major}` : `${major} ${currency.toUpperCase()}`;
}

export function listInvoices(state: StripeState, params: Params, livemode: boolean): Json {
  allowOnly(params, [
    'collection_method',
    'created',
    'customer',
    'ending_before',
    'limit',
    'starting_after',
    'status',
    'subscription',
  ]);
  const customer = str(params, 'customer');
  const subscription = str(params, 'subscription');
  const status = oneOf(params, 'status', ['draft', 'open', 'paid', 'uncollectible', 'void'] as const);
  return state.list(
    'invoice',
    livemode,
    params,
    '/v1/invoices',
    (i) =>
      (customer === undefined || i.customer === customer) &&
      (subscription === undefined ||
        ((i.parent as Json | null)?.subscription_details as Json | undefined)?.subscription ===
          subscription) &&
      (status === undefined || i.status === status),
  );
}

// ---------------------------------------------------------------------------------------------
// Subscriptions

export function startSubscription(
  state: StripeState,
  customerId: string,
  items: ItemInput[] | { price: Json; quantity: number }[],
  ctx: Ctx,
  extra: { metadata?: Record<string, string>; description?: string | null; cancelAtPeriodEnd?: boolean } = {},
): Json {
  state.get('customer', customerId, ctx.livemode, 'customer');
  const resolved = items.map((it) =>
    typeof it.price === 'string'
      ? { price: state.get('price', it.price, ctx.livemode), quantity: it.quantity }
      : (it as { price: Json; quantity: number }),
  );
  requireRecurring(resolved, 'items');
  const now = state.now();
  const id = state.newId('sub');
  const firstRecurring = (resolved[0] as { price: Json }).price.recurring as Json;
  const periodEnd = addInterval(
    now,
    firstRecurring.interval as string,
    firstRecurring.interval_count as number,
  );
  const itemObjs = resolved.map(({ price, quantity }) => {
    const r = price.recurring as Json;
    return {
      id: `si_${state.randomId(14)}`,
      object: 'subscription_item',
      billing_thresholds: null,
      created: now,
      current_period_end: addInterval(now, r.interval as string, r.interval_count as number),
      current_period_start: now,
      discounts: [],
      metadata: {},
      plan: planOf(price),
      price: structuredClone(price),
      quantity,
      subscription: id,
      tax_rates: [],
    };
  });
  const sub: Json = {
    id,
    object: 'subscription',
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: now,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: null, type: 'classic' },
    billing_thresholds: null,
    cancel_at: extra.cancelAtPeriodEnd ? periodEnd : null,
    cancel_at_period_end: extra.cancelAtPeriodEnd ?? false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created: now,
    currency: (resolved[0] as { price: Json }).price.currency,
    customer: customerId,
    customer_account: null,
    days_until_due: null,
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: extra.description ?? null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
    items: {
      object: 'list',
      data: itemObjs,
      has_more: false,
      total_count: itemObjs.length,
      url: `/v1/subscription_items?subscription=${id}`,
    },
    latest_invoice: null,
    livemode: ctx.livemode,
    metadata: extra.metadata ?? {},
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: {
      payment_method_options: null,
      payment_method_types: null,
      save_default_payment_method: 'off',
    },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: now,
    status: 'active',
    test_clock: null,
    transfer_data: null,
    trial_end: null,
    trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: null,
  };
  state.insert('subscription', sub);
  // Stripe finalizes and pays the first invoice while creating the subscription.
  const invoice = newInvoice(state, sub, ctx, {
    reason: 'subscription_create',
    paid: true,
    periodStart: now,
    periodEnd,
  });
  sub.latest_invoice = invoice.id;
  state.emit('customer.subscription.created', sub, ctx);
  return sub;
}

export function createSubscription(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, [
    'cancel_at_period_end',
    'collection_method',
    'customer',
    'description',
    'items',
    'metadata',
    'payment_behavior',
  ]);
  const customer = str(params, 'customer');
  if (customer === undefined) throw missingParam('customer');
  state.get('customer', customer, ctx.livemode, 'customer');
  const items = itemsParam(state, params, 'items', ctx);
  requireRecurring(items, 'items');
  oneOf(params, 'payment_behavior', [
    'allow_incomplete',
    'default_incomplete',
    'error_if_incomplete',
    'pending_if_incomplete',
  ] as const);
  oneOf(params, 'collection_method', ['charge_automatically'] as const);
  const cancelAtPeriodEnd = bool(params, 'cancel_at_period_end');
  return startSubscription(state, customer, items, ctx, {
    metadata: applyMetadata({}, params),
    description: nullableStr(params, 'description', 500) ?? null,
    ...(cancelAtPeriodEnd !== undefined ? { cancelAtPeriodEnd } : {}),
  });
}

export function updateSubscription(state: StripeState, id: string, params: Params, ctx: Ctx): Json {
  allowOnly(params, ['cancel_at_period_end', 'description', 'metadata']);
  const sub = state.get('subscription', id, ctx.livemode);
  if (sub.status === 'canceled') {
    throw badRequest(`A canceled subscription can only update its cancellation_details and metadata.`);
  }
  const draft = structuredClone(sub);
  const cancelAtPeriodEnd = bool(params, 'cancel_at_period_end');
  if (cancelAtPeriodEnd !== undefined) {
    draft.cancel_at_period_end = cancelAtPeriodEnd;
    const item = ((sub.items as Json).data as Json[])[0] as Json;
    draft.cancel_at = cancelAtPeriodEnd ? item.current_period_end : null;
  }
  const description = nullableStr(params, 'description', 500);
  if (description !== undefined) draft.description = description;
  draft.metadata = applyMetadata(sub.metadata as Record<string, string>, params);
  state.change(sub, (o) => Object.assign(o, draft), 'customer.subscription.updated', ctx);
  return sub;
}

export function cancelSubscription(state: StripeState, id: string, ctx: Ctx, params: Params = {}): Json {
  allowOnly(params, ['cancellation_details', 'invoice_now', 'prorate']);
  const sub = state.get('subscription', id, ctx.livemode);
  if (sub.status === 'canceled') {
    throw badRequest(`No such subscription: '${id}'`, { code: 'resource_missing', param: 'id' });
  }
  const now = state.now();
  sub.status = 'canceled';
  sub.canceled_at = now;
  sub.ended_at = now;
  sub.cancellation_details = { comment: null, feedback: null, reason: 'cancellation_requested' };
  state.emit('customer.subscription.deleted', sub, ctx);
  return sub;
}

/** Test helper: the next renewal's payment fails: an open invoice, `invoice.payment_failed`, `past_due`. */
export function failSubscriptionPayment(state: StripeState, id: string, ctx: Ctx): Json {
  const sub = state.get('subscription', id, ctx.livemode);
  if (sub.status === 'canceled') throw badRequest('This subscription is canceled.');
  const item = ((sub.items as Json).data as Json[])[0] as Json;
  const start = item.current_period_end as number;
  const r = (item.price as Json).recurring as Json;
  const end = addInterval(start, r.interval as string, r.interval_count as number);
  const invoice = newInvoice(state, sub, ctx, {
    reason: 'subscription_cycle',
    paid: false,
    periodStart: start,
    periodEnd: end,
  });
  state.change(
    sub,
    (s) => {
      s.status = 'past_due';
      s.latest_invoice = invoice.id;
      for (const it of (s.items as Json).data as Json[]) {
        it.current_period_start = start;
        it.current_period_end = end;
      }
    },
    'customer.subscription.updated',
    ctx,
  );
  return invoice;
}

/**
 * Test helper: the customer pays the subscription's open invoice (a new card in the portal, then
 * Stripe's retry succeeds): the invoice is paid (`invoice.paid`, `invoice.payment_succeeded`) and a
 * past_due subscription is active again (`customer.subscription.updated`).
 */
export function paySubscriptionInvoice(state: StripeState, id: string, ctx: Ctx): Json {
  const sub = state.get('subscription', id, ctx.livemode);
  if (sub.status === 'canceled') throw badRequest('This subscription is canceled.');
  const invoiceId = sub.latest_invoice as string | null;
  const invoice = invoiceId ? state.get('invoice', invoiceId, ctx.livemode) : undefined;
  if (invoice?.status !== 'open') throw badRequest('This subscription has no open invoice to pay.');
  const now = state.now();
  state.change(
    invoice,
    (i) => {
      i.status = 'paid';
      i.amount_paid = i.amount_due;
      i.amount_remaining = 0;
      i.attempt_count = (i.attempt_count as number) + 1;
      i.next_payment_attempt = null;
      i.auto_advance = false;
      (i.status_transitions as Json).paid_at = now;
    },
    'invoice.paid',
    ctx,
  );
  state.emit('invoice.payment_succeeded', invoice, ctx);
  state.change(
    sub,
    (s) => {
      if (s.status === 'past_due') s.status = 'active';
    },
    'customer.subscription.updated',
    ctx,
  );
  return invoice;
}

export function listSubscriptions(state: StripeState, params: Params, livemode: boolean): Json {
  allowOnly(params, [
    'collection_method',
    'created',
    'customer',
    'ending_before',
    'limit',
    'price',
    'starting_after',
    'status',
  ]);
  const customer = str(params, 'customer');
  const price = str(params, 'price');
  const status = oneOf(params, 'status', [
    'active',
    'all',
    'canceled',
    'ended',
    'incomplete',
    'incomplete_expired',
    'past_due',
    'paused',
    'trialing',
    'unpaid',
  ] as const);
  return state.list(
    'subscription',
    livemode,
    params,
    '/v1/subscriptions',
    (s) =>
      (customer === undefined || s.customer === customer) &&
      (price === undefined ||
        ((s.items as Json).data as Json[]).some((it) => (it.price as Json).id === price)) &&
      (status === 'all' ||
        (status === undefined && s.status !== 'canceled') ||
        (status === 'ended' && s.status === 'canceled') ||
        s.status === status),
  );
}

// ---------------------------------------------------------------------------------------------
// Checkout Sessions (subscription mode) and billing portal sessions

export function createCheckoutSession(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, [
    'allow_promotion_codes',
    'cancel_url',
    'client_reference_id',
    'customer',
    'customer_email',
    'line_items',
    'locale',
    'metadata',
    'mode',
    'subscription_data',
    'success_url',
  ]);
  const mode = oneOf(params, 'mode', ['payment', 'setup', 'subscription'] as const);
  if (mode === undefined) throw missingParam('mode');
  if (mode !== 'subscription') {
    throw invalidParam('mode', `The simulator supports Checkout in subscription mode only (got '${mode}').`);
  }
  const successUrl = str(params, 'success_url');
  if (successUrl === undefined) throw missingParam('success_url');
  if (!/^https?:\/\//.test(successUrl)) throw invalidParam('success_url', 'Not a valid URL');
  const cancelUrl = str(params, 'cancel_url');
  if (cancelUrl !== undefined && !/^https?:\/\//.test(cancelUrl))
    throw invalidParam('cancel_url', 'Not a valid URL');
  const customer = str(params, 'customer');
  const customerEmail = str(params, 'customer_email');
  if (customer !== undefined && customerEmail !== undefined) {
    throw invalidParam(
      'customer_email',
      'You may only specify one of these parameters: customer, customer_email.',
    );
  }
  if (customer !== undefined) state.get('customer', customer, ctx.livemode, 'customer');
  const items = itemsParam(state, params, 'line_items', ctx);
  if (!items.some((it) => it.price.type === 'recurring')) {
    throw invalidParam(
      'line_items',
      'You must provide at least one recurring price in `subscription` mode when using prices.',
    );
  }
  requireRecurring(items, 'line_items');
  const subscriptionData = params.subscription_data;
  if (
    subscriptionData !== undefined &&
    (typeof subscriptionData !== 'object' || Array.isArray(subscriptionData))
  ) {
    throw invalidParam('subscription_data', 'Invalid object');
  }
  if (subscriptionData) allowOnlyNested(subscriptionData, 'subscription_data', ['metadata', 'description']);
  const now = state.now();
  const id = `cs_${ctx.livemode ? 'live' : 'test'}_${state.randomId(58)}`;
  const currency = items[0]?.price.currency as string;
  const amount = items.reduce((s, it) => s + (it.price.unit_amount as number) * it.quantity, 0);
  const session: Json = {
    id,
    object: 'checkout.session',
    after_expiration: null,
    allow_promotion_codes: bool(params, 'allow_promotion_codes') ?? null,
    amount_subtotal: amount,
    amount_total: amount,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: cancelUrl ?? null,
    client_reference_id: nullableStr(params, 'client_reference_id', 200) ?? null,
    client_secret: null,
    consent: null,
    consent_collection: null,
    created: now,
    currency,
    custom_fields: [],
    custom_text: {
      after_submit: null,
      shipping_address: null,
      submit: null,
      terms_of_service_acceptance: null,
    },
    customer: customer ?? null,
    customer_creation: customer ? null : 'always',
    customer_details: customerEmail
      ? { address: null, email: customerEmail, name: null, phone: null, tax_exempt: 'none', tax_ids: null }
      : null,
    customer_email: customerEmail ?? null,
    discounts: [],
    expires_at: now + DAY,
    invoice: null,
    invoice_creation: null,
    livemode: ctx.livemode,
    locale: str(params, 'locale') ?? null,
    metadata: applyMetadata({}, params),
    mode,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: 'always',
    payment_method_options: {},
    payment_method_types: ['card'],
    payment_status: 'unpaid',
    phone_number_collection: { enabled: false },
    recovered_from: null,
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: successUrl,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: `${state.baseUrl}/c/pay/${id}`,
  };
  const lineItems = items.map((it) => ({
    id: `li_${state.randomId(24)}`,
    object: 'item',
    amount_discount: 0,
    amount_subtotal: (it.price.unit_amount as number) * it.quantity,
    amount_tax: 0,
    amount_total: (it.price.unit_amount as number) * it.quantity,
    currency: it.price.currency,
    description: state.entry('product', it.price.product as string, ctx.livemode).obj.name,
    price: structuredClone(it.price),
    quantity: it.quantity,
  }));
  const subMeta =
    subscriptionData && typeof subscriptionData === 'object' && !Array.isArray(subscriptionData)
      ? applyMetadata({}, subscriptionData as Params)
      : {};
  state.hidden.set(id, {
    line_items: {
      object: 'list',
      data: lineItems,
      has_more: false,
      url: `/v1/checkout/sessions/${id}/line_items`,
    },
    items: items.map((it) => ({ price: it.price.id, quantity: it.quantity })),
    subscription_metadata: subMeta,
  });
  state.insert('checkout.session', session);
  return session;
}

/**
 * What happens when the customer pays on the hosted page: a customer (unless one was given), the
 * subscription and its first (paid) invoice, then `checkout.session.completed`.
 */
export function completeCheckoutSession(
  state: StripeState,
  id: string,
  livemode: boolean,
  details: { email?: string; name?: string } = {},
): Json {
  const ctx: Ctx = { livemode, requestId: null, idempotencyKey: null };
  const session = state.get('checkout.session', id, livemode);
  if (session.status !== 'open')
    throw badRequest(`This Checkout Session is no longer open (status: ${session.status}).`);
  if ((session.expires_at as number) <= state.now()) throw badRequest('This Checkout Session has expired.');
  const hidden = state.hidden.get(id) as Json;
  let customerId = session.customer as string | null;
  const email = (session.customer_email as string | null) ?? details.email ?? 'customer@example.com';
  if (!customerId) {
    const c = createCustomer(state, { email, ...(details.name ? { name: details.name } : {}) }, ctx);
    customerId = c.id as string;
  }
  const customer = state.get('customer', customerId, livemode);
  const sub = startSubscription(state, customerId, hidden.items as ItemInput[], ctx, {
    metadata: hidden.subscription_metadata as Record<string, string>,
  });
  session.status = 'complete';
  session.payment_status = 'paid';
  session.customer = customerId;
  session.subscription = sub.id;
  session.invoice = sub.latest_invoice;
  session.url = null;
  session.customer_details = {
    address: customer.address,
    email: customer.email,
    name: customer.name,
    phone: customer.phone,
    tax_exempt: customer.tax_exempt,
    tax_ids: [],
  };
  state.emit('checkout.session.completed', session, ctx);
  return session;
}

export function createPortalSession(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, ['configuration', 'customer', 'locale', 'return_url']);
  const customer = str(params, 'customer');
  if (customer === undefined) throw missingParam('customer');
  state.get('customer', customer, ctx.livemode, 'customer');
  const returnUrl = str(params, 'return_url');
  if (returnUrl !== undefined && !/^https?:\/\//.test(returnUrl))
    throw invalidParam('return_url', 'Not a valid URL');
  const id = state.newId('bps');
  const session: Json = {
    id,
    object: 'billing_portal.session',
    configuration: str(params, 'configuration') ?? `bpc_1${state.randomId(23)}`,
    created: state.now(),
    customer,
    customer_account: null,
    flow: null,
    livemode: ctx.livemode,
    locale: str(params, 'locale') ?? null,
    on_behalf_of: null,
    return_url: returnUrl ?? null,
    url: `${state.baseUrl}/p/session/${id}`,
  };
  state.insert('billing_portal.session', session);
  return session;
}
