/**
 * Customers, products, prices and coupons: validation, object shapes and events, from Stripe's
 * OpenAPI spec (paths /v1/customers, /v1/products, /v1/prices, /v1/coupons and their schemas).
 */
import { badRequest, noSuch } from './errors.ts';
import type { Ctx, Json, StripeState } from './model.ts';
import {
  allowOnly,
  allowOnlyNested,
  applyMetadata,
  bool,
  type FormValue,
  int,
  invalidParam,
  missingParam,
  nullableStr,
  obj,
  oneOf,
  type Params,
  str,
  stringList,
} from './params.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Stripe refuses '' for fields that cannot be unset. */
function cannotUnset(name: string) {
  return invalidParam(
    name,
    `You passed an empty string for '${name}'. We assume empty values are an attempt to unset a parameter; however '${name}' cannot be unset. You should remove '${name}' from your request or supply a non-empty value.`,
  );
}

function requiredString(params: Params, name: string, create: boolean): string | undefined {
  const v = str(params, name);
  if (v === undefined) {
    if (create) throw missingParam(name);
    return undefined;
  }
  if (v === '') throw cannotUnset(name);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Customers

const CUSTOMER_PARAMS = [
  'address',
  'description',
  'email',
  'metadata',
  'name',
  'phone',
  'preferred_locales',
  'tax_exempt',
];
const ADDRESS_FIELDS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'];

function addressParam(params: Params): Json | null | undefined {
  const v = params.address;
  if (v === undefined) return undefined;
  if (v === '') return null;
  const a = obj(params, 'address') as Record<string, FormValue>;
  allowOnlyNested(a, 'address', ADDRESS_FIELDS);
  const out: Json = {};
  for (const f of ADDRESS_FIELDS) {
    const x = a[f];
    if (x !== undefined && typeof x !== 'string') throw invalidParam(`address[${f}]`, 'Invalid string');
    out[f] = x === undefined || x === '' ? null : x;
  }
  return out;
}

function applyCustomerParams(c: Json, params: Params): void {
  const email = nullableStr(params, 'email', 512);
  if (email !== undefined) {
    if (email !== null && !EMAIL.test(email)) {
      throw invalidParam('email', `Invalid email address: ${email}`, 'email_invalid');
    }
    c.email = email;
  }
  for (const f of ['name', 'phone', 'description'] as const) {
    const v = nullableStr(params, f, f === 'phone' ? 20 : 256);
    if (v !== undefined) c[f] = v;
  }
  const address = addressParam(params);
  if (address !== undefined) c.address = address;
  const locales = stringList(params, 'preferred_locales');
  if (locales !== undefined) c.preferred_locales = locales;
  const taxExempt = oneOf(params, 'tax_exempt', ['exempt', 'none', 'reverse'] as const);
  if (taxExempt !== undefined) c.tax_exempt = taxExempt;
  c.metadata = applyMetadata(c.metadata as Record<string, string>, params);
}

export function createCustomer(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, CUSTOMER_PARAMS);
  const c: Json = {
    id: `cus_${state.randomId(14)}`,
    object: 'customer',
    address: null,
    balance: 0,
    created: state.now(),
    currency: null,
    default_source: null,
    delinquent: false,
    description: null,
    discount: null,
    email: null,
    invoice_prefix: state.randomId(8).toUpperCase(),
    invoice_settings: {
      custom_fields: null,
      default_payment_method: null,
      footer: null,
      rendering_options: null,
    },
    livemode: ctx.livemode,
    metadata: {},
    name: null,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
  applyCustomerParams(c, params);
  state.insert('customer', c);
  state.emit('customer.created', c, ctx);
  return c;
}

export function updateCustomer(state: StripeState, id: string, params: Params, ctx: Ctx): Json {
  allowOnly(params, CUSTOMER_PARAMS);
  const c = state.get('customer', id, ctx.livemode);
  const draft = structuredClone(c);
  applyCustomerParams(draft, params);
  state.change(c, (o) => Object.assign(o, draft), 'customer.updated', ctx);
  return c;
}

/** A deleted customer reads as `{id, object, deleted: true}`; its subscriptions are canceled. */
export function deleteCustomer(state: StripeState, id: string, ctx: Ctx): Json {
  const c = state.get('customer', id, ctx.livemode);
  for (const sub of state.all('subscription', ctx.livemode)) {
    if (sub.customer === id && sub.status !== 'canceled') {
      state.change(
        sub,
        (s) => {
          s.status = 'canceled';
          s.canceled_at = state.now();
          s.ended_at = state.now();
          s.cancellation_details = { comment: null, feedback: null, reason: 'cancellation_requested' };
        },
        'customer.subscription.deleted',
        ctx,
      );
    }
  }
  state.markDeleted('customer', id);
  state.emit('customer.deleted', c, ctx);
  return deletedStub(id, 'customer');
}

export function retrieveCustomer(state: StripeState, id: string, livemode: boolean): Json {
  const e = state.entry('customer', id, livemode);
  return e.deleted ? deletedStub(id, 'customer') : e.obj;
}

export const deletedStub = (id: string, object: string): Json => ({ id, object, deleted: true });

export function listCustomers(state: StripeState, params: Params, livemode: boolean): Json {
  allowOnly(params, ['created', 'email', 'ending_before', 'limit', 'starting_after', 'test_clock']);
  const email = str(params, 'email');
  return state.list('customer', livemode, params, '/v1/customers', (c) =>
    email === undefined ? true : c.email === email,
  );
}

// ---------------------------------------------------------------------------------------------
// Products

const PRODUCT_UPDATE_PARAMS = [
  'active',
  'default_price',
  'description',
  'images',
  'metadata',
  'name',
  'statement_descriptor',
  'unit_label',
  'url',
];

function applyProductParams(state: StripeState, p: Json, params: Params, create: boolean, ctx: Ctx): void {
  const name = requiredString(params, 'name', create);
  if (name !== undefined) p.name = name;
  const active = bool(params, 'active');
  if (active !== undefined) p.active = active;
  for (const f of ['description', 'unit_label', 'url', 'statement_descriptor'] as const) {
    const v = nullableStr(params, f, f === 'description' ? 40_000 : f === 'url' ? 5000 : 22);
    if (v !== undefined) p[f] = v;
  }
  const images = stringList(params, 'images');
  if (images !== undefined) p.images = images;
  const defaultPrice = nullableStr(params, 'default_price');
  if (defaultPrice !== undefined) {
    if (defaultPrice !== null) {
      const price = state.get('price', defaultPrice, ctx.livemode, 'default_price');
      if (price.product !== p.id) {
        throw invalidParam('default_price', `The price ${defaultPrice} does not belong to product ${p.id}.`);
      }
      if (price.active !== true) {
        throw invalidParam(
          'default_price',
          `The price ${defaultPrice} is archived and cannot be the default price.`,
        );
      }
    }
    p.default_price = defaultPrice;
  }
  p.metadata = applyMetadata(p.metadata as Record<string, string>, params);
}

export function createProduct(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, [...PRODUCT_UPDATE_PARAMS.filter((p) => p !== 'default_price'), 'id', 'shippable']);
  const customId = str(params, 'id');
  if (customId !== undefined && state.has('product', customId)) {
    throw badRequest('Product already exists.', { code: 'resource_already_exists', param: 'id' });
  }
  const now = state.now();
  const p: Json = {
    id: customId ?? `prod_${state.randomId(14)}`,
    object: 'product',
    active: true,
    created: now,
    default_price: null,
    description: null,
    images: [],
    livemode: ctx.livemode,
    marketing_features: [],
    metadata: {},
    name: '',
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    type: 'service',
    unit_label: null,
    updated: now,
    url: null,
  };
  applyProductParams(state, p, params, true, ctx);
  const shippable = bool(params, 'shippable');
  if (shippable !== undefined) p.shippable = shippable;
  state.insert('product', p);
  state.emit('product.created', p, ctx);
  return p;
}

