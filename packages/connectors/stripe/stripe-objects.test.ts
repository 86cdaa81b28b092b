import { describe, expect, it } from 'vitest';
import { formEncode, keyMode, mapStripeError, missingPermission, stripeIdempotencyKey } from './stripe-api';
import { holdsExpected, isGone, toRecord } from './stripe-connector';
import { discoveredFields, metadataKeys, StripeValueError, toFields, toParams } from './stripe-objects';

const headers = (h: Record<string, string> = {}) => new Headers(h);

describe('Stripe wire format', () => {
  it('form-encodes nested hashes and lists as Stripe reads them; null unsets, undefined is left out', () => {
    const body = formEncode({
      name: 'Ann & Bob',
      metadata: { plan: 'gold', gone: null },
      recurring: { interval: 'month' },
      types: ['customer.created', 'customer.updated'],
      created: { gte: 1700000000 },
      active: false,
      skipped: undefined,
    });
    expect(body.split('&').map(decodeURIComponent)).toEqual([
      'name=Ann+&+Bob',
      'metadata[plan]=gold',
      'metadata[gone]=',
      'recurring[interval]=month',
      'types[0]=customer.created',
      'types[1]=customer.updated',
      'created[gte]=1700000000',
      'active=false',
    ]);
  });

  it('tells test keys from live keys, secret or restricted', () => {
    expect(keyMode('sk_test_abc')).toBe('test');
    expect(keyMode('rk_test_abc')).toBe('test');
    expect(keyMode('sk_live_abc')).toBe('live');
    expect(keyMode('rk_live_abc')).toBe('live');
    expect(keyMode('pk_live_abc')).toBeNull();
  });

  it('keeps idempotency keys within Stripe’s 255 characters, the same key for the same input', () => {
    const long = 'k'.repeat(300);
    expect(stripeIdempotencyKey(long)).toHaveLength('lockstep-'.length + 64);
    expect(stripeIdempotencyKey(long)).toBe(stripeIdempotencyKey(long));
    expect(stripeIdempotencyKey('short')).toBe('short');
  });
});

