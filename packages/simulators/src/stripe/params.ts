/**
 * Stripe's request encoding: `application/x-www-form-urlencoded` bodies (and query strings) with
 * nested keys, `metadata[key]=v`, `address[line1]=...`, arrays as `expand[]=a` or `expand[0]=a`
 * (the official Node client sends indexed arrays). Every value arrives as a string; the helpers
 * here check types the way Stripe reports them (400 `invalid_request_error` with `param`).
 */
import { StripeApiError } from './errors.ts';

export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type Params = { [key: string]: FormValue };

/** Split `a[b][c]` into `['a', 'b', 'c']` (`a[]` gives `['a', '']`). */
function keyPath(key: string): string[] {
  const open = key.indexOf('[');
  if (open <= 0) return [key];
  const parts = [key.slice(0, open)];
  const re = /\[([^\]]*)\]/g;
  for (let m = re.exec(key); m !== null; m = re.exec(key)) parts.push(m[1] ?? '');
  return parts;
}

/** Parse a form-encoded string into nested params; numeric or empty indices make arrays. */
export function parseForm(raw: string | URLSearchParams): Params {
  const pairs = typeof raw === 'string' ? new URLSearchParams(raw) : raw;
  const root: Record<string, unknown> = {};
  for (const [key, value] of pairs) {
    const path = keyPath(key);
    let node: Record<string, unknown> = root;
    for (const [i, part] of path.entries()) {
      const last = i === path.length - 1;
      const seg = part === '' ? String(Object.keys(node).length) : part;
      if (last) {
        node[seg] = value;
      } else {
        const next = node[seg];
        if (typeof next !== 'object' || next === null) node[seg] = {};
        node = node[seg] as Record<string, unknown>;
      }
    }
  }
  return toArrays(root) as Params;
}

/** Objects whose keys are exactly 0..n-1 become arrays (in index order). */
function toArrays(value: unknown): FormValue {
  if (typeof value !== 'object' || value === null) return value as string;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const converted: Record<string, FormValue> = {};
  for (const k of keys) converted[k] = toArrays(obj[k]);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    const idx = keys.map(Number).sort((a, b) => a - b);
    if (idx.every((n, i) => n === i)) return idx.map((n) => converted[String(n)] as FormValue);
  }
  return converted;
}

/** Turn a JS object (numbers, booleans, nested objects) into the string form a request carries. */
export function toFormParams(input: Record<string, unknown>): Params {
  const convert = (v: unknown): FormValue | undefined => {
    if (v === undefined) return undefined;
    if (v === null) return '';
    if (Array.isArray(v)) return v.map((x) => convert(x) ?? '');
    if (typeof v === 'object') {
      const out: Record<string, FormValue> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const c = convert(x);
        if (c !== undefined) out[k] = c;
      }
      return out;
    }
    return String(v);
  };
  return (convert(input) ?? {}) as Params;
}

