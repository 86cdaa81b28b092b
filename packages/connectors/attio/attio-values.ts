/**
 * Attio attribute values <-> canonical values (pure; no requests).
 *
 * Attio returns every attribute of a record as an array of value objects, each with its history
 * (`active_from`, `active_until`; null `active_until` is the active value). Only active values are
 * read. Writes use Attio's input forms (`{value}`, `{option: title}`, `{status: title}`,
 * `{email_address}`, `{first_name, last_name, full_name}`, `{currency_value}`,
 * `{target_object, target_record_id}`, ...).
 *
 * Multi-value email addresses, domains and phone numbers are one canonical value: the first active
 * value (Attio's primary, the one its UI shows first). Writing one puts the new value first and keeps
 * the record's other values (read right before the write), so a sync never drops a secondary email nor
 * adds the old one twice. Multi-select selects and record references are whole lists (written with
 * PUT, which replaces a multiselect list; PATCH would append to it).
 */
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  type Currency,
  type JsonValue,
  normalizeValue,
} from '@lockstep/engine';

export type AttioAttributeType =
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

export type AttioAttribute = {
  id: { workspace_id?: string; object_id?: string; attribute_id: string };
  title: string;
  api_slug: string;
  type: AttioAttributeType | string;
  is_system_attribute?: boolean;
  is_writable: boolean;
  is_required?: boolean;
  is_unique?: boolean;
  is_multiselect: boolean;
  is_archived?: boolean;
  relationship?: { object_slug?: string; api_slug?: string } | null;
  config?: {
    currency?: { default_currency_code?: string | null } | null;
    record_reference?: { allowed_object_ids?: string[] | null } | null;
  } | null;
};

/** One value object as Attio returns it (the attribute type's own keys, plus its history). */
export type AttioValue = Record<string, unknown> & {
  active_from?: string;
  active_until?: string | null;
  attribute_type?: string;
};

/** A synced field: an attribute, or one part of a personal name. */
export type AttioField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
  attribute: AttioAttribute;
  /** A part of a personal-name attribute (`first_name`, `last_name`); the full name otherwise. */
  part?: 'first_name' | 'last_name';
};

/** Attribute types whose multiselect list is one canonical value: the primary (first) entry. */
const PRIMARY_OF_LIST = new Set(['email-address', 'domain', 'phone-number']);

export function isPrimaryOfList(a: AttioAttribute): boolean {
  return a.is_multiselect && PRIMARY_OF_LIST.has(a.type);
}

/** Attio attribute type -> canonical type; undefined means not synced. */
export function canonicalType(a: AttioAttribute): CanonicalFieldType | undefined {
  switch (a.type) {
    case 'text':
    case 'domain':
    case 'personal-name':
    case 'actor-reference':
      return 'text';
    case 'number':
    case 'rating':
      return 'number';
    case 'checkbox':
      return 'boolean';
    case 'currency':
      return 'currency';
    case 'date':
      return 'date';
    case 'timestamp':
    case 'interaction':
      return 'datetime';
    case 'select':
      return a.is_multiselect ? 'multi_select' : 'single_select';
    case 'status':
      return 'single_select';
    case 'record-reference':
      return 'relations';
    case 'location':
      return 'json';
    case 'email-address':
      return 'email';
    case 'phone-number':
      return 'phone';
    default:
      return undefined;
  }
}

/** The one object a record-reference attribute points at, when Attio allows exactly one. */
export function referenceTarget(a: AttioAttribute): string | undefined {
  const allowed = a.config?.record_reference?.allowed_object_ids ?? [];
  if (allowed.length === 1) return allowed[0];
  return a.relationship?.object_slug ?? undefined;
}

/**
 * Values only Attio sets: not writable (system and formula attributes), interactions and actors (not
 * written over the API by a sync), and references whose target object is ambiguous.
 */
export function isReadOnly(a: AttioAttribute): boolean {
  if (!a.is_writable) return true;
  if (a.type === 'interaction' || a.type === 'actor-reference') return true;
  if (a.type === 'record-reference' && !referenceTarget(a)) return true;
  return false;
}

/** Digits of a currency's minor unit (ISO 4217 through Intl; 2 when unknown). */
export function currencyDigits(code: string | null | undefined): number {
  if (!code) return 2;
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions()
      .maximumFractionDigits as number;
  } catch {
    return 2;
  }
}

