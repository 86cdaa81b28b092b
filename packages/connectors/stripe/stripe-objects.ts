/**
 * The Stripe objects Lockstep syncs, as tables, and their values both ways. Stripe has no schema
 * API: each table's fields are fixed here from Stripe's API reference (the object's attributes,
 * and which of them its create and update endpoints take), plus one text field per metadata key
 * found on the account's objects (`metadata.<key>`; metadata values are strings).
 *
 * - customers, products, prices, coupons: read and written; subscriptions and invoices read-only.
 * - amounts are canonical currency values (minor units with the currency: a price's `unit_amount`
 *   with its `currency`, a coupon's `amount_off`, an invoice's totals); times are unix seconds on
 *   the wire and ISO date-times here; booleans stay booleans.
 * - a field is `readOnly` when Stripe sets it; `createOnly` when Stripe takes it on create but not
 *   on update (a price's amount, interval and product; a coupon's discount): for prices a change of
 *   one makes a new price that replaces the old (see the connector), for coupons it is refused.
 */
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  type Currency,
  normalizeValue,
} from '@lockstep/engine';

export const STRIPE_TABLES = [
  'customers',
  'products',
  'prices',
  'coupons',
  'subscriptions',
  'invoices',
] as const;
export type StripeTable = (typeof STRIPE_TABLES)[number];

export const isStripeTable = (t: string): t is StripeTable =>
  (STRIPE_TABLES as readonly string[]).includes(t);

export type StripeObject = Record<string, unknown> & { id: string; object?: string; metadata?: unknown };

export type StripeFieldDef = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  /** Taken on create, not on update. */
  createOnly?: boolean;
  choices?: string[];
  /** Required by Stripe on create. */
  required?: boolean;
  /**
   * How the value sits on the wire: a dotted path (`address.city`), unix seconds (`time`), an amount
   * with the object's `currency` (`amount`, the path of the amount), a list of ids (`ids`).
   */
  wire?: 'time' | 'amount' | 'ids' | 'expandable';
  /** For `ids`: the path to the list and the id inside each item. */
  list?: { path: string; id: string };
};

const t = (
  remoteId: string,
  name: string,
  fieldType: CanonicalFieldType,
  extra: Partial<StripeFieldDef> = {},
): StripeFieldDef => ({ remoteId, name, fieldType, readOnly: false, ...extra });
const ro = (
  remoteId: string,
  name: string,
  fieldType: CanonicalFieldType,
  extra: Partial<StripeFieldDef> = {},
) => t(remoteId, name, fieldType, { readOnly: true, ...extra });
const time = (remoteId: string, name: string) => ro(remoteId, name, 'datetime', { wire: 'time' });

const ADDRESS_PARTS = ['line1', 'line2', 'city', 'state', 'postal_code', 'country'] as const;
const ADDRESS_NAMES: Record<(typeof ADDRESS_PARTS)[number], string> = {
  line1: 'Address line 1',
  line2: 'Address line 2',
  city: 'City',
  state: 'State',
  postal_code: 'Postal code',
  country: 'Country',
};

