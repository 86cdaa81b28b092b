import { Decimal } from 'decimal.js';
import { normalizeMarkdown } from './rich-text';
import {
  type Attachment,
  type CanonicalValue,
  type Currency,
  FIELD_TYPES,
  type FieldSpec,
  type FieldType,
  fail,
  type JsonValue,
  ok,
  type Result,
} from './types';

// Enough precision for numeric(1000) and bigint without float loss.
const D = Decimal.clone({ precision: 1000, toExpNeg: -1000, toExpPos: 1000 });

const EMAIL = /^[^\s@]+@[^\s@]+$/;
// Fast paths: most values arrive already canonical, and reconcile normalises every field of every pair.
const CANONICAL_DECIMAL = /^(?:0|-?(?:[1-9]\d*(?:\.\d*[1-9])?|0\.\d*[1-9]))$/;
const PLAIN_ASCII = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const CANONICAL_EMAIL = /^[\x21-\x3f\x5b-\x7e]+@[\x21-\x3f\x5b-\x7e]+$/;

/** An exact decimal string: no exponent, no trailing zeros, no "-0". */
export function normalizeDecimal(raw: string | number | bigint): string | null {
  const text = typeof raw === 'string' ? raw.trim().replaceAll(/[,_\s]/g, '') : String(raw);
  if (text === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return null;
  const d = new D(text);
  if (d.isZero()) return '0';
  return d.toFixed();
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function toDate(raw: unknown): Date | null {
  if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? null : raw;
  if (typeof raw === 'number') return Number.isFinite(raw) ? new Date(raw) : null;
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  // A datetime without a zone is taken as UTC: canonical datetimes have no local time.
  if (text.length === 10) {
    const d = new Date(`${text}T00:00:00Z`);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  // PostgreSQL prints zones as +00 or +05:30; Date wants +00:00. No zone at all is UTC.
  const spaced = text.replace(' ', 'T');
  const withZone = /([zZ]|[+-]\d{2}(:?\d{2})?)$/.test(spaced.slice(10))
    ? spaced.replace(/([+-]\d{2})$/, '$1:00')
    : `${spaced}Z`;
  const d = new Date(withZone);
  return Number.isNaN(d.getTime()) ? null : d;
}

// A date-time with digits past the millisecond (PostgreSQL keeps microseconds). Date holds only
// milliseconds, so the extra digits are split off and carried as text; a zone offset is whole
// minutes, so applying it to the millisecond part never touches them.
const SUB_MILLISECOND = /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}\.\d{3})(\d+)([zZ]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * The digits past the millisecond as canonical text: none, 3 (microseconds) or 6 (nanoseconds),
 * the shortest that holds every non-zero digit, so one instant has one spelling and values of apps
 * that hold milliseconds are spelled as before. Digits past the ninth are cut, as Date cuts.
 */
function subMillisecondText(digits: string): string {
  const six = digits.slice(0, 6).padEnd(6, '0');
  if (six === '000000') return '';
  return six.endsWith('000') ? six.slice(0, 3) : six;
}

/** A canonical date-time: UTC ISO with 3, 6 or 9 fraction digits, `YYYY-MM-DDTHH:MM:SS.fff[fff[fff]]Z`. */
function normalizeDateTime(raw: unknown): string | null {
  const m = typeof raw === 'string' ? SUB_MILLISECOND.exec(raw.trim()) : null;
  const d = toDate(m ? `${m[1]}${m[3] ?? ''}` : raw);
  if (!d) return null;
  const iso = d.toISOString();
  return m ? `${iso.slice(0, -1)}${subMillisecondText(m[2] as string)}Z` : iso;
}

/** JSON with sorted keys, so equal values have one spelling (for hashing and comparing). */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}

function sortedUnique(list: string[]): string[] | null {
  const out = [...new Set(list.map((s) => s.trim()).filter((s) => s !== ''))].sort();
  return out.length === 0 ? null : out;
}

function isType(type: string): type is FieldType {
  return (FIELD_TYPES as readonly string[]).includes(type);
}

/**
 * Normalises a value a connector read (or is about to write) into the canonical form of its field
 * type, so that what an app stores after our write compares equal to what the shadow holds: text
 * is trimmed, emails lower-cased, selects sorted, empty values are null, an absent boolean is false.
 */
export function normalizeValue(
  type: string,
  raw: unknown,
  options?: { currencyCode?: string },
): Result<CanonicalValue> {
  if (!isType(type)) return fail('unknown_type', `Unknown field type "${type}".`);
  if (raw === undefined) raw = null;
  switch (type) {
    case 'boolean': {
      // Apps such as Airtable omit a false checkbox: absent and false are the same value.
      if (raw === null || raw === false || raw === 0 || raw === '') return ok(false);
      if (raw === true || raw === 1) return ok(true);
      if (typeof raw === 'string') {
        const t = raw.trim().toLowerCase();
        if (['true', 'yes', '1', 'checked', 'on'].includes(t)) return ok(true);
        if (['false', 'no', '0', 'unchecked', 'off'].includes(t)) return ok(false);
      }
      return fail('type_mismatch', `Expected a yes/no value, got ${JSON.stringify(raw)}.`);
    }
    case 'text':
    case 'single_select':
    case 'phone':
    case 'rich_text': {
      if (raw === null) return ok(null);
      if (type !== 'rich_text' && typeof raw === 'string' && PLAIN_ASCII.test(raw)) return ok(raw);
      if (typeof raw !== 'string' && typeof raw !== 'number')
        return fail('type_mismatch', `Expected text, got ${typeof raw}.`);
      const t = String(raw).normalize('NFC').replaceAll(/\r\n?/g, '\n').trim();
      if (t === '') return ok(null);
      return ok(type === 'rich_text' ? normalizeMarkdown(t) : t);
    }
    case 'email': {
      if (raw === null) return ok(null);
      if (typeof raw !== 'string')
        return fail('type_mismatch', `Expected an email address, got ${typeof raw}.`);
      if (CANONICAL_EMAIL.test(raw)) return ok(raw);
      const t = raw.trim().toLowerCase();
      if (t === '') return ok(null);
      return EMAIL.test(t) ? ok(t) : fail('type_mismatch', `"${raw}" is not an email address.`);
    }
    case 'url': {
      if (raw === null) return ok(null);
      if (typeof raw !== 'string') return fail('type_mismatch', `Expected a URL, got ${typeof raw}.`);
      const t = raw.trim();
      if (t === '') return ok(null);
      try {
        const u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(t) ? t : `https://${t}`);
        return ok(u.toString());
      } catch {
        return fail('type_mismatch', `"${raw}" is not a URL.`);
      }
    }
    case 'number':
    case 'duration': {
      if (raw === null || raw === '') return ok(null);
      if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'bigint') {
        return fail('type_mismatch', `Expected a number, got ${typeof raw}.`);
      }
      if (typeof raw === 'number' && !Number.isFinite(raw))
        return fail('type_mismatch', `${raw} is not a finite number.`);
      if (typeof raw === 'string' && CANONICAL_DECIMAL.test(raw))
        return ok(type === 'duration' ? Number(raw) : raw);
      const n = normalizeDecimal(raw);
      if (n === null) return fail('type_mismatch', `"${String(raw)}" is not a number.`);
      return ok(type === 'duration' ? Number(n) : n);
    }
    case 'currency': {
      if (raw === null) return ok(null);
      if (typeof raw === 'object' && raw !== null && 'minor' in raw) {
        const c = raw as Currency;
        const minor = normalizeDecimal(c.minor);
        if (minor === null || minor.includes('.'))
          return fail('type_mismatch', 'Currency minor units must be a whole number.');
        return ok({ minor, code: String(c.code || options?.currencyCode || 'USD').toUpperCase() });
      }
      return fail('type_mismatch', 'Expected an amount in minor units with a currency code.');
    }
    case 'date': {
      if (raw === null || raw === '') return ok(null);
      const d = toDate(raw);
      if (!d) return fail('type_mismatch', `"${String(raw)}" is not a date.`);
      return ok(`${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`);
    }
    case 'datetime': {
      if (raw === null || raw === '') return ok(null);
      const t = normalizeDateTime(raw);
      return t !== null ? ok(t) : fail('type_mismatch', `"${String(raw)}" is not a date and time.`);
    }
    case 'multi_select':
    case 'relations': {
      if (raw === null) return ok(null);
      if (!Array.isArray(raw) || raw.some((v) => typeof v !== 'string' && typeof v !== 'number')) {
        return fail('type_mismatch', 'Expected a list of values.');
      }
      return ok(sortedUnique(raw.map(String)));
    }
    case 'attachments': {
      if (raw === null) return ok(null);
      if (!Array.isArray(raw)) return fail('type_mismatch', 'Expected a list of attachments.');
      const out: Attachment[] = [];
      for (const a of raw) {
        if (typeof a !== 'object' || a === null || typeof (a as Attachment).url !== 'string') {
          return fail('type_mismatch', 'Each attachment needs a url.');
        }
        const x = a as Partial<Attachment>;
        out.push({
          url: String(x.url),
          filename: String(x.filename ?? String(x.url).split('/').pop() ?? 'file'),
          size: typeof x.size === 'number' ? x.size : null,
          type: typeof x.type === 'string' ? x.type : null,
        });
      }
      return ok(out.length === 0 ? null : out);
    }
    case 'json': {
      if (raw === null) return ok(null);
      if (typeof raw === 'object' && raw !== null && 'json' in raw && Object.keys(raw).length === 1)
        return ok(raw as { json: JsonValue });
      return ok({ json: JSON.parse(stableJson(raw)) as JsonValue });
    }
  }
}