/** Discovered fields of an object: synced attributes (not archived), canonically typed. */
export function attioFields(
  attributes: AttioAttribute[],
  choicesOf: (a: AttioAttribute) => string[] | undefined = () => undefined,
): AttioField[] {
  return attributes.flatMap((a): AttioField[] => {
    const fieldType = canonicalType(a);
    if (!fieldType || a.is_archived) return [];
    const readOnly = isReadOnly(a);
    const choices = choicesOf(a);
    const code = a.config?.currency?.default_currency_code ?? undefined;
    const options: Record<string, unknown> = {
      attioType: a.type,
      ...(a.is_multiselect ? { multiselect: true } : {}),
      ...(a.is_unique ? { unique: true } : {}),
      ...(a.is_required ? { required: true } : {}),
      ...(choices && choices.length > 0 ? { choices } : {}),
      ...(a.type === 'currency' && code ? { currencyCode: code, currencyDigits: currencyDigits(code) } : {}),
      ...(a.type === 'record-reference' && referenceTarget(a) ? { relationTarget: referenceTarget(a) } : {}),
    };
    const field: AttioField = {
      remoteId: a.api_slug,
      name: a.title || a.api_slug,
      fieldType,
      readOnly,
      options,
      attribute: a,
    };
    if (a.type !== 'personal-name') return [field];
    // A person's name is one value with parts; each part is a field of its own too.
    return [
      field,
      ...(['first_name', 'last_name'] as const).map((part) => ({
        remoteId: `${a.api_slug}.${part}`,
        name: `${a.title || a.api_slug} (${part === 'first_name' ? 'first' : 'last'})`,
        fieldType: 'text' as const,
        readOnly,
        options: { attioType: a.type, part },
        attribute: a,
        part,
      })),
    ];
  });
}

