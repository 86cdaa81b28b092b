/**
 * Attio's filter and sort syntax for records/query and entries/query: shorthand
 * (`{"email_addresses": "a@b.com"}`), verbose operators (`$eq`, `$in`, `$contains`,
 * `$starts_with`, `$ends_with`, `$lt`, `$lte`, `$gt`, `$gte`, `$not_empty`), properties of a value
 * (`{"name": {"last_name": {"$eq": "Sato"}}}`), and the logical `$and`, `$or`, `$not`.
 * Bad filters are 400 `filter_error`.
 */
import { invalidRequest, type StoredValue } from './model.ts';
import { type AttributeDef, type Payload, primaryOf } from './values.ts';

type Row = { id: string; createdAt: number; values: Map<string, StoredValue[]> };

const filterError = (message: string) => invalidRequest(400, 'filter_error', message);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const OPERATORS = new Set([
  '$eq',
  '$in',
  '$contains',
  '$starts_with',
  '$ends_with',
  '$lt',
  '$lte',
  '$gt',
  '$gte',
  '$not_empty',
]);

/** Properties a verbose filter may name, per type (the value's own keys). */
function propertyOf(attr: AttributeDef, p: Payload, prop: string): unknown {
  if (attr.type === 'select' && (prop === 'option' || prop === 'title')) return primaryOf(attr, p);
  if (attr.type === 'status' && (prop === 'status' || prop === 'title')) return primaryOf(attr, p);
  if (attr.type === 'email-address' && prop === 'normalized_email_address') return p.email_address;
  if (!(prop in p))
    throw filterError(`Unknown property "${prop}" for attribute "${attr.api_slug}" of type "${attr.type}".`);
  return p[prop];
}

/** Comparable form: numbers stay numbers, timestamps become ms, strings compare case-insensitively. */
function comparable(attr: AttributeDef, v: unknown): unknown {
  if (attr.type === 'timestamp' && typeof v === 'string') return Date.parse(v);
  if (typeof v === 'string') return v.toLowerCase();
  return v;
}

function matchOperator(
  attr: AttributeDef,
  op: string,
  expected: unknown,
  actual: unknown,
  optionId?: unknown,
): boolean {
  const a = comparable(attr, actual);
  switch (op) {
    case '$eq':
      return a === comparable(attr, expected) || (optionId !== undefined && optionId === expected);
    case '$in':
      if (!Array.isArray(expected)) throw filterError('$in expects an array.');
      return expected.some((e) => a === comparable(attr, e) || (optionId !== undefined && optionId === e));
    case '$contains':
    case '$starts_with':
    case '$ends_with': {
      if (typeof expected !== 'string') throw filterError(`${op} expects a string.`);
      if (typeof a !== 'string') return false;
      const e = expected.toLowerCase();
      return op === '$contains' ? a.includes(e) : op === '$starts_with' ? a.startsWith(e) : a.endsWith(e);
    }
    case '$lt':
    case '$lte':
    case '$gt':
    case '$gte': {
      const e = comparable(attr, expected);
      if (typeof a !== typeof e || (typeof a !== 'number' && typeof a !== 'string')) return false;
      const x = a as number | string;
      const y = e as number | string;
      return op === '$lt' ? x < y : op === '$lte' ? x <= y : op === '$gt' ? x > y : x >= y;
    }
    default:
      throw filterError(`Unknown operator "${op}".`);
  }
}