/** Nothing in the field: null, empty or blank text, an empty list. */
export function isBlank(v: CanonicalValue): boolean {
  return (
    v === null ||
    v === undefined ||
    (typeof v === 'string' && v.trim() === '') ||
    (Array.isArray(v) && v.length === 0)
  );
}

/** Equality of two canonical values (both already normalised). Fast for the common primitives. */
export function valuesEqual(a: CanonicalValue, b: CanonicalValue): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && typeof a[0] === 'string') {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (isAttachmentList(a) && isAttachmentList(b))
    return a.length === b.length && a.every((x, i) => fileKey(x) === fileKey(b[i] as Attachment));
  return stableJson(a) === stableJson(b);
}

const isAttachmentList = (v: unknown): v is Attachment[] =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.every((x) => typeof x === 'object' && x !== null && 'url' in x && 'filename' in x);

/**
 * A file's identity without its URL: apps re-host files behind signed URLs that change on every
 * read (Airtable's expire after a few hours), so the same file reads back under a new URL and is
 * still the same file. Name, size and type tell files apart.
 */
const fileKey = (a: Attachment) => `${a.filename}\u0000${a.size ?? ''}\u0000${a.type ?? ''}`;

const CANONICAL_DATETIME = /^(.+T\d{2}:\d{2}:\d{2})\.(\d{3}|\d{6}|\d{9})Z$/;

