/**
 * Attio attribute values: the input forms a write accepts (the documented shorthands as well as
 * the full value objects) turned into stored payloads, and the payloads rendered as Attio's value
 * objects (`attribute_type` plus the type's own keys). Shapes follow the OpenAPI document's
 * output-value schema; the shorthands follow Attio's attribute type docs.
 */

export type AttributeType =
  | 'text'
  | 'number'
  | 'checkbox'
  | 'currency'
  | 'date'
  | 'timestamp'
  | 'rating'
  | 'status'
  | 'select'
  | 'record-reference'
  | 'actor-reference'
  | 'location'
  | 'domain'
  | 'email-address'
  | 'phone-number'
  | 'interaction'
  | 'personal-name';

export type SelectOptionDef = { id: string; title: string; is_archived: boolean };

export type StatusDef = {
  id: string;
  title: string;
  is_archived: boolean;
  celebration_enabled: boolean;
  target_time_in_status: string | null;
};

export type AttributeDef = {
  id: string;
  /** The object or list the attribute belongs to. */
  parent: { kind: 'object' | 'list'; id: string };
  title: string;
  description: string | null;
  api_slug: string;
  type: AttributeType;
  is_system_attribute: boolean;
  is_writable: boolean;
  is_required: boolean;
  is_unique: boolean;
  is_multiselect: boolean;
  /** Whether old values are kept (and readable with show_historic). */
  historic: boolean;
  options: SelectOptionDef[];
  statuses: StatusDef[];
  /** record-reference: the object slugs it may point to. */
  allowedObjects?: string[];
  defaultCurrency?: string;
  created_at: number;
};

/** A stored value: the type's own keys (no history fields). */
export type Payload = Record<string, unknown>;

export class ValueError extends Error {
  constructor(
    readonly code: 'validation_type' | 'value_not_found' | 'missing_value',
    message: string,
  ) {
    super(message);
  }
}

