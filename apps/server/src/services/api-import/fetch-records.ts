import type { ApiFetchConfig } from '@lockstep/contract';
import { stableJson } from '@lockstep/engine';
import { evaluatePath, recordsAt } from './json-path';
import { type OutboundOptions, type OutboundResponse, requestHeaders, requestJson } from './outbound';

export type FetchLimits = { maxPages: number; maxRecords: number };
export type StoppedBecause = 'last_page' | 'page_cap' | 'record_cap' | 'repeated_page';
export type FetchResult = {
  records: Record<string, unknown>[];
  pagesRead: number;
  stoppedBecause: StoppedBecause;
};

/** Sends one request (the real one calls the API; tests may stand in). */
export type Send = (request: Parameters<typeof requestJson>[0]) => Promise<OutboundResponse>;

/** The `rel="next"` address of a Link header (RFC 8288), resolved against the page's address. */
export function nextLink(header: string | string[] | undefined, base: string): string | null {
  const text = [header ?? []].flat().join(',');
  const links = text.match(/<[^>]*>(?:\s*;\s*[^,;]+(?:=(?:"[^"]*"|[^,;]*))?)*/g) ?? [];
  for (const link of links) {
    const target = /^<([^>]*)>/.exec(link)?.[1];
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(link);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (target !== undefined && rels.includes('next')) return new URL(target, base).toString();
  }
  return null;
}

function withParams(url: string, params: Record<string, string | number | null>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.set(k, String(v));
  return u.toString();
}

/** The first page's address: the configured URL with the pagination's first parameters. */
export function firstPageUrl(config: ApiFetchConfig): string {
  const p = config.pagination;
  if (p.type === 'page')
    return withParams(config.url, { [p.param]: p.start, ...(p.sizeParam ? { [p.sizeParam]: p.size } : {}) });
  if (p.type === 'offset')
    return withParams(config.url, { [p.offsetParam]: p.start, [p.limitParam]: p.limit });
  return config.url;
}

function firstValue(path: string, json: unknown): unknown {
  return evaluatePath(path, json)[0];
}

/**
 * Reads a configuration's records over all its pages, up to the page and record caps. Stops at the
 * last page as the pagination tells it (an empty or short page, no cursor, no next link), and at a
 * page that repeats the one before (an API that answers its last page to any page number).
 */
export async function fetchRecords(
  config: ApiFetchConfig,
  limits: FetchLimits,
  options: OutboundOptions & {
    send?: Send;
    onPage?: (pagesRead: number, records: number) => Promise<boolean>;
  },
): Promise<FetchResult> {
  const send: Send = options.send ?? ((r) => requestJson(r, options));
  const headers = requestHeaders(config.headers, config.auth);
  const p = config.pagination;
  const records: Record<string, unknown>[] = [];
  const seenIds = new Set<string>();
  let url: string | null = firstPageUrl(config);
  let pagesRead = 0;
  let previous: string | null = null;
  let page = p.type === 'page' ? p.start : 0;
  let offset = p.type === 'offset' ? p.start : 0;
  let stoppedBecause: StoppedBecause = 'last_page';
  while (url !== null) {
    if (pagesRead >= limits.maxPages) {
      stoppedBecause = 'page_cap';
      break;
    }
    const res = await send({
      method: config.method,
      url,
      headers,
      body: config.method === 'POST' ? config.body : null,
    });
    pagesRead++;
    const found = recordsAt(config.recordsPath, res.json);
    const signature = stableJson(found);
    const ids = config.idField ? found.map((r) => idKey(r[config.idField as string])) : [];
    if (
      (found.length > 0 && signature === previous) ||
      (ids.length > 0 && ids.every((id) => id !== null && seenIds.has(id)))
    ) {
      stoppedBecause = 'repeated_page';
      break;
    }
    previous = signature;
    for (const id of ids) if (id !== null) seenIds.add(id);
    const room = limits.maxRecords - records.length;
    records.push(...found.slice(0, room));
    if ((await options.onPage?.(pagesRead, records.length)) === false) break;

    const current: string = res.url;
    let next: string | null = null;
    if (p.type === 'page') {
      const short = found.length === 0 || (p.size !== null && found.length < p.size);
      page += 1;
      next = short ? null : withParams(current, { [p.param]: page });
    } else if (p.type === 'offset') {
      offset += found.length;
      next =
        found.length < p.limit
          ? null
          : withParams(current, { [p.offsetParam]: offset, [p.limitParam]: p.limit });
    } else if (p.type === 'cursor') {
      const cursor = firstValue(p.path, res.json);
      next =
        cursor === null || cursor === undefined || cursor === '' || cursor === false || found.length === 0
          ? null
          : withParams(current, {
              [p.param]: typeof cursor === 'object' ? JSON.stringify(cursor) : String(cursor),
            });
    } else if (p.type === 'link_header') {
      next = nextLink(res.headers.link, current);
    } else if (p.type === 'next_url') {
      const link = firstValue(p.path, res.json);
      next =
        typeof link === 'string' && link.trim() !== '' && found.length > 0
          ? new URL(link, current).toString()
          : null;
    }
    if (found.length > room) {
      stoppedBecause = 'record_cap';
      break;
    }
    if (records.length >= limits.maxRecords && next !== null) {
      stoppedBecause = 'record_cap';
      break;
    }
    if (next === current) {
      stoppedBecause = 'repeated_page';
      break;
    }
    url = next;
  }
  return { records, pagesRead, stoppedBecause };
}

/** A record's id as a text key (null when it has none). */
export function idKey(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value.trim() === '' ? null : value.trim();
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return stableJson(value);
}
