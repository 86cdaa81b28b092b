import type { ApiAuth, ApiFetchConfig, ApiField, ApiFieldType, ApiPagination } from '@lockstep/contract';
import { nextLink } from './fetch-records';
import { pathOf, recordsAt } from './json-path';

export type Candidate = { keys: string[]; path: string; count: number; objects: number };

const MAX_DEPTH = 5;

/** Arrays of objects in a document (not inside other arrays), with how many objects each holds. */
export function arraysOfObjects(json: unknown): Candidate[] {
  const out: Candidate[] = [];
  const walk = (value: unknown, keys: string[]) => {
    if (Array.isArray(value)) {
      const objects = value.filter((v) => v !== null && typeof v === 'object' && !Array.isArray(v)).length;
      if (objects > 0 && objects * 2 >= value.length)
        out.push({ keys, path: `${pathOf(keys)}[*]`, count: value.length, objects });
      return;
    }
    if (value === null || typeof value !== 'object' || keys.length >= MAX_DEPTH) return;
    for (const [k, v] of Object.entries(value)) walk(v, [...keys, k]);
  };
  walk(json, []);
  return out.sort((a, b) => b.objects - a.objects || a.keys.length - b.keys.length);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const URL_TEXT = /^https?:\/\/[^\s]+$/i;

/** The canonical type sample values of a field show (json for objects and lists, text when mixed). */
export function inferType(values: unknown[]): ApiFieldType {
  const present = values.filter((v) => v !== null && v !== undefined && v !== '');
  if (present.length === 0) return 'text';
  if (present.some((v) => typeof v === 'object')) return 'json';
  if (present.every((v) => typeof v === 'boolean')) return 'boolean';
  if (present.every((v) => typeof v === 'number' && Number.isFinite(v))) return 'number';
  if (!present.every((v) => typeof v === 'string')) return 'text';
  const texts = present as string[];
  const all = (test: (s: string) => boolean) => texts.every(test);
  if (all((s) => DATE.test(s) && !Number.isNaN(Date.parse(s)))) return 'date';
  if (all((s) => DATETIME.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))))) return 'datetime';
  if (all((s) => EMAIL.test(s.trim()))) return 'email';
  if (
    all((s) => {
      if (!URL_TEXT.test(s.trim())) return false;
      try {
        new URL(s.trim());
        return true;
      } catch {
        return false;
      }
    })
  )
    return 'url';
  return 'text';
}

/** Fields of the records (their top-level keys, in first-seen order) with inferred types. */
export function inferFields(records: Record<string, unknown>[]): ApiField[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const r of records.slice(0, 200))
    for (const k of Object.keys(r))
      if (!seen.has(k)) {
        seen.add(k);
        names.push(k);
      }
  return names
    .slice(0, 500)
    .map((name) => ({ name, type: inferType(records.slice(0, 200).map((r) => r[name])) }));
}

const ID_NAMES = ['id', 'uuid', 'key', '_id', 'guid', 'uid', 'identifier', 'code', 'slug', 'sku'];

/** The record's id field: a well-known name first, then any `*_id`/`*Id` field; its values unique and present. */
export function guessIdField(records: Record<string, unknown>[]): { field: string; reason: string } | null {
  if (records.length === 0) return null;
  const fields = inferFields(records);
  const unique = (name: string) => {
    const values = records.map((r) => r[name]);
    if (values.some((v) => v === null || v === undefined || v === '' || typeof v === 'object')) return false;
    return new Set(values.map(String)).size === values.length;
  };
  for (const wanted of ID_NAMES) {
    const f = fields.find((x) => x.name.toLowerCase() === wanted);
    if (f && unique(f.name)) return { field: f.name, reason: `"${f.name}" is unique in every sample record` };
  }
  const idLike = fields.find(
    (f) => /(^|[^a-z])(id|uuid|key)$|[a-z](Id|ID|Uuid|Key)$/.test(f.name) && unique(f.name),
  );
  if (idLike)
    return {
      field: idLike.name,
      reason: `"${idLike.name}" looks like an id and is unique in every sample record`,
    };
  return null;
}

type Found = { keys: string[]; value: unknown };

/** Keys of the response outside the records (depth 3 at most), for pagination hints. */
function hintsOf(json: unknown, recordKeys: string[]): Found[] {
  const out: Found[] = [];
  const walk = (value: unknown, keys: string[]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || keys.length >= 3) return;
    for (const [k, v] of Object.entries(value)) {
      const here = [...keys, k];
      if (here.join('\u0000') === recordKeys.join('\u0000')) continue;
      out.push({ keys: here, value: v });
      walk(v, here);
    }
  };
  walk(json, []);
  return out;
}