export function updateProduct(state: StripeState, id: string, params: Params, ctx: Ctx): Json {
  allowOnly(params, PRODUCT_UPDATE_PARAMS);
  const p = state.get('product', id, ctx.livemode);
  const draft = structuredClone(p);
  applyProductParams(state, draft, params, false, ctx);
  state.change(
    p,
    (o) => {
      const before = JSON.stringify(o);
      Object.assign(o, draft);
      if (JSON.stringify(o) !== before) o.updated = state.now();
    },
    'product.updated',
    ctx,
  );
  return p;
}

/** A product with prices cannot be deleted (archive it with active=false instead). */
export function deleteProduct(state: StripeState, id: string, ctx: Ctx): Json {
  const p = state.get('product', id, ctx.livemode);
  if (state.all('price', ctx.livemode).some((price) => price.product === id)) {
    throw badRequest('This product cannot be deleted because it has one or more user-created prices.');
  }
  state.drop('product', id);
  state.emit('product.deleted', p, ctx);
  return deletedStub(id, 'product');
}

export function listProducts(state: StripeState, params: Params, livemode: boolean): Json {
  allowOnly(params, [
    'active',
    'created',
    'ending_before',
    'ids',
    'limit',
    'shippable',
    'starting_after',
    'url',
  ]);
  const active = bool(params, 'active');
  const ids = stringList(params, 'ids');
  const url = str(params, 'url');
  return state.list(
    'product',
    livemode,
    params,
    '/v1/products',
    (p) =>
      (active === undefined || p.active === active) &&
      (ids === undefined || ids.includes(p.id as string)) &&
      (url === undefined || p.url === url),
  );
}