describe('Stripe errors', () => {
  it('maps a refused key to auth_invalid', () => {
    const e = mapStripeError(401, {
      error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****1234' },
    });
    expect(e.code).toBe('auth_invalid');
    expect(e.userFacingMessage).toMatch(/API key/);
  });

  it('names the permission a restricted key lacks', () => {
    const message =
      "The provided key 'rk_test_***abc' does not have the required permissions for this endpoint on account 'acct_1'. Having the 'rak_customer_write' permission would allow this request to continue.";
    expect(missingPermission(message)).toBe('rak_customer_write');
    const e = mapStripeError(403, { error: { type: 'invalid_request_error', message } });
    expect(e.code).toBe('permission_denied');
    expect(e.userFacingMessage).toContain('rak_customer_write');
    expect(e.userFacingMessage).toMatch(/restricted key/);
  });

  it('a Connect account the platform may no longer reach (account_invalid) asks to sign in again', () => {
    const e = mapStripeError(403, {
      error: {
        type: 'invalid_request_error',
        code: 'account_invalid',
        message:
          "The provided key 'sk_test_***abcd' does not have access to account 'acct_1X' (or that account does not exist). Application access may have been revoked.",
      },
    });
    expect(e.code).toBe('auth_invalid');
    expect(e.userFacingMessage).toMatch(/Sign in with Stripe again/);
  });

  it('maps 429s to rate_limited with no fixed wait (the client backs off), lock timeouts too', () => {
    const e = mapStripeError(
      429,
      { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests' } },
      headers({ 'stripe-should-retry': 'true' }),
    );
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBeNull();
    expect(mapStripeError(429, { error: { type: 'invalid_request_error', code: 'lock_timeout' } }).code).toBe(
      'rate_limited',
    );
  });

  it('maps a refused value to validation with Stripe’s message, a missing object to not_found', () => {
    const e = mapStripeError(400, {
      error: { type: 'invalid_request_error', param: 'email', message: 'Invalid email address: nope' },
    });
    expect(e.code).toBe('validation');
    expect(e.userFacingMessage).toContain('Invalid email address');
    expect(e.message).toContain('(email)');
    expect(
      mapStripeError(404, {
        error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such customer' },
      }).code,
    ).toBe('not_found');
  });

  it('honours Stripe-Should-Retry: a 409 still running is transient, a 500 Stripe says not to retry is final', () => {
    expect(
      mapStripeError(
        409,
        { error: { type: 'invalid_request_error' } },
        headers({ 'stripe-should-retry': 'true' }),
      ).code,
    ).toBe('transient');
    expect(
      mapStripeError(500, { error: { type: 'api_error' } }, headers({ 'stripe-should-retry': 'false' })).code,
    ).toBe('validation');
    expect(mapStripeError(500, { error: { type: 'api_error' } }).code).toBe('transient');
    expect(
      mapStripeError(400, { error: { type: 'idempotency_error', message: 'Keys for idempotent requests…' } })
        .code,
    ).toBe('validation');
  });
});

const customer = {
  id: 'cus_1',
  object: 'customer',
  email: 'Ann@Example.com',
  name: ' Ann ',
  description: null,
  phone: '+1 555',
  address: {
    line1: '1 Main St',
    line2: null,
    city: 'Springfield',
    state: null,
    postal_code: '12345',
    country: 'US',
  },
  currency: 'usd',
  balance: -500,
  delinquent: false,
  created: 1_700_000_000,
  livemode: false,
  metadata: { plan: 'gold', seats: '3' },
};

describe('Stripe values to canonical', () => {
  it('reads a customer: email normalised, address parts, times from unix seconds, metadata keys as text fields', () => {
    expect(toFields('customers', customer)).toEqual({
      email: 'ann@example.com',
      name: 'Ann',
      description: null,
      phone: '+1 555',
      'address.line1': '1 Main St',
      'address.line2': null,
      'address.city': 'Springfield',
      'address.state': null,
      'address.postal_code': '12345',
      'address.country': 'US',
      currency: 'usd',
      balance: '-500',
      delinquent: false,
      created: '2023-11-14T22:13:20.000Z',
      livemode: false,
      'metadata.plan': 'gold',
      'metadata.seats': '3',
    });
  });

  it('reads a price’s amount in minor units with its currency, its interval and product', () => {
    const fields = toFields('prices', {
      id: 'price_1',
      object: 'price',
      product: 'prod_1',
      unit_amount: 1999,
      currency: 'eur',
      recurring: { interval: 'month', interval_count: 1 },
      nickname: null,
      lookup_key: 'pro_monthly',
      tax_behavior: 'unspecified',
      type: 'recurring',
      billing_scheme: 'per_unit',
      active: true,
      created: 1_700_000_000,
      livemode: true,
      metadata: {},
    });
    expect(fields).toMatchObject({
      product: 'prod_1',
      unit_amount: { minor: '1999', code: 'EUR' },
      'recurring.interval': 'month',
      'recurring.interval_count': '1',
      lookup_key: 'pro_monthly',
      type: 'recurring',
      active: true,
      livemode: true,
    });
    // An expanded product reads as its id; a tiered price has no unit amount.
    expect(
      toFields('prices', {
        id: 'price_2',
        product: { id: 'prod_9', object: 'product' },
        unit_amount: null,
        currency: 'usd',
      }),
    ).toMatchObject({ product: 'prod_9', unit_amount: null });
  });

  it('reads a coupon’s fixed amount with its currency, a percent as a number, redeem_by as a date-time', () => {
    expect(
      toFields('coupons', {
        id: 'SUMMER',
        amount_off: 500,
        currency: 'usd',
        percent_off: null,
        duration: 'repeating',
        duration_in_months: 3,
        redeem_by: 1_800_000_000,
        name: 'Summer',
        valid: true,
        times_redeemed: 2,
        metadata: null,
      }),
    ).toMatchObject({
      amount_off: { minor: '500', code: 'USD' },
      percent_off: null,
      duration: 'repeating',
      duration_in_months: '3',
      redeem_by: '2027-01-15T08:00:00.000Z',
      times_redeemed: '2',
    });
  });

  it('reads an invoice’s totals as currency values and a subscription’s prices as a list', () => {
    expect(
      toFields('invoices', {
        id: 'in_1',
        currency: 'gbp',
        total: 1200,
        amount_due: 1200,
        amount_paid: 0,
        status: 'open',
      }),
    ).toMatchObject({
      total: { minor: '1200', code: 'GBP' },
      amount_paid: { minor: '0', code: 'GBP' },
      status: 'open',
    });
    expect(
      toFields('subscriptions', {
        id: 'sub_1',
        customer: 'cus_1',
        status: 'active',
        items: { data: [{ price: { id: 'price_b' } }, { price: { id: 'price_a' } }] },
      }),
    ).toMatchObject({ customer: 'cus_1', items: ['price_a', 'price_b'] });
  });

  it('collects the metadata keys of a page for discovery', () => {
    expect(
      metadataKeys([customer, { id: 'cus_2', metadata: { crm_id: 'x', plan: 'y' } }, { id: 'cus_3' }]),
    ).toEqual(['crm_id', 'plan', 'seats']);
  });
});

describe('canonical values to Stripe parameters', () => {
  it('writes an update: metadata per key (null unsets it), nested address, read-only fields left out', () => {
    expect(
      toParams(
        'customers',
        {
          email: 'Bob@Example.com',
          name: null,
          'address.city': 'Paris',
          'metadata.plan': 'silver',
          'metadata.seats': null,
          created: '2020-01-01T00:00:00.000Z',
          balance: '100',
          unknown_field: 'x',
        },
        'update',
      ),
    ).toEqual({
      email: 'bob@example.com',
      name: '',
      address: { city: 'Paris' },
      metadata: { plan: 'silver', seats: '' },
    });
  });

  it('writes a price’s amount with its currency and its interval on create; leaves create-only fields out of updates', () => {
    const fields = {
      product: 'prod_1',
      unit_amount: { minor: '2500', code: 'EUR' },
      'recurring.interval': 'year',
      nickname: 'Yearly',
      active: true,
    };
    expect(toParams('prices', fields, 'create')).toEqual({
      product: 'prod_1',
      unit_amount: '2500',
      currency: 'eur',
      recurring: { interval: 'year' },
      nickname: 'Yearly',
    });
    expect(toParams('prices', fields, 'update')).toEqual({ nickname: 'Yearly' });
  });

  it('writes a coupon’s redeem_by as unix seconds; refuses a value of the wrong type', () => {
    expect(
      toParams(
        'coupons',
        { percent_off: '12.5', duration: 'once', redeem_by: '2027-01-15T08:00:00.000Z' },
        'create',
      ),
    ).toEqual({ percent_off: '12.5', duration: 'once', redeem_by: 1_800_000_000 });
    expect(() => toParams('coupons', { percent_off: 'lots' }, 'create')).toThrow(StripeValueError);
  });

  it('round-trips a customer: what toParams writes reads back as the same canonical values', () => {
    const written = { email: 'c@example.com', name: 'C', 'metadata.k': 'v', 'address.country': 'DE' };
    const params = toParams('customers', written, 'create') as Record<string, unknown>;
    const read = toFields('customers', { id: 'cus_x', ...params });
    expect(read).toMatchObject(written);
  });
});

describe('deletes and conflicts', () => {
  it('takes deleted customers and coupons, archived products and prices as gone; canceled subscriptions stay', () => {
    expect(isGone('customers', { id: 'cus_1', deleted: true })).toBe(true);
    expect(isGone('customers', { id: 'cus_1' }, 'customer.deleted')).toBe(true);
    expect(isGone('coupons', { id: 'C' }, 'coupon.deleted')).toBe(true);
    expect(isGone('products', { id: 'prod_1', active: false }, 'product.updated')).toBe(true);
    expect(isGone('prices', { id: 'price_1', active: false })).toBe(true);
    expect(isGone('prices', { id: 'price_1', active: true }, 'price.updated')).toBe(false);
    expect(
      isGone('subscriptions', { id: 'sub_1', status: 'canceled' }, 'customer.subscription.deleted'),
    ).toBe(false);
  });

  it('compares expected values as the engine does (normalised), so only a real change is a conflict', () => {
    const current = toRecord('customers', customer);
    expect(holdsExpected('customers', current, { email: 'ANN@example.com', 'metadata.plan': 'gold' })).toBe(
      true,
    );
    expect(holdsExpected('customers', current, { name: 'Someone else' })).toBe(false);
    expect(holdsExpected('customers', current, { 'metadata.missing': null })).toBe(true);
  });
});

describe('discovery', () => {
  it('flags Stripe-set fields and whole read-only tables, marks create-only fields, adds metadata keys as text', () => {
    const customers = discoveredFields('customers', ['plan']);
    expect(customers.find((f) => f.remoteId === 'email')).toMatchObject({
      fieldType: 'email',
      readOnly: false,
    });
    expect(customers.find((f) => f.remoteId === 'created')).toMatchObject({
      fieldType: 'datetime',
      readOnly: true,
    });
    expect(customers.find((f) => f.remoteId === 'metadata.plan')).toMatchObject({
      fieldType: 'text',
      readOnly: false,
      options: { stripeMetadataKey: 'plan' },
    });
    const prices = discoveredFields('prices', []);
    expect(prices.find((f) => f.remoteId === 'unit_amount')).toMatchObject({
      fieldType: 'currency',
      options: { createOnly: true, required: true },
    });
    expect(discoveredFields('invoices', ['x']).every((f) => f.readOnly)).toBe(true);
  });
});