export const STRIPE_FIELDS: Record<StripeTable, StripeFieldDef[]> = {
  customers: [
    t('email', 'Email', 'email'),
    t('name', 'Name', 'text'),
    t('description', 'Description', 'text'),
    t('phone', 'Phone', 'phone'),
    ...ADDRESS_PARTS.map((p) => t(`address.${p}`, ADDRESS_NAMES[p], 'text')),
    ro('currency', 'Currency', 'text'),
    ro('balance', 'Balance (minor units)', 'number'),
    ro('delinquent', 'Delinquent', 'boolean'),
    time('created', 'Created'),
    ro('livemode', 'Live mode', 'boolean'),
  ],
  products: [
    t('name', 'Name', 'text', { required: true }),
    t('description', 'Description', 'text'),
    t('unit_label', 'Unit label', 'text'),
    t('url', 'URL', 'url'),
    t('statement_descriptor', 'Statement descriptor', 'text'),
    ro('default_price', 'Default price', 'text', { wire: 'expandable' }),
    ro('active', 'Active', 'boolean'),
    time('created', 'Created'),
    time('updated', 'Updated'),
    ro('livemode', 'Live mode', 'boolean'),
  ],
  prices: [
    t('product', 'Product', 'text', { createOnly: true, required: true, wire: 'expandable' }),
    t('unit_amount', 'Amount', 'currency', { createOnly: true, required: true, wire: 'amount' }),
    t('nickname', 'Nickname', 'text'),
    t('lookup_key', 'Lookup key', 'text'),
    t('recurring.interval', 'Billing interval', 'single_select', {
      createOnly: true,
      choices: ['day', 'week', 'month', 'year'],
    }),
    t('recurring.interval_count', 'Intervals between billings', 'number', { createOnly: true }),
    t('tax_behavior', 'Tax behavior', 'single_select', {
      choices: ['exclusive', 'inclusive', 'unspecified'],
    }),
    ro('type', 'Type', 'single_select', { choices: ['one_time', 'recurring'] }),
    ro('billing_scheme', 'Billing scheme', 'single_select', { choices: ['per_unit', 'tiered'] }),
    ro('active', 'Active', 'boolean'),
    time('created', 'Created'),
    ro('livemode', 'Live mode', 'boolean'),
  ],
  coupons: [
    t('name', 'Name', 'text'),
    t('percent_off', 'Percent off', 'number', { createOnly: true }),
    t('amount_off', 'Amount off', 'currency', { createOnly: true, wire: 'amount' }),
    t('duration', 'Duration', 'single_select', {
      createOnly: true,
      choices: ['forever', 'once', 'repeating'],
    }),
    t('duration_in_months', 'Duration in months', 'number', { createOnly: true }),
    t('max_redemptions', 'Max redemptions', 'number', { createOnly: true }),
    t('redeem_by', 'Redeem by', 'datetime', { createOnly: true, wire: 'time' }),
    ro('times_redeemed', 'Times redeemed', 'number'),
    ro('valid', 'Valid', 'boolean'),
    time('created', 'Created'),
    ro('livemode', 'Live mode', 'boolean'),
  ],
  subscriptions: [
    ro('customer', 'Customer', 'text', { wire: 'expandable' }),
    ro('status', 'Status', 'single_select', {
      choices: [
        'active',
        'canceled',
        'incomplete',
        'incomplete_expired',
        'past_due',
        'paused',
        'trialing',
        'unpaid',
      ],
    }),
    ro('items', 'Prices', 'multi_select', { wire: 'ids', list: { path: 'items.data', id: 'price.id' } }),
    ro('description', 'Description', 'text'),
    ro('currency', 'Currency', 'text'),
    ro('collection_method', 'Collection method', 'single_select', {
      choices: ['charge_automatically', 'send_invoice'],
    }),
    ro('cancel_at_period_end', 'Cancels at period end', 'boolean'),
    time('cancel_at', 'Cancels at'),
    time('canceled_at', 'Canceled at'),
    time('ended_at', 'Ended at'),
    time('start_date', 'Start date'),
    time('trial_start', 'Trial start'),
    time('trial_end', 'Trial end'),
    ro('latest_invoice', 'Latest invoice', 'text', { wire: 'expandable' }),
    time('created', 'Created'),
    ro('livemode', 'Live mode', 'boolean'),
  ],
  invoices: [
    ro('number', 'Number', 'text'),
    ro('customer', 'Customer', 'text', { wire: 'expandable' }),
    ro('customer_email', 'Customer email', 'email'),
    ro('status', 'Status', 'single_select', { choices: ['draft', 'open', 'paid', 'uncollectible', 'void'] }),
    ro('currency', 'Currency', 'text'),
    ro('subtotal', 'Subtotal', 'currency', { wire: 'amount' }),
    ro('total', 'Total', 'currency', { wire: 'amount' }),
    ro('amount_due', 'Amount due', 'currency', { wire: 'amount' }),
    ro('amount_paid', 'Amount paid', 'currency', { wire: 'amount' }),
    ro('amount_remaining', 'Amount remaining', 'currency', { wire: 'amount' }),
    ro('collection_method', 'Collection method', 'single_select', {
      choices: ['charge_automatically', 'send_invoice'],
    }),
    ro('description', 'Description', 'text'),
    ro('hosted_invoice_url', 'Invoice page', 'url'),
    time('due_date', 'Due date'),
    time('period_start', 'Period start'),
    time('period_end', 'Period end'),
    time('created', 'Created'),
    ro('livemode', 'Live mode', 'boolean'),
  ],
};

