/**
 * A realistic small billing account (test mode): 4 products with monthly and yearly prices (one
 * archived), a coupon, 25 customers of the same companies as the CRM seeds (names, emails,
 * phones, addresses, a `crm_id` in metadata), and subscriptions for 10 of them with their first
 * invoices. Made over the 60 days before the simulator's clock (events older than 30 days are
 * already out of the events list, as at Stripe). Deterministic apart from the id generator.
 */
import { startSubscription } from './billing.ts';
import { dashboard, type StripeState } from './model.ts';
import { toFormParams } from './params.ts';
import { createCoupon, createCustomer, createPrice, createProduct, updatePrice } from './resources.ts';

export type BillingSeed = {
  customers: string[];
  products: string[];
  prices: string[];
  subscriptions: string[];
  coupons: string[];
};

const COMPANIES: [string, string, string, string, string][] = [
  ['Acme Analytics', 'acme-analytics.com', 'Boston', 'MA', 'US'],
  ['Northwind Traders', 'northwind.example', 'Seattle', 'WA', 'US'],
  ['Globex Logistics', 'globex-logistics.com', 'Rotterdam', '', 'NL'],
  ['Initech Finance', 'initech.io', 'London', '', 'GB'],
  ['Umbrella Health', 'umbrella-health.org', 'Toronto', 'ON', 'CA'],
];

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Moreau', 'Okafor', 'Lindqvist', 'Sato', 'Garcia'];

const PRODUCTS: [string, string, number, number][] = [
  ['Lockstep Starter', 'Two-way sync for one connection', 1900, 19_000],
  ['Lockstep Team', 'Up to ten connections and shared mappings', 4900, 49_000],
  ['Lockstep Business', 'Unlimited connections, audit log and SSO', 14_900, 149_000],
  ['Onboarding', 'A guided setup session', 25_000, 0],
];

const DAY = 86_400;

export function seedBilling(state: StripeState, options: { customers?: number } = {}): BillingSeed {
  const ctx = dashboard(false);
  const start = state.now() - 60 * DAY;
  const seed: BillingSeed = { customers: [], products: [], prices: [], subscriptions: [], coupons: [] };

  state.at(start, () => {
    for (const [name, description, monthly, yearly] of PRODUCTS) {
      const p = createProduct(
        state,
        toFormParams({ name, description, metadata: { tier: name.split(' ').pop() } }),
        ctx,
      );
      seed.products.push(p.id as string);
      if (yearly === 0) {
        const one = createPrice(
          state,
          toFormParams({ product: p.id, currency: 'usd', unit_amount: monthly }),
          ctx,
        );
        seed.prices.push(one.id as string);
        continue;
      }
      for (const [interval, amount] of [
        ['month', monthly],
        ['year', yearly],
      ] as const) {
        const price = createPrice(
          state,
          toFormParams({
            product: p.id,
            currency: 'usd',
            unit_amount: amount,
            recurring: { interval },
            lookup_key: `${name.toLowerCase().replace(/\s+/g, '_')}_${interval}ly`,
            nickname: `${name} (${interval}ly)`,
          }),
          ctx,
        );
        seed.prices.push(price.id as string);
      }
    }
    const c = createCoupon(
      state,
      toFormParams({ name: 'Launch 20%', percent_off: 20, duration: 'repeating', duration_in_months: 3 }),
      ctx,
    );
    seed.coupons.push(c.id as string);
  });
  // A price change: the old Starter monthly price is archived for a new one.
  state.at(start + DAY, () => {
    const old = seed.prices[0] as string;
    const replacement = createPrice(
      state,
      toFormParams({
        product: seed.products[0],
        currency: 'usd',
        unit_amount: 2400,
        recurring: { interval: 'month' },
        nickname: 'Lockstep Starter (monthly, 2026)',
      }),
      ctx,
    );
    updatePrice(state, old, toFormParams({ active: false }), ctx);
    seed.prices.push(replacement.id as string);
  });

  const wanted = options.customers ?? 25;
  for (let i = 0; i < wanted; i++) {
    const [company, domain, city, region, country] = COMPANIES[
      i % COMPANIES.length
    ] as (typeof COMPANIES)[number];
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const suffix = i < FIRST.length * LAST.length ? '' : String(i);
    const created = start + 2 * DAY + Math.floor((i * 55 * DAY) / Math.max(wanted, 1));
    const customer = state.at(created, () =>
      createCustomer(
        state,
        toFormParams({
          email: `${first}.${last}${suffix}@${domain}`.toLowerCase(),
          name: `${first} ${last}`,
          phone: `+1 555 01${String(i % 100).padStart(2, '0')}`,
          description: company,
          address: {
            line1: `${10 + i} Market Street`,
            city,
            state: region || undefined,
            postal_code: `${10_000 + i * 7}`,
            country,
          },
          metadata: { crm_id: `crm-${1000 + i}`, company },
        }),
        ctx,
      ),
    );
    seed.customers.push(customer.id as string);
    if (i % 5 < 2) {
      // Ten subscribers, monthly or yearly, on Team or Business (index 2..5 = Team/Business prices).
      const price = seed.prices[2 + (i % 4)] as string;
      const sub = state.at(created + 3600, () =>
        startSubscription(state, customer.id as string, [{ price, quantity: 1 + (i % 3) }], ctx, {
          metadata: { crm_id: `crm-${1000 + i}` },
        }),
      );
      seed.subscriptions.push(sub.id as string);
    }
  }
  return seed;
}