// ---------------------------------------------------------------------------------------------
// Prices: amounts are immutable (the update endpoint takes no amount); archive with active=false.

const INTERVALS = ['day', 'week', 'month', 'year'] as const;

function recurringParam(params: Params): Json | null | undefined {
  const r = obj(params, 'recurring');
  if (r === undefined) return undefined;
  allowOnlyNested(r, 'recurring', ['interval', 'interval_count', 'usage_type', 'trial_period_days']);
  const sub = r as Params;
  const interval = oneOf(sub, 'interval', INTERVALS);
  if (interval === undefined) throw missingParam('recurring[interval]');
  const count = int(sub, 'interval_count', 1) ?? 1;
  const maxCount = { day: 1095, week: 156, month: 36, year: 3 }[interval];
  if (count > maxCount) {
    throw invalidParam(
      'recurring[interval_count]',
      'The maximum billing frequency is three years (1095 days, 156 weeks or 36 months).',
    );
  }
  return {
    interval,
    interval_count: count,
    meter: null,
    trial_period_days: int(sub, 'trial_period_days', 0) ?? null,
    usage_type: oneOf(sub, 'usage_type', ['licensed', 'metered'] as const) ?? 'licensed',
  };
}

function checkLookupKey(
  state: StripeState,
  key: string | null | undefined,
  self: string | null,
  livemode: boolean,
) {
  if (!key) return;
  const other = state.all('price', livemode).find((p) => p.lookup_key === key && p.id !== self);
  if (other) {
    throw invalidParam('lookup_key', `A price (\`${other.id}\`) already uses that lookup key.`);
  }
}