/**
 * Whether two canonical date-times agree to `digits` fraction digits. Both are cut, not rounded:
 * an app that holds less keeps the leading digits (Date cuts `.987654` to `.987`).
 */
export function datetimesAgreeTo(a: string, b: string, digits: number): boolean {
  const ma = CANONICAL_DATETIME.exec(a);
  const mb = CANONICAL_DATETIME.exec(b);
  if (!ma || !mb) return a === b;
  const cut = (fraction: string) => fraction.padEnd(9, '0').slice(0, Math.max(0, digits));
  return ma[1] === mb[1] && cut(ma[2] as string) === cut(mb[2] as string);
}

/**
 * The fraction digits a date-time field holds: as its connector declares (PostgreSQL: the column's
 * precision), else as many as the value shows (canonical values of apps holding milliseconds show 3).
 */
function datetimeDigitsOf(field: FieldSpec, value: string): number {
  const declared = field.options?.datetimeDigits;
  if (typeof declared === 'number') return declared;
  return CANONICAL_DATETIME.exec(value)?.[2]?.length ?? 3;
}

/**
 * Equality of values held by two different fields (one side's against the other side's): two
 * date-times are equal when they agree at the precision both fields can hold, since digits one
 * field cannot hold can never be written to it. A value against its own shadow stays exact
 * (valuesEqual), so an edit of a microsecond on a side that holds microseconds is seen.
 */
export function valuesEqualAcross(
  a: CanonicalValue,
  aField: FieldSpec,
  b: CanonicalValue,
  bField: FieldSpec,
): boolean {
  if (a === b) return true;
  if (
    aField.type !== 'datetime' ||
    bField.type !== 'datetime' ||
    typeof a !== 'string' ||
    typeof b !== 'string'
  )
    return valuesEqual(a, b);
  return datetimesAgreeTo(a, b, Math.min(datetimeDigitsOf(aField, a), datetimeDigitsOf(bField, b)));
}

/** A 53-bit hash (cyrb53) of a string: fast, well spread, not cryptographic. */
export function hashString(text: string, seed = 0): string {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/**
 * A 128-bit hash (two 64-bit halves computed in one pass), 32 hex characters: for keys that must not
 * collide across millions of operations (with 53 bits, ten million keys collide with a chance of
 * about 0.3%).
 */
export function hashKey(text: string): string {
  let a1 = 0xdeadbeef;
  let a2 = 0x41c6ce57;
  let b1 = 0xdeadbeef ^ 0x9e3779b9;
  let b2 = 0x41c6ce57 ^ 0x9e3779b9;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    a1 = Math.imul(a1 ^ ch, 2654435761);
    a2 = Math.imul(a2 ^ ch, 1597334677);
    b1 = Math.imul(b1 ^ ch, 2654435761);
    b2 = Math.imul(b2 ^ ch, 1597334677);
  }
  return finishHalf(a1, a2) + finishHalf(b1, b2);
}

// Hex of two 32-bit words: Number#toString(36) of a 53-bit double was most of the hashing time.
function finishHalf(h1: number, h2: number): string {
  const x = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  const y = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(x ^ (x >>> 13), 3266489909);
  return (y >>> 0).toString(16).padStart(8, '0') + (x >>> 0).toString(16).padStart(8, '0');
}

export function hashValue(value: CanonicalValue): string {
  return hashString(stableJson(value));
}

/** A record's hash over its fields, independent of key order. */
export function hashRecord(fields: Record<string, CanonicalValue>): string {
  return hashString(stableJson(fields));
}