export const READ_ONLY_TABLES: ReadonlySet<StripeTable> = new Set(['subscriptions', 'invoices']);

export const TABLE_NAMES: Record<StripeTable, string> = {
  customers: 'Customers',
  products: 'Products',
  prices: 'Prices',
  coupons: 'Coupons',
  subscriptions: 'Subscriptions',
  invoices: 'Invoices',
};

/** The API path of a table's objects. */
export const objectPath = (table: StripeTable) => `/v1/${table}`;

export const METADATA_PREFIX = 'metadata.';

/** The text field of one metadata key. */
export function metadataField(key: string): StripeFieldDef {
  return t(`${METADATA_PREFIX}${key}`, `Metadata: ${key}`, 'text');
}

export function fieldDef(table: StripeTable, remoteId: string): StripeFieldDef | undefined {
  if (remoteId.startsWith(METADATA_PREFIX) && remoteId.length > METADATA_PREFIX.length)
    return metadataField(remoteId.slice(METADATA_PREFIX.length));
  return STRIPE_FIELDS[table].find((f) => f.remoteId === remoteId);
}

export function metadataOf(o: StripeObject): Record<string, string> {
  const m = o.metadata;
  if (!m || typeof m !== 'object') return {};
  return Object.fromEntries(
    Object.entries(m as Record<string, unknown>).map(([k, v]) => [
      k,
      v === null || v === undefined ? '' : String(v),
    ]),
  );
}

