import { matchKeyOf } from './match';
import type { CanonicalValue, RecordData, Side } from './types';

/** A row filter of a table mapping: data, evaluated by the engine, changeable after go-live. */
export type Filter =
  | { side: Side; fieldId: string; op: 'eq' | 'neq' | 'contains' | 'gt' | 'lt'; value: CanonicalValue }
  | { side: Side; fieldId: string; op: 'empty' | 'not_empty' }
  | { and: Filter[] }
  | { or: Filter[] };

const isEmpty = (v: CanonicalValue | undefined) =>
  v === null || v === undefined || v === false || (Array.isArray(v) && v.length === 0);

function compare(a: CanonicalValue, b: CanonicalValue): number | null {
  if (typeof a === 'string' && typeof b === 'string') {
    const na = Number(a);
    const nb = Number(b);
    if (a.trim() !== '' && b.trim() !== '' && !Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return null;
}

/** Whether a record passes; a filter on the other side's field is not this record's to judge (passes). */
export function passesFilter(filter: Filter | null | undefined, side: Side, record: RecordData): boolean {
  if (!filter) return true;
  if ('and' in filter) return filter.and.every((f) => passesFilter(f, side, record));
  if ('or' in filter) return filter.or.some((f) => passesFilter(f, side, record));
  if (filter.side !== side) return true;
  const v = record.fields[filter.fieldId] ?? null;
  switch (filter.op) {
    case 'empty':
      return isEmpty(v);
    case 'not_empty':
      return !isEmpty(v);
    case 'eq':
      return matchKeyOf(v) === matchKeyOf(filter.value);
    case 'neq':
      return matchKeyOf(v) !== matchKeyOf(filter.value);
    case 'contains': {
      const needle = matchKeyOf(filter.value) ?? '';
      if (Array.isArray(v)) return v.some((x) => matchKeyOf(typeof x === 'string' ? x : x.url) === needle);
      return (matchKeyOf(v) ?? '').includes(needle);
    }
    case 'gt':
    case 'lt': {
      const c = compare(v, filter.value);
      return c !== null && (filter.op === 'gt' ? c > 0 : c < 0);
    }
  }
}

/** Checks a filter's shape (it arrives as JSON from the API); returns a reason when it does not parse. */
export function validateFilter(filter: unknown, path = 'filter'): string | null {
  if (filter === null || filter === undefined) return null;
  if (typeof filter !== 'object') return `${path} must be an object.`;
  const f = filter as Record<string, unknown>;
  if ('and' in f || 'or' in f) {
    const list = (f.and ?? f.or) as unknown;
    if (!Array.isArray(list)) return `${path}.${'and' in f ? 'and' : 'or'} must be a list.`;
    for (const [i, sub] of list.entries()) {
      const r = validateFilter(sub, `${path}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  if (f.side !== 'left' && f.side !== 'right') return `${path}.side must be "left" or "right".`;
  if (typeof f.fieldId !== 'string') return `${path}.fieldId must be a field id.`;
  if (!['eq', 'neq', 'contains', 'gt', 'lt', 'empty', 'not_empty'].includes(String(f.op)))
    return `${path}.op is not a known operator.`;
  return null;
}
