/**
 * Contract test: Notion's own SDK (@notionhq/client, pinned) against the simulator. Every call goes
 * through the client with its default Notion-Version, and the answers are checked against what its
 * types describe (full objects, list shapes, APIResponseError), not only for not throwing.
 */
import {
  APIErrorCode,
  APIResponseError,
  Client,
  collectAllDataSourceRows,
  collectPaginatedAPI,
  isFullDatabase,
  isFullDataSource,
  isFullPage,
  isFullUser,
  LogLevel,
  type PageObjectResponse,
} from '@notionhq/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../http.ts';
import { NOTION_VERSION, type NotionSimulator, startNotionSimulator } from './index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function notion(sim: NotionSimulator, options: ConstructorParameters<typeof Client>[0] = {}): Client {
  // The failures below are expected; the client's warnings about them are noise here.
  return new Client({ auth: sim.token, baseUrl: sim.url, logLevel: LogLevel.ERROR, ...options });
}

/** What PageObjectResponse promises. */
function expectPage(p: unknown, dataSourceId: string): PageObjectResponse {
  expect(isFullPage(p as PageObjectResponse)).toBe(true);
  const page = p as PageObjectResponse;
  expect(page.object).toBe('page');
  expect(page.id).toMatch(UUID);
  expect(page.created_time).toMatch(ISO);
  expect(page.last_edited_time).toMatch(ISO);
  expect(page.created_by.object).toBe('user');
  expect(page.parent).toMatchObject({ type: 'data_source_id', data_source_id: dataSourceId });
  expect(typeof page.in_trash).toBe('boolean');
  expect(typeof page.url).toBe('string');
  for (const [name, value] of Object.entries(page.properties)) {
    expect(typeof value.id, name).toBe('string');
    expect(value.type in value, name).toBe(true);
  }
  return page;
}

async function failure(p: Promise<unknown>): Promise<APIResponseError> {
  const err = await p.then(
    () => {
      throw new Error('expected the client to reject');
    },
    (e: unknown) => e,
  );
  expect(APIResponseError.isAPIResponseError(err)).toBe(true);
  const e = err as APIResponseError;
  expect(typeof e.code).toBe('string');
  expect(typeof e.status).toBe('number');
  expect(typeof e.message).toBe('string');
  return e;
}