function at(o: unknown, path: string): unknown {
  let v: unknown = o;
  for (const part of path.split('.')) {
    if (v === null || v === undefined || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** One field of a Stripe object as a canonical value. */
export function toCanonical(o: StripeObject, f: StripeFieldDef): CanonicalValue {
  let raw: unknown;
  if (f.remoteId.startsWith(METADATA_PREFIX))
    raw = metadataOf(o)[f.remoteId.slice(METADATA_PREFIX.length)] ?? null;
  else raw = at(o, f.remoteId);
  switch (f.wire) {
    case 'time':
      raw = typeof raw === 'number' ? raw * 1000 : null;
      break;
    case 'amount': {
      const currency = at(o, 'currency');
      if (typeof raw !== 'number' || typeof currency !== 'string' || currency === '') return null;
      const c: Currency = { minor: String(Math.trunc(raw)), code: currency.toUpperCase() };
      raw = c;
      break;
    }
    case 'expandable':
      // An expanded object in place of its id.
      if (raw && typeof raw === 'object') raw = (raw as { id?: unknown }).id ?? null;
      break;
    case 'ids': {
      const list = f.list ? at(o, f.list.path) : undefined;
      raw = Array.isArray(list)
        ? list
            .map((item) => {
              const id = at(item, f.list?.id ?? 'id');
              return typeof id === 'string' ? id : ((id as { id?: string } | undefined)?.id ?? null);
            })
            .filter((id): id is string => typeof id === 'string')
        : null;
      break;
    }
    default:
      break;
  }
  if (f.fieldType === 'number' && typeof raw === 'number') raw = String(raw);
  const r = normalizeValue(f.fieldType, raw ?? null);
  return r.ok ? r.value : null;
}

/** Every field of an object: the table's fixed fields, then one per metadata key it holds. */
export function toFields(table: StripeTable, o: StripeObject): Record<string, CanonicalValue> {
  const fields: Record<string, CanonicalValue> = {};
  for (const f of STRIPE_FIELDS[table]) fields[f.remoteId] = toCanonical(o, f);
  for (const [k, v] of Object.entries(metadataOf(o))) {
    const r = normalizeValue('text', v);
    fields[`${METADATA_PREFIX}${k}`] = r.ok ? r.value : v;
  }
  return fields;
}

/** What a write refuses before sending: the item fails alone with this text. */
export class StripeValueError extends Error {
  constructor(
    message: string,
    readonly userFacingMessage: string = message,
  ) {
    super(message);
    this.name = 'StripeValueError';
  }
}

function setPath(params: Record<string, unknown>, path: string, value: unknown) {
  const parts = path.split('.');
  let node = params;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!next || typeof next !== 'object') node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

/**
 * Canonical values as Stripe's create or update parameters (nested; see formEncode). Read-only and
 * unknown fields are left out; null clears a value (an empty string on the wire). A currency value
 * sets the amount and the object's `currency`; a date-time becomes unix seconds.
 */
export function toParams(
  table: StripeTable,
  fields: Record<string, CanonicalValue>,
  kind: 'create' | 'update',
): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [remoteId, value] of Object.entries(fields)) {
    const f = fieldDef(table, remoteId);
    if (!f || f.readOnly) continue;
    if (kind === 'update' && f.createOnly) continue;
    if (remoteId.startsWith(METADATA_PREFIX)) {
      const key = remoteId.slice(METADATA_PREFIX.length);
      if (!params.metadata) params.metadata = {};
      const meta = params.metadata as Record<string, unknown>;
      meta[key] = value === null || value === undefined ? '' : String(value);
      continue;
    }
    const normalized = normalizeValue(f.fieldType, value ?? null);
    if (!normalized.ok)
      throw new StripeValueError(
        `${table}.${remoteId}: ${normalized.problem.message}`,
        `${f.name}: ${normalized.problem.message}`,
      );
    const v = normalized.value;
    if (v === null) {
      // On create an empty value is simply not sent; on update it clears the value.
      if (kind === 'update') setPath(params, remoteId, '');
      continue;
    }
    switch (f.wire) {
      case 'amount': {
        const c = v as Currency;
        setPath(params, remoteId, c.minor);
        params.currency = c.code.toLowerCase();
        break;
      }
      case 'time': {
        const ms = Date.parse(String(v));
        if (Number.isNaN(ms))
          throw new StripeValueError(`${remoteId}: not a time`, `${f.name}: not a date and time.`);
        setPath(params, remoteId, Math.floor(ms / 1000));
        break;
      }
      default:
        setPath(params, remoteId, typeof v === 'boolean' ? v : String(v));
    }
  }
  return params;
}

/** The metadata keys on a list of objects (discovery samples the first page of each table). */
export function metadataKeys(objects: StripeObject[]): string[] {
  const keys = new Set<string>();
  for (const o of objects) for (const k of Object.keys(metadataOf(o))) keys.add(k);
  return [...keys].sort();
}

export type DiscoveredStripeField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
};

/** A table's fields for discovery: fixed fields, then the metadata keys found. */
export function discoveredFields(table: StripeTable, keys: string[]): DiscoveredStripeField[] {
  const readOnlyTable = READ_ONLY_TABLES.has(table);
  return [...STRIPE_FIELDS[table], ...keys.map(metadataField)].map((f) => ({
    remoteId: f.remoteId,
    name: f.name,
    fieldType: f.fieldType,
    readOnly: readOnlyTable || f.readOnly,
    options: {
      ...(f.choices ? { choices: f.choices } : {}),
      ...(f.createOnly ? { createOnly: true } : {}),
      ...(f.required && !readOnlyTable ? { required: true } : {}),
      ...(f.remoteId.startsWith(METADATA_PREFIX)
        ? { stripeMetadataKey: f.remoteId.slice(METADATA_PREFIX.length) }
        : {}),
    },
  }));
}
