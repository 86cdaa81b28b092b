import { Decimal } from 'decimal.js';
import { markdownToPlainText } from './rich-text';
import {
  type CanonicalValue,
  type Currency,
  type Direction,
  type FieldSpec,
  type FieldType,
  fail,
  ok,
  type Result,
} from './types';
import { normalizeValue, stableJson } from './values';

type Convert = (value: CanonicalValue, from: FieldSpec, to: FieldSpec) => Result<CanonicalValue>;

const asText: Convert = (v) => {
  if (v === null) return ok(null);
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return ok(String(v));
  if (Array.isArray(v)) return ok(v.map((x) => (typeof x === 'string' ? x : x.url)).join(', '));
  if ('json' in v) return ok(stableJson(v.json));
  return ok(`${new Decimal(v.minor).div(100).toFixed(2)} ${v.code}`);
};
const parseAs: Convert = (v, _from, to) =>
  normalizeValue(to.type, v, { currencyCode: to.options?.currencyCode });
const digits = (f: FieldSpec) => f.options?.currencyDigits ?? 2;

/**
 * Which field types map to which, and how a value converts each way. Missing pairs are
 * incompatible. Text-like targets take any text; parsing targets refuse values that do not parse.
 */
const CONVERTERS: Partial<Record<FieldType, Partial<Record<FieldType, Convert>>>> = {
  text: {
    rich_text: parseAs,
    url: parseAs,
    email: parseAs,
    phone: parseAs,
    single_select: parseAs,
    number: parseAs,
    boolean: parseAs,
    date: parseAs,
    datetime: parseAs,
    duration: parseAs,
    multi_select: (v, f, t) =>
      typeof v === 'string' ? normalizeValue(t.type, v.split(',')) : parseAs(v, f, t),
    json: (v) => {
      if (v === null) return ok(null);
      try {
        return ok({ json: JSON.parse(String(v)) });
      } catch {
        return fail('type_mismatch', `"${String(v)}" is not JSON.`);
      }
    },
  },
  rich_text: { text: (v) => ok(typeof v === 'string' ? markdownToPlainText(v) || null : null) },
  url: { text: asText, rich_text: parseAs },
  email: { text: asText },
  phone: { text: asText },
  single_select: { text: asText, multi_select: (v) => ok(v === null ? null : [String(v)]) },
  multi_select: {
    text: asText,
    single_select: (v) => {
      if (v === null || (Array.isArray(v) && v.length === 0)) return ok(null);
      if (Array.isArray(v) && v.length === 1) return ok(String(v[0]));
      return fail('type_mismatch', 'Several options are chosen, but the other field holds only one.');
    },
  },
  number: {
    text: asText,
    duration: parseAs,
    currency: (v, _f, t) => {
      if (v === null) return ok(null);
      const minor = new Decimal(String(v)).mul(10 ** digits(t));
      if (!minor.isInteger())
        return fail('type_mismatch', `${v} has more decimals than the currency allows.`);
      return ok({ minor: minor.toFixed(), code: t.options?.currencyCode ?? 'USD' });
    },
  },
  currency: {
    number: (v, f) =>
      v === null ? ok(null) : ok(new Decimal((v as Currency).minor).div(10 ** digits(f)).toFixed()),
    text: asText,
  },
  duration: { number: (v) => (v === null ? ok(null) : normalizeValue('number', v)), text: asText },
  boolean: { text: (v) => ok(v === true ? 'true' : 'false') },
  date: { datetime: parseAs, text: asText },
  datetime: { date: parseAs, text: asText },
  json: { text: asText },
};

/** Converts a canonical value of one field into the canonical value for another field. */
export function convertValue(value: CanonicalValue, from: FieldSpec, to: FieldSpec): Result<CanonicalValue> {
  if (from.type === to.type) {
    if (
      to.type === 'currency' &&
      value !== null &&
      to.options?.currencyCode &&
      (value as Currency).code !== to.options.currencyCode
    ) {
      return fail(
        'type_mismatch',
        `The amount is in ${(value as Currency).code}, the other field holds ${to.options.currencyCode}.`,
      );
    }
    return ok(value);
  }
  const convert = CONVERTERS[from.type]?.[to.type];
  if (!convert)
    return fail('incompatible_mapping', `A ${from.type} field cannot be mapped to a ${to.type} field.`);
  return convert(value, from, to);
}

export function canConvert(from: FieldType, to: FieldType): boolean {
  return from === to || CONVERTERS[from]?.[to] !== undefined;
}

export type MappingCheck =
  | { ok: true; effectiveDirection: Direction; note: string | null }
  | { ok: false; reason: string };

/**
 * Whether two fields can be mapped in the asked direction. A read-only field can only be a source,
 * and a type that converts one way only narrows the direction; if nothing can flow, it is refused.
 */
export function checkFieldMapping(left: FieldSpec, right: FieldSpec, direction: Direction): MappingCheck {
  const relation = left.type === 'relations' || right.type === 'relations';
  if (relation && left.type !== right.type)
    return { ok: false, reason: 'A linked-record field maps only to another linked-record field.' };
  const toRight = direction !== 'right_to_left' && canConvert(left.type, right.type) && !right.readOnly;
  const toLeft = direction !== 'left_to_right' && canConvert(right.type, left.type) && !left.readOnly;
  if (!toRight && !toLeft) {
    if (left.readOnly && right.readOnly)
      return { ok: false, reason: `"${left.name}" and "${right.name}" are both read-only.` };
    if (!canConvert(left.type, right.type) && !canConvert(right.type, left.type)) {
      return {
        ok: false,
        reason: `A ${left.type} field ("${left.name}") cannot be mapped to a ${right.type} field ("${right.name}").`,
      };
    }
    const target = direction === 'left_to_right' ? right : left;
    return { ok: false, reason: `"${target.name}" is read-only, so nothing can be written to it.` };
  }
  const effectiveDirection: Direction =
    toRight && toLeft ? 'both' : toRight ? 'left_to_right' : 'right_to_left';
  const note =
    effectiveDirection === direction
      ? null
      : `Syncs ${effectiveDirection === 'left_to_right' ? `from "${left.name}" to "${right.name}"` : `from "${right.name}" to "${left.name}"`} only: ${
          (effectiveDirection === 'left_to_right' ? left : right).readOnly ||
          (effectiveDirection === 'left_to_right' ? right : left).readOnly
            ? 'the other field is read-only'
            : 'the types convert one way only'
        }.`;
  return { ok: true, effectiveDirection, note };
}