const lastKey = (f: Found) => (f.keys.at(-1) ?? '').toLowerCase().replaceAll(/[-_]/g, '');
const looksLikeUrl = (v: unknown) =>
  typeof v === 'string' && (/^https?:\/\//i.test(v) || v.startsWith('/') || v.startsWith('?'));

const NEXT_URL_KEYS = new Set([
  'next',
  'nexturl',
  'nextpageurl',
  'nextlink',
  '@odata.nextlink',
  'nextpage',
  'nexthref',
]);
const CURSOR_KEYS: Record<string, string> = {
  nextcursor: 'cursor',
  cursor: 'cursor',
  nextpagetoken: 'page_token',
  pagetoken: 'page_token',
  nexttoken: 'next_token',
  after: 'after',
  endcursor: 'after',
  continuation: 'continuation',
  continuationtoken: 'continuation',
  next: 'cursor',
};
const CURSOR_PARAMS = [
  'cursor',
  'after',
  'page_token',
  'pageToken',
  'next_token',
  'continuation',
  'starting_after',
];
const PAGE_PARAMS = ['page', 'page_number', 'pageNumber', 'p'];
const SIZE_PARAMS = ['per_page', 'page_size', 'pageSize', 'perPage', 'limit', 'size', 'per-page'];
const OFFSET_PARAMS = ['offset', 'skip', 'start'];
const LIMIT_PARAMS = ['limit', 'take', 'count', 'size', 'max'];

/** The pagination a first page shows: its Link header, its body's next address or cursor, its URL's parameters. */
export function detectPagination(input: {
  url: string | null;
  json: unknown;
  recordKeys: string[];
  recordCount: number;
  linkHeader?: string | string[] | undefined;
}): { pagination: ApiPagination; reason: string } {
  const base = input.url ?? 'http://sample.invalid/';
  if (input.linkHeader && nextLink(input.linkHeader, base))
    return { pagination: { type: 'link_header' }, reason: 'the response has a Link header with rel="next"' };
  const hints = hintsOf(input.json, input.recordKeys);
  const query = input.url ? new URL(input.url).searchParams : new URLSearchParams();
  const nextUrl = hints.find((h) => NEXT_URL_KEYS.has(lastKey(h)) && looksLikeUrl(h.value));
  if (nextUrl) {
    const path = pathOf(nextUrl.keys);
    return { pagination: { type: 'next_url', path }, reason: `the next page's address is at ${path}` };
  }
  const cursor = hints.find(
    (h) =>
      lastKey(h) in CURSOR_KEYS &&
      (typeof h.value === 'string' || typeof h.value === 'number') &&
      String(h.value) !== '' &&
      !looksLikeUrl(h.value),
  );
  if (cursor) {
    const path = pathOf(cursor.keys);
    const param = CURSOR_PARAMS.find((c) => query.has(c)) ?? CURSOR_KEYS[lastKey(cursor)] ?? 'cursor';
    return {
      pagination: { type: 'cursor', param, path },
      reason: `the next page's cursor is at ${path}, sent as ?${param}=`,
    };
  }
  const queryOffset = OFFSET_PARAMS.find((k) => query.has(k));
  const queryLimit = LIMIT_PARAMS.find((k) => query.has(k));
  if (queryOffset && queryLimit) {
    const limit = Number(query.get(queryLimit)) || Math.max(1, input.recordCount);
    return {
      pagination: {
        type: 'offset',
        offsetParam: queryOffset,
        limitParam: queryLimit,
        limit,
        start: 0,
      },
      reason: `the address pages with ?${queryOffset}= and ?${queryLimit}=`,
    };
  }
  const queryPage = PAGE_PARAMS.find((k) => query.has(k));
  const bodyPage = hints.find(
    (h) => ['page', 'currentpage', 'pagenumber'].includes(lastKey(h)) && typeof h.value === 'number',
  );
  const bodyPages = hints.find(
    (h) =>
      ['totalpages', 'lastpage', 'pagecount', 'pages', 'numpages'].includes(lastKey(h)) &&
      typeof h.value === 'number',
  );
  if (queryPage || (bodyPage && bodyPages)) {
    const sizeParam = SIZE_PARAMS.find((k) => query.has(k)) ?? null;
    const size = sizeParam ? Number(query.get(sizeParam)) || null : null;
    const param = queryPage ?? 'page';
    // Pages count from 1 unless the sample asked for page 0.
    const start = queryPage ? (query.get(queryPage) === '0' ? 0 : 1) : Number(bodyPage?.value) === 0 ? 0 : 1;
    return {
      pagination: { type: 'page', param, start, sizeParam, size },
      reason: queryPage
        ? `the address pages with ?${param}=`
        : 'the response tells its page number and page count',
    };
  }
  const bodyOffset = hints.find(
    (h) => ['offset', 'skip'].includes(lastKey(h)) && typeof h.value === 'number',
  );
  const bodyLimit = hints.find((h) => ['limit', 'take'].includes(lastKey(h)) && typeof h.value === 'number');
  if (bodyOffset && bodyLimit) {
    const offsetParam = bodyOffset.keys.at(-1) as string;
    const limitParam = bodyLimit.keys.at(-1) as string;
    return {
      pagination: {
        type: 'offset',
        offsetParam,
        limitParam,
        limit: Number(bodyLimit.value) || 100,
        start: 0,
      },
      reason: `the response tells its ${offsetParam} and ${limitParam}`,
    };
  }
  return { pagination: { type: 'none' }, reason: 'no pagination was found: one request reads everything' };
}

export type Proposal = {
  config: ApiFetchConfig;
  reasons: string[];
  sampleRecords: Record<string, unknown>[];
  candidatePaths: { path: string; count: number }[];
};

/** A fetch configuration proposed from one response (a sample URL's first page or a pasted sample). */
export function proposeConfig(input: {
  url: string | null;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | null;
  auth: ApiAuth;
  json: unknown;
  linkHeader?: string | string[] | undefined;
  recordsPath?: string | undefined;
  pagination?: ApiPagination | undefined;
}): Proposal {
  const reasons: string[] = [];
  const candidates = arraysOfObjects(input.json);
  let recordsPath = input.recordsPath;
  let recordKeys: string[] = [];
  if (recordsPath) reasons.push(`records at ${recordsPath}, as given`);
  else {
    const best = candidates[0];
    if (best) {
      recordsPath = best.path;
      recordKeys = best.keys;
      reasons.push(
        `records at ${best.path}: ${best.objects === 1 ? 'the one object' : `the largest list of objects (${best.objects})`} in the response`,
      );
    } else {
      recordsPath = '$';
      reasons.push('no list of objects was found: the whole response is one record');
    }
  }
  const records = recordsAt(recordsPath, input.json);
  const fields = inferFields(records);
  if (fields.length > 0)
    reasons.push(
      `${fields.length} field${fields.length === 1 ? '' : 's'}, typed from ${Math.min(records.length, 200)} sample records`,
    );
  const id = guessIdField(records);
  reasons.push(
    id ? `id field "${id.field}": ${id.reason}` : 'no id field was found: choose one to upsert by',
  );
  let pagination = input.pagination;
  if (pagination) reasons.push(`pagination ${pagination.type}, as chosen`);
  else {
    const detected = detectPagination({
      url: input.url,
      json: input.json,
      recordKeys,
      recordCount: records.length,
      linkHeader: input.linkHeader,
    });
    pagination = detected.pagination;
    reasons.push(`pagination ${pagination.type}: ${detected.reason}`);
  }
  return {
    config: {
      method: input.method,
      url: pageOneUrl(input.url ?? 'https://api.example.com/records', pagination),
      headers: input.headers,
      body: input.body,
      auth: input.auth,
      recordsPath,
      pagination,
      idField: id?.field ?? null,
      fields,
    },
    reasons,
    sampleRecords: records.slice(0, 10),
    candidatePaths: candidates.slice(0, 10).map((c) => ({ path: c.path, count: c.count })),
  };
}

/** The URL without the paging parameters the pagination sets itself (it adds them per page). */
function pageOneUrl(url: string, pagination: ApiPagination): string {
  const u = new URL(url);
  const drop =
    pagination.type === 'page'
      ? [pagination.param, pagination.sizeParam]
      : pagination.type === 'offset'
        ? [pagination.offsetParam, pagination.limitParam]
        : pagination.type === 'cursor'
          ? [pagination.param]
          : [];
  for (const k of drop) if (k) u.searchParams.delete(k);
  return u.toString();
}