/** What value inputs need from the state (references are checked against it). */
export type ValueContext = {
  recordExists: (objectSlug: string, recordId: string) => boolean;
  objectSlugOf: (slugOrId: string) => string | undefined;
  memberIdByEmail: (email: string) => string | undefined;
  memberExists: (id: string) => boolean;
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID_RE.test(s);

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const LAT_RE = /^[-+]?([1-8]?\d(\.\d+)?|90(\.0+)?)$/;
const LNG_RE = /^[-+]?(180(\.0+)?|((1[0-7]\d)|([1-9]?\d))(\.\d+)?)$/;

/** Country calling codes the simulator knows (phone numbers without a country_code). */
const CALLING_CODES: [string, string][] = [
  ['+44', 'GB'],
  ['+49', 'DE'],
  ['+33', 'FR'],
  ['+31', 'NL'],
  ['+353', 'IE'],
  ['+1', 'US'],
];

/** ISO 3166-1 alpha-2 codes accepted for locations and phone numbers (a common subset). */
export const COUNTRY_CODES = new Set([
  'US',
  'GB',
  'DE',
  'FR',
  'NL',
  'IE',
  'CA',
  'ES',
  'IT',
  'SE',
  'NO',
  'DK',
  'FI',
  'BE',
  'CH',
  'AT',
  'PT',
  'PL',
  'AU',
  'NZ',
  'JP',
  'SG',
  'IN',
  'BR',
  'MX',
]);

export const CURRENCY_CODES = new Set([
  'ARS',
  'AUD',
  'BRL',
  'BGN',
  'CAD',
  'CLP',
  'CNY',
  'COP',
  'CZK',
  'DKK',
  'EUR',
  'FJD',
  'HKD',
  'HUF',
  'ISK',
  'INR',
  'ILS',
  'JPY',
  'KES',
  'KRW',
  'MYR',
  'MXN',
  'NTD',
  'NZD',
  'NGN',
  'NOK',
  'XPF',
  'PEN',
  'PHP',
  'PLN',
  'GBP',
  'RWF',
  'SAR',
  'SGD',
  'ZAR',
  'SEK',
  'CHF',
  'THB',
  'AED',
  'UYU',
  'USD',
]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(attr: AttributeDef, detail: string): ValueError {
  return new ValueError(
    'validation_type',
    `Invalid value was passed to attribute with slug "${attr.api_slug}". ${detail}`,
  );
}

/** Take `{key: v}` or a bare `v` (the documented shorthand). */
function unwrap(input: unknown, key: string): unknown {
  return isObject(input) && key in input ? input[key] : input;
}

function rootDomain(domain: string): string {
  const parts = domain.split('.');
  // Two-level public suffixes the seed uses (co.uk and the like).
  if (parts.length > 2 && ['co', 'com', 'org', 'ac'].includes(parts[parts.length - 2] ?? '')) {
    return parts.slice(-3).join('.');
  }
  return parts.slice(-2).join('.');
}

function normalizeDomain(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/.*$/, '')
    .replace(/^www\./, '');
}

/** One input item (already split out of the array) to a stored payload. */
export function normalizeValue(attr: AttributeDef, input: unknown, ctx: ValueContext): Payload {
  switch (attr.type) {
    case 'text': {
      const v = unwrap(input, 'value');
      if (typeof v !== 'string') throw invalid(attr, 'Expected a string.');
      return { value: v };
    }
    case 'number': {
      const v = unwrap(input, 'value');
      if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(attr, 'Expected a number.');
      return { value: v };
    }
    case 'checkbox': {
      const v = unwrap(input, 'value');
      if (typeof v !== 'boolean') throw invalid(attr, 'Expected a boolean.');
      return { value: v };
    }
    case 'rating': {
      const v = unwrap(input, 'value');
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 5)
        throw invalid(attr, 'Expected an integer between 0 and 5.');
      return { value: v };
    }
    case 'currency': {
      const v = unwrap(input, 'currency_value');
      if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(attr, 'Expected a number.');
      const code =
        isObject(input) && typeof input.currency_code === 'string' ? input.currency_code : undefined;
      const currency = code ?? attr.defaultCurrency ?? 'USD';
      if (!CURRENCY_CODES.has(currency)) throw invalid(attr, `Unknown currency code "${currency}".`);
      return { currency_value: v, currency_code: currency };
    }
    case 'date': {
      const v = unwrap(input, 'value');
      if (typeof v !== 'string') throw invalid(attr, 'Expected a date string (YYYY-MM-DD).');
      const day = DATE_RE.test(v)
        ? v
        : Number.isNaN(Date.parse(v))
          ? undefined
          : new Date(v).toISOString().slice(0, 10);
      if (!day || Number.isNaN(Date.parse(day))) throw invalid(attr, 'Expected a date string (YYYY-MM-DD).');
      return { value: day };
    }
    case 'timestamp': {
      const v = unwrap(input, 'value');
      if (typeof v !== 'string' || Number.isNaN(Date.parse(v)))
        throw invalid(attr, 'Expected an ISO 8601 timestamp.');
      return { value: attioTimestamp(Date.parse(v)) };
    }
    case 'select': {
      const v = unwrap(input, 'option');
      const ref = isObject(v) && typeof v.title === 'string' ? v.title : v;
      if (typeof ref !== 'string') throw invalid(attr, 'Expected a select option title or ID.');
      const option = attr.options.find((o) => !o.is_archived && (o.id === ref || o.title === ref));
      if (!option)
        throw new ValueError(
          'value_not_found',
          `Cannot find select attribute with select option title "${ref}".`,
        );
      return { option: option.id };
    }
    case 'status': {
      const v = unwrap(input, 'status');
      const ref = isObject(v) && typeof v.title === 'string' ? v.title : v;
      if (typeof ref !== 'string') throw invalid(attr, 'Expected a status title or ID.');
      const status = attr.statuses.find((s) => !s.is_archived && (s.id === ref || s.title === ref));
      if (!status)
        throw new ValueError('value_not_found', `Cannot find status attribute with status title "${ref}".`);
      return { status: status.id };
    }
    case 'record-reference': {
      let targetObject: string | undefined;
      let targetId: unknown;
      if (typeof input === 'string') {
        if ((attr.allowedObjects ?? []).length !== 1)
          throw invalid(attr, 'Give target_object with target_record_id for this attribute.');
        targetObject = attr.allowedObjects?.[0];
        targetId = input;
      } else if (isObject(input)) {
        targetObject =
          typeof input.target_object === 'string' ? ctx.objectSlugOf(input.target_object) : undefined;
        targetId = input.target_record_id;
        if (typeof input.target_object === 'string' && !targetObject)
          throw new ValueError('value_not_found', `Object with slug/ID "${input.target_object}" not found.`);
      }
      if (!targetObject || typeof targetId !== 'string')
        throw invalid(attr, 'Expected {target_object, target_record_id}.');
      if (attr.allowedObjects && !attr.allowedObjects.includes(targetObject))
        throw invalid(attr, `Records of object "${targetObject}" cannot be referenced by this attribute.`);
      if (!isUuid(targetId) || !ctx.recordExists(targetObject, targetId))
        throw new ValueError('value_not_found', `Record with ID "${targetId}" not found.`);
      return { target_object: targetObject, target_record_id: targetId };
    }
    case 'actor-reference': {
      let id: string | undefined;
      if (typeof input === 'string') id = input.includes('@') ? ctx.memberIdByEmail(input) : input;
      else if (isObject(input)) {
        if (input.referenced_actor_type !== undefined && input.referenced_actor_type !== 'workspace-member')
          throw invalid(attr, 'Only workspace members can be referenced.');
        if (typeof input.referenced_actor_id === 'string') id = input.referenced_actor_id;
        else if (typeof input.email_address === 'string') id = ctx.memberIdByEmail(input.email_address);
      }
      if (!id || !ctx.memberExists(id))
        throw new ValueError('value_not_found', 'Workspace member not found for actor-reference value.');
      return { referenced_actor_type: 'workspace-member', referenced_actor_id: id };
    }
    case 'email-address': {
      const v = unwrap(input, 'email_address');
      if (typeof v !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v.trim()))
        throw invalid(attr, `"${String(v)}" is not a valid email address.`);
      const original = v.trim();
      const email = original.toLowerCase();
      const [local = '', domain = ''] = email.split('@');
      return {
        original_email_address: original,
        email_address: email,
        email_domain: domain,
        email_root_domain: rootDomain(domain),
        email_local_specifier: local.split('+')[0],
      };
    }
    case 'domain': {
      const v = unwrap(input, 'domain');
      if (typeof v !== 'string') throw invalid(attr, 'Expected a domain string.');
      const domain = normalizeDomain(v);
      if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) throw invalid(attr, `"${v}" is not a valid domain.`);
      return { domain, root_domain: rootDomain(domain) };
    }
    case 'phone-number': {
      const raw = isObject(input) ? input.original_phone_number : input;
      if (typeof raw !== 'string') throw invalid(attr, 'Expected a phone number string.');
      const digits = raw.replace(/[^\d+]/g, '');
      let country =
        isObject(input) && typeof input.country_code === 'string' ? input.country_code : undefined;
      let e164 = digits;
      if (!digits.startsWith('+')) {
        const prefix = CALLING_CODES.find(([, c]) => c === country)?.[0];
        if (!prefix) throw invalid(attr, 'Give the number in E.164 form or with a country_code.');
        e164 = `${prefix}${digits.replace(/^0/, '')}`;
      }
      country ??= CALLING_CODES.find(([p]) => e164.startsWith(p))?.[1];
      if (!country || !COUNTRY_CODES.has(country) || e164.length < 8)
        throw invalid(attr, `"${raw}" is not a valid phone number.`);
      return { original_phone_number: raw, country_code: country, phone_number: e164 };
    }
    case 'location': {
      if (!isObject(input)) throw invalid(attr, 'Expected a location object.');
      const str = (k: string): string | null => {
        const v = input[k];
        if (v === undefined || v === null) return null;
        if (typeof v !== 'string') throw invalid(attr, `Expected ${k} to be a string.`);
        return v;
      };
      const country = str('country_code');
      if (!country || !COUNTRY_CODES.has(country)) throw invalid(attr, 'Expected a valid country_code.');
      const lat = str('latitude');
      const lng = str('longitude');
      if ((lat !== null && !LAT_RE.test(lat)) || (lng !== null && !LNG_RE.test(lng)))
        throw invalid(attr, 'Invalid latitude or longitude.');
      return {
        line_1: str('line_1'),
        line_2: str('line_2'),
        line_3: str('line_3'),
        line_4: str('line_4'),
        locality: str('locality'),
        region: str('region'),
        postcode: str('postcode'),
        country_code: country,
        latitude: lat,
        longitude: lng,
      };
    }
    case 'personal-name': {
      let first: unknown;
      let last: unknown;
      let full: unknown;
      if (typeof input === 'string') {
        // Shorthand "Last, First" or "First Last".
        const comma = input.split(',');
        if (comma.length === 2) [last, first] = comma.map((s) => s.trim());
        else {
          const words = input.trim().split(/\s+/);
          first = words[0] ?? '';
          last = words.slice(1).join(' ');
        }
      } else if (isObject(input)) {
        first = input.first_name ?? '';
        last = input.last_name ?? '';
        full = input.full_name;
      }
      if (
        typeof first !== 'string' ||
        typeof last !== 'string' ||
        (full !== undefined && typeof full !== 'string')
      )
        throw invalid(attr, 'Expected {first_name, last_name, full_name}.');
      return { first_name: first, last_name: last, full_name: full ?? `${first} ${last}`.trim() };
    }
    case 'interaction':
      throw invalid(attr, 'Interaction values cannot be written.');
  }
}