/** A stable text form of params, to compare idempotent retries. */
export function canonicalParams(p: unknown): string {
  if (typeof p !== 'object' || p === null) return JSON.stringify(p);
  if (Array.isArray(p)) return `[${p.map(canonicalParams).join(',')}]`;
  const obj = p as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalParams(obj[k])}`)
    .join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Validation

export const invalidParam = (param: string, message: string, code?: string) =>
  new StripeApiError(400, {
    type: 'invalid_request_error',
    message,
    param,
    ...(code ? { code } : {}),
    validation: true,
  });

export const missingParam = (param: string) =>
  invalidParam(param, `Missing required param: ${param}.`, 'parameter_missing');

/** Refuse parameters the endpoint does not take, as Stripe does (`parameter_unknown`). */
export function allowOnly(params: Params, allowed: readonly string[]): void {
  for (const key of Object.keys(params)) {
    if (key === 'expand' || allowed.includes(key)) continue;
    throw invalidParam(key, `Received unknown parameter: ${key}`, 'parameter_unknown');
  }
}

export function allowOnlyNested(params: Record<string, FormValue>, parent: string, allowed: string[]): void {
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) {
      throw invalidParam(
        `${parent}[${key}]`,
        `Received unknown parameter: ${parent}[${key}]`,
        'parameter_unknown',
      );
    }
  }
}

export function str(params: Params, name: string): string | undefined {
  const v = params[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalidParam(name, `Invalid string: ${JSON.stringify(v)}`);
  return v;
}

/** A string that may be emptied with '' (returns null then). */
export function nullableStr(params: Params, name: string, max = 5000): string | null | undefined {
  const v = str(params, name);
  if (v === undefined) return undefined;
  if (v === '') return null;
  if (v.length > max) {
    throw invalidParam(name, `Invalid string: ${v.slice(0, 20)}...; must be at most ${max} characters`);
  }
  return v;
}

export function int(params: Params, name: string, min?: number, max?: number): number | undefined {
  const v = str(params, name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw invalidParam(name, `Invalid integer: ${v}`);
  const n = Number(v);
  if (min !== undefined && n < min) {
    throw invalidParam(name, `This value must be greater than or equal to ${min}.`);
  }
  if (max !== undefined && n > max) {
    throw invalidParam(name, `This value must be less than or equal to ${max}.`);
  }
  return n;
}

export function bool(params: Params, name: string): boolean | undefined {
  const v = str(params, name);
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw invalidParam(name, `Invalid boolean: ${v}`);
}

export function oneOf<T extends string>(params: Params, name: string, values: readonly T[]): T | undefined {
  const v = str(params, name);
  if (v === undefined) return undefined;
  if (!values.includes(v as T)) {
    throw invalidParam(name, `Invalid ${name}: must be one of ${values.join(', ')}`);
  }
  return v as T;
}

export function obj(params: Params, name: string): Record<string, FormValue> | undefined {
  const v = params[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw invalidParam(name, `Invalid object`);
  }
  return v;
}

export function list(params: Params, name: string): FormValue[] | undefined {
  const v = params[name];
  if (v === undefined) return undefined;
  if (v === '') return [];
  if (!Array.isArray(v)) throw invalidParam(name, `Invalid array`);
  return v;
}

export function stringList(params: Params, name: string): string[] | undefined {
  const v = list(params, name);
  if (v === undefined) return undefined;
  return v.map((x) => {
    if (typeof x !== 'string') throw invalidParam(name, `Invalid array`);
    return x;
  });
}

// ---------------------------------------------------------------------------------------------
// Metadata: at most 50 keys, keys up to 40 characters without square brackets, string values up
// to 500 characters; a key set to '' is removed, and `metadata=''` removes every key.

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_VALUE_LENGTH = 500;

export function applyMetadata(current: Record<string, string>, params: Params): Record<string, string> {
  const v = params.metadata;
  if (v === undefined) return current;
  if (v === '') return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw invalidParam('metadata', 'Invalid object');
  }
  const next = { ...current };
  for (const [key, value] of Object.entries(v)) {
    if (typeof value !== 'string') {
      throw invalidParam(
        `metadata[${key}]`,
        `Metadata values must be strings, but for key '${key}' you passed in a value of type hash.`,
      );
    }
    if (key.length > METADATA_MAX_KEY_LENGTH) {
      throw invalidParam(
        'metadata',
        `Metadata keys can have up to ${METADATA_MAX_KEY_LENGTH} characters, but you passed in a key that is ${key.length} characters: '${key}'`,
      );
    }
    if (value.length > METADATA_MAX_VALUE_LENGTH) {
      throw invalidParam(
        `metadata[${key}]`,
        `Metadata values can have up to ${METADATA_MAX_VALUE_LENGTH} characters, but you passed in a value that is ${value.length} characters.`,
      );
    }
    if (value === '') delete next[key];
    else next[key] = value;
  }
  if (Object.keys(next).length > METADATA_MAX_KEYS) {
    throw invalidParam(
      'metadata',
      `You can specify up to ${METADATA_MAX_KEYS} metadata keys, but the object would have ${Object.keys(next).length}.`,
    );
  }
  return next;
}