describe('@notionhq/client against the Notion simulator', () => {
  let sim: NotionSimulator;
  let client: Client;
  beforeAll(async () => {
    sim = await startNotionSimulator({ idSeed: 11, rateLimit: false });
    client = notion(sim);
  });
  afterAll(() => sim.close());

  it('sends the API version the simulator serves (2025-09-03, data sources)', async () => {
    expect(Client.defaultNotionVersion).toBe(NOTION_VERSION);
    const me = await client.users.me({});
    expect(me).toMatchObject({ object: 'user', type: 'bot' });
    expect(me.id).toMatch(UUID);
    expect(sim.requestLog.count({ status: 200 })).toBe(sim.requestLog.total);
  });

  it('retrieves databases and data sources with their schema', async () => {
    const ws = sim.workspace!;
    const db = await client.databases.retrieve({ database_id: ws.peopleDatabaseId });
    expect(isFullDatabase(db)).toBe(true);
    if (!isFullDatabase(db)) return;
    expect(db.data_sources).toEqual([{ id: ws.peopleDataSourceId, name: 'People' }]);
    expect(db.title.map((t) => t.plain_text).join('')).toBe('People');

    const ds = await client.dataSources.retrieve({ data_source_id: ws.peopleDataSourceId });
    expect(isFullDataSource(ds)).toBe(true);
    if (!isFullDataSource(ds)) return;
    expect(ds.object).toBe('data_source');
    expect(ds.parent).toEqual({ type: 'database_id', database_id: ws.peopleDatabaseId });
    expect(ds.properties.Name).toMatchObject({ id: 'title', type: 'title', name: 'Name' });
    const status = ds.properties.Status;
    expect(status?.type).toBe('status');
    if (status?.type === 'status') {
      expect(status.status.options.map((o) => o.name)).toContain('Lead');
      expect(status.status.groups.length).toBe(3);
    }
    const company = ds.properties.Company;
    expect(company?.type).toBe('relation');
    if (company?.type === 'relation') {
      expect(company.relation.data_source_id).toBe(ws.companiesDataSourceId);
      expect(company.relation.type).toBe('dual_property');
    }
  });

  it('queries a data source page by page (has_more, next_cursor) and with the pagination helper', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await client.dataSources.query({
        data_source_id: ds,
        page_size: 15,
        sorts: [{ property: 'Name', direction: 'ascending' }],
        ...(cursor ? { start_cursor: cursor } : {}),
      });
      pages++;
      expect(res.object).toBe('list');
      expect(typeof res.has_more).toBe('boolean');
      expect(res.has_more ? typeof res.next_cursor : res.next_cursor).toBe(res.has_more ? 'string' : null);
      for (const r of res.results) ids.push(expectPage(r, ds).id);
      cursor = res.next_cursor ?? undefined;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(ids).size).toBe(40);

    const all = await collectPaginatedAPI(client.dataSources.query, {
      data_source_id: ds,
      page_size: 7,
      filter: {
        and: [
          { property: 'Email', email: { contains: '@example.com' } },
          { timestamp: 'created_time', created_time: { on_or_before: '2100-01-01' } },
        ],
      },
    });
    expect(all).toHaveLength(40);
    const filtered = await client.dataSources.query({
      data_source_id: ds,
      filter_properties: ['title'],
      filter: { property: 'Owner', people: { is_not_empty: true } },
    });
    expect(filtered.results).toHaveLength(10);
    for (const r of filtered.results)
      expect(Object.keys((r as PageObjectResponse).properties)).toEqual(['Name']);
  });

  it('creates, updates and retrieves pages', async () => {
    const ds = sim.workspace!.peopleDataSourceId;
    const created = await client.pages.create({
      parent: { data_source_id: ds },
      properties: {
        Name: { title: [{ text: { content: 'Ada Lovelace' } }] },
        Email: { email: 'ada@example.com' },
        Score: { number: 91 },
        Tags: { multi_select: [{ name: 'VIP' }] },
        Website: { url: 'https://ada.example' },
        Notes: {
          rich_text: [
            { text: { content: 'first ' } },
            { text: { content: 'bold' }, annotations: { bold: true } },
          ],
        },
      },
    });
    const page = expectPage(created, ds);
    const props = page.properties;
    expect(props.Name?.type === 'title' && props.Name.title[0]?.plain_text).toBe('Ada Lovelace');
    expect(props.Email?.type === 'email' && props.Email.email).toBe('ada@example.com');
    expect(props.Score?.type === 'number' && props.Score.number).toBe(91);
    expect(props.Tags?.type === 'multi_select' && props.Tags.multi_select.map((t) => t.name)).toEqual([
      'VIP',
    ]);
    const notes = props.Notes?.type === 'rich_text' ? props.Notes.rich_text : [];
    expect(notes.map((t) => [t.plain_text, t.annotations.bold])).toEqual([
      ['first ', false],
      ['bold', true],
    ]);
    const temperature = props.Temperature;
    expect(temperature?.type === 'formula' && temperature.formula).toEqual({ type: 'string', string: 'Hot' });

    const updated = await client.pages.update({
      page_id: page.id,
      properties: { Score: { number: 12 }, Status: { status: { name: 'Customer' } } },
    });
    const up = expectPage(updated, ds).properties;
    expect(up.Score?.type === 'number' && up.Score.number).toBe(12);
    expect(up.Status?.type === 'status' && up.Status.status?.name).toBe('Customer');

    const fetched = expectPage(await client.pages.retrieve({ page_id: page.id }), ds);
    expect(fetched.id).toBe(page.id);
    const only = await client.pages.retrieve({ page_id: page.id, filter_properties: ['title'] });
    expect(Object.keys((only as PageObjectResponse).properties)).toEqual(['Name']);

    const trashed = await client.pages.update({ page_id: page.id, in_trash: true });
    expect((trashed as PageObjectResponse).in_trash).toBe(true);
  });

  it('lists users and reads paginated property items', async () => {
    const users = await collectPaginatedAPI(client.users.list, { page_size: 1 });
    expect(users.length).toBeGreaterThanOrEqual(2);
    for (const u of users) {
      expect(isFullUser(u)).toBe(true);
      expect(u.id).toMatch(UUID);
    }
    expect(users.map((u) => (isFullUser(u) ? u.type : undefined)).sort()).toEqual(['bot', 'person']);

    const person = sim.workspace!.personIds[0] as string;
    const title = await client.pages.properties.retrieve({ page_id: person, property_id: 'title' });
    expect(title.object).toBe('list');
    if (title.object === 'list') {
      expect(title.results[0]).toMatchObject({ object: 'property_item', type: 'title' });
      expect(title.property_item).toMatchObject({ type: 'title' });
    }
    const ds = await client.dataSources.retrieve({ data_source_id: sim.workspace!.peopleDataSourceId });
    const scoreId = isFullDataSource(ds) ? (ds.properties.Score?.id as string) : '';
    const score = await client.pages.properties.retrieve({ page_id: person, property_id: scoreId });
    expect(score).toMatchObject({ object: 'property_item', type: 'number' });
    expect(score.object === 'property_item' && score.type === 'number' && typeof score.number).toBe('number');
  });

  it('searches titles for pages and data sources', async () => {
    const res = await client.search({
      query: 'People',
      filter: { property: 'object', value: 'data_source' },
    });
    expect(res.object).toBe('list');
    expect(res.results.map((r) => r.object)).toEqual(['data_source']);
    expect(isFullDataSource(res.results[0] as never)).toBe(true);
    const pages = await client.search({
      query: 'Ada',
      filter: { property: 'object', value: 'page' },
      sort: { timestamp: 'last_edited_time', direction: 'descending' },
      page_size: 2,
    });
    expect(pages.results.length).toBeGreaterThan(0);
    for (const r of pages.results) expect(r.object).toBe('page');
    expect(pages.has_more ? typeof pages.next_cursor : pages.next_cursor).toBe(
      pages.has_more ? 'string' : null,
    );
  });

  it('raises APIResponseError with Notion codes and statuses', async () => {
    const missing = await failure(client.pages.retrieve({ page_id: '00000000-0000-4000-8000-000000000000' }));
    expect(missing).toMatchObject({ code: APIErrorCode.ObjectNotFound, status: 404 });
    expect(missing.message).toContain('Could not find page');
    const invalid = await failure(
      client.dataSources.query({ data_source_id: sim.workspace!.peopleDataSourceId, page_size: 101 }),
    );
    expect(invalid).toMatchObject({ code: APIErrorCode.ValidationError, status: 400 });
    expect(invalid.message).toBe(
      'body failed validation: body.page_size should be ≤ `100`, instead was `101`.',
    );
    const badToken = await failure(notion(sim, { auth: 'ntn_wrong' }).users.me({}));
    expect(badToken).toMatchObject({ code: APIErrorCode.Unauthorized, status: 401 });
    const badProperty = await failure(
      client.pages.create({
        parent: { data_source_id: sim.workspace!.peopleDataSourceId },
        properties: { Nope: { number: 1 } },
      }),
    );
    expect(badProperty).toMatchObject({ code: APIErrorCode.ValidationError, status: 400 });
  });
});

