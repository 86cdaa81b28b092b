import { ApiFetchConfig } from '@lockstep/contract';
import { describe, expect, it } from 'vitest';
import { fetchRecords, nextLink, type Send } from './fetch-records';
import { detectPagination, guessIdField, inferType, proposeConfig } from './infer';
import { evaluatePath, JsonPathError, pathOf } from './json-path';
import { splitSecrets } from './store';

const config = (c: Record<string, unknown>) =>
  ApiFetchConfig.parse({ idField: 'id', recordsPath: '$[*]', ...c });

/** A fake API: pages by URL, answering the Link header given. */
function fakeApi(pages: Record<string, { json: unknown; link?: string }>): Send & { calls: string[] } {
  const calls: string[] = [];
  const send = (async (r) => {
    calls.push(r.url);
    const page = pages[r.url];
    if (!page) throw new Error(`unexpected ${r.url}`);
    return { status: 200, url: r.url, headers: page.link ? { link: page.link } : {}, json: page.json };
  }) as Send & { calls: string[] };
  send.calls = calls;
  return send;
}

describe('Link header', () => {
  it('finds rel="next" among several links, relative ones resolved', () => {
    expect(
      nextLink(
        '<https://a.test/x?page=1>; rel="first", </x?page=3>; rel="next last"',
        'https://a.test/x?page=2',
      ),
    ).toBe('https://a.test/x?page=3');
    expect(nextLink('<https://a.test/x?page=1>; rel="prev"', 'https://a.test/x')).toBeNull();
    expect(nextLink(undefined, 'https://a.test/x')).toBeNull();
  });
});

describe('fetchRecords', () => {
  it('follows a next-page URL field until it is empty', async () => {
    const send = fakeApi({
      'https://a.test/r': { json: { results: [{ id: 1 }], next: 'https://a.test/r?p=2' } },
      'https://a.test/r?p=2': { json: { results: [{ id: 2 }], next: null } },
    });
    const out = await fetchRecords(
      config({
        url: 'https://a.test/r',
        recordsPath: '$.results[*]',
        pagination: { type: 'next_url', path: '$.next' },
      }),
      { maxPages: 10, maxRecords: 100 },
      { allowPrivate: true, send },
    );
    expect(out).toEqual({ records: [{ id: 1 }, { id: 2 }], pagesRead: 2, stoppedBecause: 'last_page' });
  });

  it('stops when an API answers the same records to every page number', async () => {
    const same = { json: [{ id: 1 }, { id: 2 }] };
    const send = fakeApi({ 'https://a.test/r?page=1': same, 'https://a.test/r?page=2': same });
    const out = await fetchRecords(
      config({ url: 'https://a.test/r', pagination: { type: 'page', param: 'page' } }),
      { maxPages: 50, maxRecords: 100 },
      { allowPrivate: true, send },
    );
    expect(out).toMatchObject({ pagesRead: 2, stoppedBecause: 'repeated_page' });
    expect(out.records).toHaveLength(2);
  });
});

describe('generate-fetch inference', () => {
  it('types sample values', () => {
    expect(inferType(['a@b.co', 'c@d.org'])).toBe('email');
    expect(inferType(['2024-01-02', null])).toBe('date');
    expect(inferType(['2024-01-02T03:04:05.123+02:00'])).toBe('datetime');
    expect(inferType(['https://x.test/a'])).toBe('url');
    expect(inferType([1, 2.5])).toBe('number');
    expect(inferType([true, false])).toBe('boolean');
    expect(inferType([{ a: 1 }])).toBe('json');
    expect(inferType([1, 'a'])).toBe('text');
    expect(inferType(['007', '008'])).toBe('text');
  });

  it('guesses the id field only when its values are unique', () => {
    expect(
      guessIdField([
        { id: 1, key: 'a' },
        { id: 1, key: 'b' },
      ])?.field,
    ).toBe('key');
    expect(guessIdField([{ customerId: 'x' }, { customerId: 'y' }])?.field).toBe('customerId');
    expect(guessIdField([{ name: 'a' }, { name: 'b' }])).toBeNull();
  });

  it('detects a cursor nested in the response and the query parameter the URL already uses', () => {
    const found = detectPagination({
      url: 'https://a.test/crm?after=0',
      json: { results: [{ id: 1 }], paging: { next: { after: '42' } } },
      recordKeys: ['results'],
      recordCount: 1,
    });
    expect(found.pagination).toEqual({ type: 'cursor', param: 'after', path: '$.paging.next.after' });
  });

  it('proposes the largest list of objects as the records, with odd keys quoted', () => {
    const p = proposeConfig({
      url: null,
      method: 'GET',
      headers: {},
      body: null,
      auth: { type: 'none' },
      json: { tags: [{ t: 1 }], 'the rows': [{ id: 1 }, { id: 2 }, { id: 3 }] },
    });
    expect(p.config.recordsPath).toBe("$['the rows'][*]");
    expect(evaluatePath(p.config.recordsPath, { 'the rows': [{ id: 9 }] })).toEqual([{ id: 9 }]);
    expect(p.candidatePaths.map((c) => c.path)).toEqual(["$['the rows'][*]", '$.tags[*]']);
  });

  it('refuses script expressions in a path', () => {
    expect(() => evaluatePath('$.data[?(@.id > 1)]', { data: [] })).toThrow(JsonPathError);
    expect(pathOf(["it's"])).toBe("$['it\\'s']");
  });
});

describe('secrets', () => {
  it('masks the auth and credential-like headers, keeping the rest', () => {
    const { visible, secrets } = splitSecrets(
      config({
        url: 'https://a.test',
        headers: { 'X-Api-Key': 'k', Accept: 'application/json', Cookie: 'c' },
        auth: { type: 'basic', username: 'u', password: 'p' },
      }),
    );
    expect(visible.headers).toEqual({
      'X-Api-Key': '••••••••',
      Accept: 'application/json',
      Cookie: '••••••••',
    });
    expect(visible.auth).toEqual({ type: 'basic', username: 'u', password: '••••••••' });
    expect(secrets).toEqual({
      auth: { type: 'basic', username: 'u', password: 'p' },
      headers: { 'X-Api-Key': 'k', Cookie: 'c' },
    });
  });
});