/** The active values of an attribute (null `active_until`), in Attio's order. */
export function activeValues(values: AttioValue[] | null | undefined): AttioValue[] {
  return (values ?? []).filter((v) => v && (v.active_until === null || v.active_until === undefined));
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** An option or status as its title: Attio returns the object, or (input-like) an id or title. */
function titleOf(v: unknown, titles: ((id: string) => string | undefined) | undefined): string | null {
  if (v && typeof v === 'object') {
    const o = v as { title?: unknown; id?: { option_id?: string; status_id?: string } };
    if (typeof o.title === 'string') return o.title;
    const id = o.id?.option_id ?? o.id?.status_id;
    return id ? (titles?.(id) ?? id) : null;
  }
  if (typeof v === 'string') return titles?.(v) ?? v;
  return null;
}

function normalized(type: CanonicalFieldType, raw: unknown): CanonicalValue {
  const r = normalizeValue(type, raw);
  return r.ok ? r.value : null;
}

const LOCATION_KEYS = [
  'line_1',
  'line_2',
  'line_3',
  'line_4',
  'locality',
  'region',
  'postcode',
  'country_code',
  'latitude',
  'longitude',
] as const;

/** An attribute's active values as the canonical value of a field. */
export function toCanonical(
  field: Pick<AttioField, 'fieldType' | 'attribute' | 'part'>,
  values: AttioValue[] | null | undefined,
  titles?: (id: string) => string | undefined,
): CanonicalValue {
  const a = field.attribute;
  const active = activeValues(values);
  const first = active[0];
  switch (a.type) {
    case 'text':
      return normalized('text', str(first?.value));
    case 'number':
    case 'rating':
      return normalized('number', first?.value ?? null);
    case 'checkbox':
      return normalized('boolean', first?.value ?? null);
    case 'currency': {
      if (!first || typeof first.currency_value !== 'number') return null;
      const code = str(first.currency_code) ?? a.config?.currency?.default_currency_code ?? 'USD';
      const digits = currencyDigits(code);
      return normalized('currency', { minor: String(Math.round(first.currency_value * 10 ** digits)), code });
    }
    case 'date':
      return normalized('date', str(first?.value));
    case 'timestamp':
      return normalized('datetime', str(first?.value));
    case 'interaction':
      return normalized('datetime', str(first?.interacted_at));
    case 'select': {
      const list = active.map((v) => titleOf(v.option, titles)).filter((t): t is string => t !== null);
      return a.is_multiselect
        ? normalized('multi_select', list)
        : normalized('single_select', list[0] ?? null);
    }
    case 'status':
      return normalized('single_select', titleOf(first?.status, titles));
    case 'record-reference':
      return normalized(
        'relations',
        active.map((v) => str(v.target_record_id)).filter((id): id is string => id !== null),
      );
    case 'actor-reference':
      return normalized('text', str(first?.referenced_actor_id));
    case 'location': {
      if (!first) return null;
      const json: Record<string, JsonValue> = {};
      for (const k of LOCATION_KEYS) json[k] = (first[k] as JsonValue | undefined) ?? null;
      return Object.values(json).every((v) => v === null) ? null : { json };
    }
    case 'domain':
      return normalized('text', str(first?.domain));
    case 'email-address':
      return normalized('email', str(first?.email_address) ?? str(first?.original_email_address));
    case 'phone-number':
      return normalized('phone', str(first?.original_phone_number) ?? str(first?.phone_number));
    case 'personal-name': {
      if (!first) return null;
      if (field.part) return normalized('text', str(first[field.part]));
      return normalized('text', str(first.full_name));
    }
    default:
      return null;
  }
}

/** The value a multi-value list keeps apart from its primary: the input form of each other value. */
function inputOfListEntry(a: AttioAttribute, v: AttioValue): Record<string, unknown> | null {
  switch (a.type) {
    case 'email-address': {
      const e = str(v.email_address) ?? str(v.original_email_address);
      return e ? { email_address: e } : null;
    }
    case 'domain': {
      const d = str(v.domain);
      return d ? { domain: d } : null;
    }
    case 'phone-number': {
      const p = str(v.original_phone_number) ?? str(v.phone_number);
      return p ? { original_phone_number: p } : null;
    }
    default:
      return null;
  }
}

function primaryInput(a: AttioAttribute, value: string): Record<string, unknown> {
  if (a.type === 'email-address') return { email_address: value };
  if (a.type === 'domain') return { domain: value };
  return { original_phone_number: value };
}

/** "Ada King Lovelace" -> first "Ada", last "King Lovelace". */
export function splitFullName(full: string): { first_name: string; last_name: string } {
  const t = full.trim().replace(/\s+/g, ' ');
  const at = t.indexOf(' ');
  return at < 0
    ? { first_name: t, last_name: '' }
    : { first_name: t.slice(0, at), last_name: t.slice(at + 1) };
}

/**
 * The values to write for one attribute (Attio's input forms), from the fields given for it (the
 * attribute itself and, for a name, its parts) and the record's current values of it (for updates:
 * the other entries of a primary-of-list attribute, the name's other parts). An empty array clears.
 */
export function fromCanonical(
  a: AttioAttribute,
  given: { whole?: CanonicalValue; first_name?: CanonicalValue; last_name?: CanonicalValue; has: boolean },
  current: AttioValue[] | null | undefined,
): unknown[] {
  const value = given.whole ?? null;
  if (a.type === 'personal-name') {
    const now = activeValues(current)[0];
    let first = str(now?.first_name) ?? '';
    let last = str(now?.last_name) ?? '';
    let full = str(now?.full_name) ?? '';
    const partsGiven = given.first_name !== undefined || given.last_name !== undefined;
    if (given.whole !== undefined) {
      full = typeof value === 'string' ? value : '';
      if (!partsGiven) ({ first_name: first, last_name: last } = splitFullName(full));
    }
    if (given.first_name !== undefined) first = typeof given.first_name === 'string' ? given.first_name : '';
    if (given.last_name !== undefined) last = typeof given.last_name === 'string' ? given.last_name : '';
    if (given.whole === undefined && partsGiven) full = [first, last].filter((s) => s !== '').join(' ');
    if (!first && !last && !full) return [];
    return [
      { first_name: first, last_name: last, full_name: full || [first, last].filter(Boolean).join(' ') },
    ];
  }
  if (isPrimaryOfList(a)) {
    const others = activeValues(current)
      .slice(1)
      .map((v) => inputOfListEntry(a, v))
      .filter((v): v is Record<string, unknown> => v !== null);
    const same = (x: Record<string, unknown>, s: string) =>
      String(Object.values(x)[0] ?? '').toLowerCase() === s.toLowerCase();
    if (value === null || value === '') {
      // The primary cleared: the next one becomes primary (nothing else is lost).
      return others;
    }
    const text = String(value);
    const rest = others.filter((o) => !same(o, text));
    return [primaryInput(a, text), ...rest];
  }
  if (value === null) return [];
  switch (a.type) {
    case 'text':
      return [{ value: String(value) }];
    case 'number':
    case 'rating':
      return [{ value: Number(value) }];
    case 'checkbox':
      return [{ value: value === true }];
    case 'currency': {
      const c = value as Currency;
      const digits = currencyDigits(c.code);
      return [{ currency_value: Number(c.minor) / 10 ** digits }];
    }
    case 'date':
    case 'timestamp':
      return [{ value: String(value) }];
    case 'select': {
      const list = Array.isArray(value) ? value.map(String) : [String(value)];
      return list.map((option) => ({ option }));
    }
    case 'status':
      return [{ status: String(value) }];
    case 'record-reference': {
      const target = referenceTarget(a);
      const ids = Array.isArray(value) ? value.map(String) : [String(value)];
      return ids.map((id) => ({ target_object: target, target_record_id: id }));
    }
    case 'location': {
      const json = (value && typeof value === 'object' && 'json' in value ? value.json : value) as Record<
        string,
        unknown
      >;
      const out: Record<string, unknown> = {};
      for (const k of LOCATION_KEYS) out[k] = json?.[k] ?? null;
      return [out];
    }
    case 'domain':
      return [{ domain: String(value) }];
    case 'email-address':
      return [{ email_address: String(value) }];
    case 'phone-number':
      return [{ original_phone_number: String(value) }];
    default:
      return [];
  }
}

/** Whether a written currency matches the attribute's own currency (Attio stores one code per attribute). */
export function currencyMismatch(a: AttioAttribute, value: CanonicalValue): string | null {
  if (a.type !== 'currency' || value === null || typeof value !== 'object' || !('minor' in value))
    return null;
  const code = a.config?.currency?.default_currency_code;
  if (code && value.code && value.code.toUpperCase() !== code.toUpperCase())
    return `${a.title}: Attio stores this amount in ${code}, not ${value.code}`;
  return null;
}