/** Attio writes timestamps with nanosecond precision: 2026-01-15T09:00:00.000000000Z. */
export function attioTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

/** A key that says whether two payloads are the same value (for no-op writes and uniqueness). */
export function valueKey(attr: AttributeDef, p: Payload): string {
  switch (attr.type) {
    case 'email-address':
      return String(p.email_address);
    case 'domain':
      return String(p.domain);
    case 'phone-number':
      return String(p.phone_number);
    case 'record-reference':
      return `${String(p.target_object)}/${String(p.target_record_id)}`;
    default:
      return JSON.stringify(p);
  }
}

/** The value a shorthand filter or a sort compares (text for most types). */
export function primaryOf(attr: AttributeDef, p: Payload): unknown {
  switch (attr.type) {
    case 'email-address':
      return p.email_address;
    case 'domain':
      return p.domain;
    case 'phone-number':
      return p.phone_number;
    case 'personal-name':
      return p.full_name;
    case 'record-reference':
      return p.target_record_id;
    case 'actor-reference':
      return p.referenced_actor_id;
    case 'currency':
      return p.currency_value;
    case 'select':
      return attr.options.find((o) => o.id === p.option)?.title;
    case 'status':
      return attr.statuses.find((s) => s.id === p.status)?.title;
    case 'location':
      return p.locality;
    case 'interaction':
      return p.interacted_at;
    default:
      return p.value;
  }
}