/** A condition on one attribute: the record matches when one of its active values does. */
function matchAttribute(attr: AttributeDef, row: Row, condition: unknown): boolean {
  const active = (row.values.get(attr.id) ?? []).filter((v) => v.activeUntil === null).map((v) => v.payload);
  if (isObject(condition)) {
    const keys = Object.keys(condition);
    if (keys.length === 0) throw filterError(`Empty condition for attribute "${attr.api_slug}".`);
    return keys.every((key) => {
      const expected = condition[key];
      if (key === '$not_empty') {
        if (typeof expected !== 'boolean') throw filterError('$not_empty expects a boolean.');
        return active.length > 0 === expected;
      }
      if (key.startsWith('$')) {
        if (!OPERATORS.has(key)) throw filterError(`Unknown operator "${key}".`);
        return active.some((p) =>
          matchOperator(attr, key, expected, primaryOf(attr, p), optionIdOf(attr, p)),
        );
      }
      // A property of the value: {"name": {"last_name": "Sato"}} or {... {"$eq": "Sato"}}.
      return active.some((p) => {
        const actual = propertyOf(attr, p, key);
        if (isObject(expected)) {
          return Object.entries(expected).every(([op, e]) => {
            if (!OPERATORS.has(op) || op === '$not_empty') throw filterError(`Unknown operator "${op}".`);
            return matchOperator(attr, op, e, actual);
          });
        }
        return matchOperator(attr, '$eq', expected, actual);
      });
    });
  }
  if (Array.isArray(condition)) throw filterError(`Invalid condition for attribute "${attr.api_slug}".`);
  // Shorthand: equality on the value's main field; a record reference also matches by id.
  return active.some((p) => matchOperator(attr, '$eq', condition, primaryOf(attr, p), optionIdOf(attr, p)));
}

function optionIdOf(attr: AttributeDef, p: Payload): unknown {
  if (attr.type === 'select') return p.option;
  if (attr.type === 'status') return p.status;
  return undefined;
}

export function matchFilter(
  filter: unknown,
  row: Row,
  attributes: AttributeDef[],
  extra?: (key: string, condition: unknown) => boolean | undefined,
): boolean {
  if (filter === undefined || filter === null) return true;
  if (!isObject(filter)) throw filterError('The filter must be an object.');
  return Object.entries(filter).every(([key, condition]) => {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition)) throw filterError(`${key} expects an array of filters.`);
      const results = condition.map((f) => matchFilter(f, row, attributes, extra));
      return key === '$and' ? results.every(Boolean) : results.some(Boolean);
    }
    if (key === '$not') return !matchFilter(condition, row, attributes, extra);
    if (key.startsWith('$')) throw filterError(`Unknown operator "${key}" at the top level of the filter.`);
    const fromExtra = extra?.(key, condition);
    if (fromExtra !== undefined) return fromExtra;
    const attr = attributes.find((a) => a.api_slug === key || a.id === key);
    if (!attr) throw filterError(`Unknown attribute slug: "${key}".`);
    return matchAttribute(attr, row, condition);
  });
}

type Sort = { direction: 'asc' | 'desc'; attribute: string; field?: string };

export function parseSorts(
  sorts: unknown,
  attributes: AttributeDef[],
): { attr: AttributeDef; dir: 1 | -1; field?: string }[] {
  if (sorts === undefined) return [];
  if (!Array.isArray(sorts))
    throw invalidRequest(400, 'validation_type', 'Body payload validation error: sorts must be an array.');
  return sorts.map((s: Partial<Sort>) => {
    if (!isObject(s) || (s.direction !== 'asc' && s.direction !== 'desc') || typeof s.attribute !== 'string')
      throw invalidRequest(
        400,
        'validation_type',
        'Body payload validation error: each sort needs direction (asc|desc) and attribute.',
      );
    const attr = attributes.find((a) => a.api_slug === s.attribute || a.id === s.attribute);
    if (!attr) throw filterError(`Unknown attribute slug in sort: "${s.attribute}".`);
    return {
      attr,
      dir: s.direction === 'asc' ? 1 : -1,
      ...(typeof s.field === 'string' ? { field: s.field } : {}),
    };
  });
}

export function sortRows<T extends Row>(rows: T[], sorts: ReturnType<typeof parseSorts>): T[] {
  const key = (row: T, s: (typeof sorts)[number]): unknown => {
    const v = (row.values.get(s.attr.id) ?? []).find((x) => x.activeUntil === null);
    if (!v) return undefined;
    const raw = s.field ? v.payload[s.field] : primaryOf(s.attr, v.payload);
    return comparable(s.attr, raw);
  };
  return [...rows].sort((a, b) => {
    for (const s of sorts) {
      const x = key(a, s);
      const y = key(b, s);
      if (x === y) continue;
      // Empty values last in either direction.
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (x < y ? -1 : 1) * s.dir;
    }
    return a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1);
  });
}