describe('@notionhq/client past the 10,000-result query limit', () => {
  it('reads every row with collectAllDataSourceRows, which follows request_status into created_time windows', async () => {
    // The cap is lowered to 25 so 40 pages cross it; the SDK's helper must see request_status
    // "incomplete" on the capped query and re-query from the last created_time it got.
    const sim = await startNotionSimulator({ idSeed: 5, rateLimit: false, queryResultLimit: 25 });
    try {
      const client = notion(sim);
      const ds = sim.workspace!.peopleDataSourceId;
      const capped = await collectPaginatedAPI(client.dataSources.query, { data_source_id: ds });
      expect(capped).toHaveLength(25);
      const first = await client.dataSources.query({ data_source_id: ds });
      expect(first.request_status).toEqual({
        type: 'incomplete',
        incomplete_reason: 'query_result_limit_reached',
      });
      const rows = await collectAllDataSourceRows(client, { data_source_id: ds, page_size: 10 });
      expect(rows).toHaveLength(40);
      expect(new Set(rows.map((r) => r.id))).toEqual(new Set(sim.workspace!.personIds));
    } finally {
      await sim.close();
    }
  });
});

describe('@notionhq/client and rate limits', () => {
  it('retries 429 rate_limited after Retry-After itself; without retries it reports the reason', async () => {
    const clock = new ManualClock();
    const sim = await startNotionSimulator({ clock, seed: { people: 2 } });
    try {
      const ds = sim.workspace!.peopleDataSourceId;
      // The simulator's clock only moves when told: the client's own wait is shortened, and the
      // bucket refills when the test advances the clock after the first 429.
      const client = notion(sim, { retry: { maxRetries: 10, maxRetryDelayMs: 20 } });
      for (let i = 0; i < 10; i++) await client.dataSources.retrieve({ data_source_id: ds });
      const pending = client.dataSources.retrieve({ data_source_id: ds });
      await vi.waitFor(() => expect(sim.requestLog.count({ status: 429 })).toBeGreaterThanOrEqual(1));
      clock.advance(1_000);
      const ds1 = await pending;
      expect(isFullDataSource(ds1)).toBe(true);

      const noRetry = notion(sim, { retry: false });
      for (let i = 0; i < 3; i++)
        await noRetry.dataSources.retrieve({ data_source_id: ds }).catch(() => undefined);
      const limited = await failure(noRetry.dataSources.retrieve({ data_source_id: ds }));
      expect(limited).toMatchObject({
        code: APIErrorCode.RateLimited,
        status: 429,
        additional_data: { rate_limit_reason: 'public_api_request_rate_limit' },
      });
      expect((limited.headers as Headers).get('retry-after')).toBe('1');
      expect(typeof limited.request_id).toBe('string');
    } finally {
      await sim.close();
    }
  });

  it('retries 529 service_overload on any method, and reports it when retries are off', async () => {
    const sim = await startNotionSimulator({ seed: { people: 2 }, rateLimit: false });
    try {
      const ds = sim.workspace!.peopleDataSourceId;
      sim.overload(1, 1);
      const client = notion(sim, { retry: { maxRetries: 1, maxRetryDelayMs: 20 } });
      const created = await client.pages.create({
        parent: { data_source_id: ds },
        properties: { Name: { title: [{ text: { content: 'After an overload' } }] } },
      });
      expectPage(created, ds);
      expect(sim.requestLog.count({ status: 529 })).toBe(1);
      sim.overload(1, 1);
      const overloaded = await failure(
        notion(sim, { retry: false }).dataSources.retrieve({ data_source_id: ds }),
      );
      expect(overloaded).toMatchObject({ code: APIErrorCode.ServiceOverload, status: 529 });
    } finally {
      await sim.close();
    }
  });
});