export function createPrice(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, [
    'active',
    'currency',
    'lookup_key',
    'metadata',
    'nickname',
    'product',
    'product_data',
    'recurring',
    'tax_behavior',
    'unit_amount',
    'unit_amount_decimal',
  ]);
  const currency = str(params, 'currency');
  if (currency === undefined) throw missingParam('currency');
  if (!/^[a-zA-Z]{3}$/.test(currency)) throw invalidParam('currency', `Invalid currency: ${currency}`);
  let productId = str(params, 'product');
  const productData = obj(params, 'product_data');
  if (productId !== undefined && productData !== undefined) {
    throw invalidParam('product', 'You may only specify one of these parameters: product, product_data.');
  }
  if (productId === undefined && productData === undefined) throw missingParam('product');
  if (productId !== undefined) state.get('product', productId, ctx.livemode, 'product');
  const unitAmount = int(params, 'unit_amount', 0, 99_999_999);
  const unitAmountDecimal = str(params, 'unit_amount_decimal');
  if (unitAmount === undefined && unitAmountDecimal === undefined) throw missingParam('unit_amount');
  if (unitAmount !== undefined && unitAmountDecimal !== undefined) {
    throw invalidParam(
      'unit_amount',
      'You may only specify one of these parameters: unit_amount, unit_amount_decimal.',
    );
  }
  if (unitAmountDecimal !== undefined && !/^\d+(\.\d{1,12})?$/.test(unitAmountDecimal)) {
    throw invalidParam('unit_amount_decimal', `Invalid decimal: ${unitAmountDecimal}`);
  }
  const recurring = recurringParam(params);
  const lookupKey = nullableStr(params, 'lookup_key', 200);
  checkLookupKey(state, lookupKey, null, ctx.livemode);
  if (productData !== undefined) {
    allowOnlyNested(productData, 'product_data', [
      'name',
      'active',
      'metadata',
      'statement_descriptor',
      'unit_label',
    ]);
    productId = createProduct(state, productData as Params, ctx).id as string;
  }
  const price: Json = {
    id: state.newId('price'),
    object: 'price',
    active: bool(params, 'active') ?? true,
    billing_scheme: 'per_unit',
    created: state.now(),
    currency: currency.toLowerCase(),
    custom_unit_amount: null,
    livemode: ctx.livemode,
    lookup_key: lookupKey ?? null,
    metadata: applyMetadata({}, params),
    nickname: nullableStr(params, 'nickname') ?? null,
    product: productId,
    recurring: recurring ?? null,
    tax_behavior:
      oneOf(params, 'tax_behavior', ['exclusive', 'inclusive', 'unspecified'] as const) ?? 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: recurring ? 'recurring' : 'one_time',
    unit_amount:
      unitAmount ??
      (unitAmountDecimal !== undefined && /^\d+$/.test(unitAmountDecimal) ? Number(unitAmountDecimal) : null),
    unit_amount_decimal: unitAmountDecimal ?? String(unitAmount),
  };
  state.insert('price', price);
  state.emit('price.created', price, ctx);
  return price;
}

export function updatePrice(state: StripeState, id: string, params: Params, ctx: Ctx): Json {
  allowOnly(params, ['active', 'lookup_key', 'metadata', 'nickname', 'tax_behavior', 'transfer_lookup_key']);
  const price = state.get('price', id, ctx.livemode);
  const draft = structuredClone(price);
  const active = bool(params, 'active');
  if (active !== undefined) {
    if (active === false && price.active === true) {
      const product = state.get('product', price.product as string, ctx.livemode);
      if (product.default_price === id) {
        throw badRequest('This price cannot be archived because it is the default price of its product.', {
          param: 'active',
        });
      }
    }
    draft.active = active;
  }
  const nickname = nullableStr(params, 'nickname');
  if (nickname !== undefined) draft.nickname = nickname;
  const lookupKey = nullableStr(params, 'lookup_key', 200);
  if (lookupKey !== undefined) {
    const transfer = bool(params, 'transfer_lookup_key') ?? false;
    if (transfer && lookupKey) {
      const other = state.all('price', ctx.livemode).find((p) => p.lookup_key === lookupKey && p.id !== id);
      if (other) {
        state.change(
          other,
          (o) => {
            o.lookup_key = null;
          },
          'price.updated',
          ctx,
        );
      }
    } else {
      checkLookupKey(state, lookupKey, id, ctx.livemode);
    }
    draft.lookup_key = lookupKey;
  }
  const taxBehavior = oneOf(params, 'tax_behavior', ['exclusive', 'inclusive', 'unspecified'] as const);
  if (taxBehavior !== undefined) {
    if (price.tax_behavior !== 'unspecified' && taxBehavior !== price.tax_behavior) {
      throw invalidParam(
        'tax_behavior',
        'tax_behavior cannot be changed once it is set to inclusive or exclusive.',
      );
    }
    draft.tax_behavior = taxBehavior;
  }
  draft.metadata = applyMetadata(price.metadata as Record<string, string>, params);
  state.change(price, (o) => Object.assign(o, draft), 'price.updated', ctx);
  return price;
}

export function listPrices(state: StripeState, params: Params, livemode: boolean): Json {
  allowOnly(params, [
    'active',
    'created',
    'currency',
    'ending_before',
    'limit',
    'lookup_keys',
    'product',
    'starting_after',
    'type',
  ]);
  // The reference: "Returns a list of your active prices ... For the list of inactive prices,
  // set active to false."
  const active = bool(params, 'active') ?? true;
  const product = str(params, 'product');
  const currency = str(params, 'currency');
  const type = oneOf(params, 'type', ['one_time', 'recurring'] as const);
  const lookupKeys = stringList(params, 'lookup_keys');
  return state.list(
    'price',
    livemode,
    params,
    '/v1/prices',
    (p) =>
      p.active === active &&
      (product === undefined || p.product === product) &&
      (currency === undefined || p.currency === currency.toLowerCase()) &&
      (type === undefined || p.type === type) &&
      (lookupKeys === undefined || lookupKeys.includes(p.lookup_key as string)),
  );
}

// ---------------------------------------------------------------------------------------------
// Coupons

export function createCoupon(state: StripeState, params: Params, ctx: Ctx): Json {
  allowOnly(params, [
    'amount_off',
    'currency',
    'duration',
    'duration_in_months',
    'id',
    'max_redemptions',
    'metadata',
    'name',
    'percent_off',
    'redeem_by',
  ]);
  const customId = str(params, 'id');
  if (customId !== undefined && state.has('coupon', customId)) {
    throw badRequest('Coupon already exists.', { code: 'resource_already_exists', param: 'id' });
  }
  const percentRaw = str(params, 'percent_off');
  const amountOff = int(params, 'amount_off', 1);
  if (percentRaw === undefined && amountOff === undefined) throw missingParam('percent_off');
  if (percentRaw !== undefined && amountOff !== undefined) {
    throw invalidParam(
      'percent_off',
      'You may only specify one of these parameters: amount_off, percent_off.',
    );
  }
  let percentOff: number | null = null;
  if (percentRaw !== undefined) {
    percentOff = Number(percentRaw);
    if (!Number.isFinite(percentOff) || percentOff <= 0 || percentOff > 100) {
      throw invalidParam('percent_off', 'Invalid percent_off: must be greater than 0 and at most 100');
    }
  }
  const currency = str(params, 'currency');
  if (amountOff !== undefined && currency === undefined) throw missingParam('currency');
  const duration = oneOf(params, 'duration', ['forever', 'once', 'repeating'] as const) ?? 'once';
  const months = int(params, 'duration_in_months', 1);
  if (duration === 'repeating' && months === undefined) throw missingParam('duration_in_months');
  const c: Json = {
    id: customId ?? state.randomId(8),
    object: 'coupon',
    amount_off: amountOff ?? null,
    created: state.now(),
    currency: currency?.toLowerCase() ?? null,
    duration,
    duration_in_months: duration === 'repeating' ? (months ?? null) : null,
    livemode: ctx.livemode,
    max_redemptions: int(params, 'max_redemptions', 1) ?? null,
    metadata: applyMetadata({}, params),
    name: nullableStr(params, 'name', 40) ?? null,
    percent_off: percentOff,
    redeem_by: int(params, 'redeem_by') ?? null,
    times_redeemed: 0,
    valid: true,
  };
  state.insert('coupon', c);
  state.emit('coupon.created', c, ctx);
  return c;
}

export function updateCoupon(state: StripeState, id: string, params: Params, ctx: Ctx): Json {
  allowOnly(params, ['metadata', 'name']);
  const c = state.get('coupon', id, ctx.livemode);
  const draft = structuredClone(c);
  const name = nullableStr(params, 'name', 40);
  if (name !== undefined) draft.name = name;
  draft.metadata = applyMetadata(c.metadata as Record<string, string>, params);
  state.change(c, (o) => Object.assign(o, draft), 'coupon.updated', ctx);
  return c;
}

export function deleteCoupon(state: StripeState, id: string, ctx: Ctx): Json {
  const c = state.get('coupon', id, ctx.livemode);
  state.drop('coupon', id);
  state.emit('coupon.deleted', c, ctx);
  return deletedStub(id, 'coupon');
}

export { noSuch };
