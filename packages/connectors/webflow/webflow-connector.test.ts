import type { CanonicalValue } from '@lockstep/engine';
import { ManualClock, startWebflowSimulator, type WebflowSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { createWebflowPort } from './port';
import { createWebflowConnector, type WebflowConnector } from './webflow-connector';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(
  sim: WebflowSimulator,
  extra: Partial<Parameters<typeof createWebflowConnector>[0]> = {},
): WebflowConnector {
  return createWebflowConnector({
    token: sim.token,
    baseUrl: sim.url,
    // The simulator's limit is not what these tests are about: the client does not pace itself.
    perMinute: 0,
    sleep: fastSleep,
    ...extra,
  });
}

let counter = 0;
const key = () => `wf-test-${++counter}`;

/** What the connector sent: methods, URLs and JSON bodies, recorded around global fetch. */
function recordFetch() {
  const sent: { method: string; url: URL; body: unknown }[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    sent.push({
      method: init?.method ?? 'GET',
      url,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    return original(input, init);
  }) as typeof fetch;
  return { sent, restore: () => (globalThis.fetch = original) };
}

const itemsOf = (sim: WebflowSimulator, collectionId: string) => [
  ...(sim.state.items.get(collectionId)?.values() ?? []),
];

runConformanceSuite('Webflow (simulator)', async () => {
  const clock = new ManualClock();
  const sim = await startWebflowSimulator({
    clock,
    idSeed: 1,
    seed: { companies: 3, contacts: 0, deals: 0 },
    rateLimit: false,
  });
  const companies = sim.crm?.collections.companies as string;
  const make = (token: string) => connectorFor(sim, { token });
  return {
    connector: make(sim.token),
    tableId: companies,
    sampleFields: (): Fields => {
      counter += 1;
      return {
        name: `Conformance ${counter}`,
        website: `https://c${counter}.example/`,
        industry: 'Software',
        employees: String(counter),
        customer: true,
      };
    },
    async seed(count) {
      return Array.from({ length: count }, () => {
        counter += 1;
        clock.advance(1_000);
        return sim.create(companies, { name: `Seeded ${counter}`, slug: `seeded-${counter}` }).id;
      });
    },
    async mutate(remoteId) {
      clock.advance(1_000);
      sim.update(companies, remoteId, { name: 'Changed in Webflow', employees: 77 });
      return { name: 'Changed in Webflow', employees: '77' };
    },
    async remove(remoteId) {
      clock.advance(1_000);
      sim.remove(companies, remoteId);
    },
    // A slug Webflow refuses (upper case, spaces): the batch is refused whole, then sent item by item.
    invalidFields: () => ({ name: `Bad ${++counter}`, slug: 'Not A Slug!' }),
    async discover() {
      const port = createWebflowPort({ apiUrl: sim.url, client: { perMinute: 0 } });
      return port.discoverSchema({ apiToken: sim.token }, sim.siteId);
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      sim.state.tokens.add({ token: 'revoked-site-token', scopes: [], kind: 'pat', userId: 'site' });
      sim.revokeToken('revoked-site-token');
      return make('revoked-site-token');
    },
    close: () => sim.close(),
  };
});

describe('Webflow connector against the simulator', () => {
  let sim: WebflowSimulator;
  let clock: ManualClock;
  let connector: WebflowConnector;
  let companies: string;
  let contacts: string;
  let deals: string;
  beforeAll(async () => {
    clock = new ManualClock();
    sim = await startWebflowSimulator({
      clock,
      idSeed: 7,
      seed: { companies: 3, contacts: 3, deals: 1 },
      rateLimit: false,
      publishLimit: false,
    });
    connector = connectorFor(sim);
    companies = sim.crm?.collections.companies as string;
    contacts = sim.crm?.collections.contacts as string;
    deals = sim.crm?.collections.deals as string;
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('discovers the site as a base and its collections with typed fields', async () => {
    const port = createWebflowPort({ apiUrl: sim.url, client: { perMinute: 0 } });
    expect(await port.listBases({ apiToken: sim.token })).toEqual([
      { remoteId: sim.siteId, name: 'Lockstep CRM' },
    ]);
    const tables = await port.discoverSchema({ apiToken: sim.token }, sim.siteId);
    expect(tables.map((t) => t.name).sort()).toEqual(['Companies', 'Contacts', 'Deals']);
    const d = tables.find((t) => t.remoteId === deals);
    const f = (slug: string) => d?.fields.find((x) => x.remoteId === slug);
    expect(f('amount')).toMatchObject({ fieldType: 'number', options: { required: true } });
    expect(f('stage')?.fieldType).toBe('single_select');
    expect(f('contacts')).toMatchObject({ fieldType: 'relations', options: { references: contacts } });
    expect(f('company')).toMatchObject({
      fieldType: 'relations',
      options: { references: companies, single: true },
    });
    expect(f('contract')?.fieldType).toBe('attachments');
    expect(f('gallery')?.fieldType).toBe('attachments');
    expect(f('pitch-video')?.fieldType).toBe('url');
    expect(f('lastUpdated')).toMatchObject({ fieldType: 'datetime', readOnly: true });
    await expect(port.check({ apiToken: 'nope' })).rejects.toMatchObject({ code: 'auth_invalid' });
  });

  it('converts every field type both ways (option names, references, rich text, images)', async () => {
    const [company] = sim.crm?.companies ?? [];
    const [c1, c2] = sim.crm?.contacts ?? [];
    const fields: Fields = {
      name: 'Big Deal',
      amount: '1250.5',
      stage: 'Qualified',
      'close-date': '2026-03-01T12:00:00.000Z',
      company: [company as string],
      contacts: [c2 as string, c1 as string],
      gallery: [
        { url: 'https://img.example/a.png', filename: 'First picture', size: null, type: null },
        { url: 'https://img.example/b.png', filename: 'b.png', size: null, type: null },
      ],
      'pitch-video': 'https://video.example/pitch',
    };
    const [res] = await connector.write(deals, [{ kind: 'create', fields, idempotencyKey: key() }]);
    if (!res?.ok) throw new Error(JSON.stringify(res));
    const stored = sim.state.items.get(deals)?.get(res.remoteId);
    // On the wire: option id, reference ids, numbers as numbers, images as {url, alt}, a made slug.
    expect(stored?.fieldData).toMatchObject({
      name: 'Big Deal',
      slug: 'big-deal',
      amount: 1250.5,
      stage: sim.state.optionId(deals, 'stage', fields.stage as string),
      company,
      contacts: expect.arrayContaining([c1, c2]),
    });
    expect((stored?.fieldData.gallery as { alt?: string }[] | undefined)?.[0]?.alt).toBe('First picture');
    expect(res.postImage?.fields).toMatchObject({
      name: 'Big Deal',
      slug: 'big-deal',
      amount: '1250.5',
      stage: fields.stage,
      'close-date': '2026-03-01T12:00:00.000Z',
      company: [company],
      contacts: [c1, c2].sort(),
      'pitch-video': 'https://video.example/pitch',
    });
    const gallery = res.postImage?.fields.gallery as { url: string; filename: string }[];
    expect(gallery.map((g) => g.filename)).toEqual(['First picture', expect.any(String)]);
    // Rich text: Markdown in, HTML in Webflow, the same Markdown back.
    const [rt] = await connector.write(companies, [
      {
        kind: 'create',
        fields: { name: 'Rich Co', description: 'Hello **bold** _world_' },
        idempotencyKey: key(),
      },
    ]);
    if (!rt?.ok) throw new Error(JSON.stringify(rt));
    expect(sim.state.items.get(companies)?.get(rt.remoteId)?.fieldData.description).toBe(
      '<p>Hello <strong>bold</strong> <em>world</em></p>',
    );
    const [back] = await connector.readRecords(companies, [rt.remoteId]);
    expect(back?.fields.description).toBe('Hello **bold** _world_');
    expect(back?.fields.customer).toBe(false);
  });

  it('makes slugs from names, unique in the collection (-2, -3)', async () => {
    sim.create(companies, { name: 'Same Name', slug: 'same-name' });
    const results = await connector.write(
      companies,
      [1, 2].map(() => ({ kind: 'create' as const, fields: { name: 'Same Name' }, idempotencyKey: key() })),
    );
    expect(results.map((r) => (r.ok ? r.postImage?.fields.slug : r.error.message))).toEqual([
      'same-name-2',
      'same-name-3',
    ]);
  });

  it('pages to the end with offset pages of at most 100, every item once', async () => {
    const s = await startWebflowSimulator({
      idSeed: 3,
      seed: { companies: 250, contacts: 0, deals: 0 },
      rateLimit: false,
    });
    try {
      const c = connectorFor(s);
      const rec = recordFetch();
      const { records, pages } = await readAll(c, s.crm?.collections.companies as string, null, 120).finally(
        rec.restore,
      );
      expect(records).toHaveLength(250);
      expect(new Set(records.map((r) => r.id)).size).toBe(250);
      expect(pages.length).toBe(3);
      const lists = rec.sent.filter((e) => e.method === 'GET' && e.url.pathname.endsWith('/items'));
      for (const e of lists) expect(Number(e.url.searchParams.get('limit'))).toBeLessThanOrEqual(100);
      expect(lists.map((e) => Number(e.url.searchParams.get('offset')))).toEqual([0, 100, 120, 220, 240]);
    } finally {
      await s.close();
    }
  });

  it('reads an in-app edit and a delete incrementally, even when the delete shifts the offset pages', async () => {
    const s = await startWebflowSimulator({
      idSeed: 4,
      seed: { companies: 30, contacts: 0, deals: 0 },
      rateLimit: false,
    });
    try {
      const c = connectorFor(s);
      const table = s.crm?.collections.companies as string;
      const ids = s.crm?.companies as string[];
      const first = await readAll(c, table, null, 10);
      expect(first.records).toHaveLength(30);
      // Nothing changed: a pass returns nothing.
      const quiet = await readAll(c, table, first.cursor, 10);
      expect(quiet.records).toEqual([]);
      expect(quiet.deletedIds).toEqual([]);
      // The next pass reads its first page, then an item on that page is deleted in Webflow (the rest
      // move up by one) and one on a later page is edited.
      const page1 = await c.read(table, quiet.cursor, { pageSize: 10 });
      s.remove(table, ids[2] as string);
      s.update(table, ids[25] as string, { name: 'Edited in Webflow' });
      // ids[10] moves into the first page (already read): without the end-of-pass check by id it
      // would be skipped; unchanged, it is not returned, but not taken for deleted either.
      const rest = await readAll(c, table, page1.nextCursor, 10);
      const changed = [...page1.records, ...rest.records];
      expect(changed.map((r) => r.id)).toEqual([ids[25]]);
      expect(changed[0]?.fields.name).toBe('Edited in Webflow');
      expect(rest.deletedIds).toEqual([ids[2]]);
      // And the pass after that is quiet again (the delete is not reported twice).
      const after = await readAll(c, table, rest.cursor, 10);
      expect(after.records).toEqual([]);
      expect(after.deletedIds).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('fails one bad record alone in a batch (a value Webflow refuses, an unknown option), the rest land', async () => {
    const before = itemsOf(sim, companies).length;
    const results = await connector.write(companies, [
      { kind: 'create', fields: { name: 'Good One' }, idempotencyKey: key() },
      { kind: 'create', fields: { name: 'Bad Website', website: 'not a url at all' }, idempotencyKey: key() },
      { kind: 'create', fields: { name: 'Bad Option', industry: 'Astrology' }, idempotencyKey: key() },
      { kind: 'create', fields: { name: 'Good Two', employees: '12' }, idempotencyKey: key() },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, true]);
    const [, web, option] = results;
    if (web?.ok || option?.ok) throw new Error('expected failures');
    expect(web?.error.code).toBe('validation');
    expect(web?.error.userFacingMessage).toMatch(/Website|not a url/i);
    expect(option?.error.userFacingMessage).toMatch(/"Astrology" is not an option of Industry/);
    expect(itemsOf(sim, companies).length).toBe(before + 2);
  });

  it('answers version_conflict with the current values for an item edited in Webflow since it was read', async () => {
    const id = sim.crm?.companies[1] as string;
    const [read] = await connector.readRecords(companies, [id]);
    clock.advance(1_000);
    sim.update(companies, id, { employees: 999 });
    const [res] = await connector.write(companies, [
      {
        kind: 'update',
        remoteId: id,
        fields: { employees: '5' },
        expected: { employees: read?.fields.employees ?? null },
        idempotencyKey: key(),
      },
    ]);
    expect(res).toMatchObject({ ok: false, error: { code: 'version_conflict' } });
    if (res && !res.ok) expect(res.current?.fields.employees).toBe('999');
    expect(sim.state.items.get(companies)?.get(id)?.fieldData.employees).toBe(999);
    // Unchanged since read: the update lands.
    const [ok] = await connector.write(companies, [
      {
        kind: 'update',
        remoteId: id,
        fields: { employees: '5' },
        expected: { employees: '999' },
        idempotencyKey: key(),
      },
    ]);
    expect(ok?.ok).toBe(true);
    // A delete spares an item edited since it was read.
    clock.advance(1_000);
    sim.update(companies, id, { name: 'Edited again' });
    const [del] = await connector.write(companies, [
      { kind: 'delete', remoteId: id, expected: { name: read?.fields.name ?? null }, idempotencyKey: key() },
    ]);
    expect(del).toMatchObject({ ok: false, error: { code: 'version_conflict' } });
    expect(sim.state.items.get(companies)?.has(id)).toBe(true);
  });

  it('reports an image Webflow skipped (over 4 MB) as that record failing, never silently', async () => {
    sim.setRemoteFile('https://img.example/huge.png', 6 * 1024 * 1024);
    const before = itemsOf(sim, companies).length;
    const results = await connector.write(companies, [
      {
        kind: 'create',
        fields: {
          name: 'Huge Logo',
          logo: [{ url: 'https://img.example/huge.png', filename: 'huge.png', size: null, type: null }],
        },
        idempotencyKey: key(),
      },
      {
        kind: 'create',
        fields: {
          name: 'Small Logo',
          logo: [{ url: 'https://img.example/small.png', filename: 'small.png', size: null, type: null }],
        },
        idempotencyKey: key(),
      },
    ]);
    expect(results.map((r) => r.ok)).toEqual([false, true]);
    const [huge] = results;
    if (huge?.ok) throw new Error('expected a failure');
    expect(huge?.error.code).toBe('validation');
    expect(huge?.error.userFacingMessage).toMatch(/huge\.png/);
    expect(huge?.error.userFacingMessage).toMatch(/4 MB/);
    // The half-made item (without its logo) is not left behind.
    expect(itemsOf(sim, companies).filter((i) => i.fieldData.name === 'Huge Logo')).toEqual([]);
    expect(itemsOf(sim, companies).length).toBe(before + 1);
    // An update whose new image is skipped (Webflow keeps the old one) fails too.
    const small = results[1];
    if (!small?.ok) throw new Error('expected the small logo');
    const [upd] = await connector.write(companies, [
      {
        kind: 'update',
        remoteId: small.remoteId,
        fields: {
          logo: [{ url: 'https://img.example/huge.png', filename: 'huge.png', size: null, type: null }],
        },
        idempotencyKey: key(),
      },
    ]);
    expect(upd).toMatchObject({ ok: false, error: { code: 'validation' } });
    if (upd && !upd.ok) expect(upd.error.userFacingMessage).toMatch(/huge\.png.*4 MB/);
    // Writing the image it holds again keeps it (by fileId): no upload, no failure.
    const [same] = await connector.readRecords(companies, [small.remoteId]);
    const held = sim.state.items.get(companies)?.get(small.remoteId)?.fieldData.logo as { fileId: string };
    const [again] = await connector.write(companies, [
      {
        kind: 'update',
        remoteId: small.remoteId,
        fields: { logo: same?.fields.logo ?? null },
        idempotencyKey: key(),
      },
    ]);
    expect(again?.ok).toBe(true);
    expect(
      (sim.state.items.get(companies)?.get(small.remoteId)?.fieldData.logo as { fileId: string } | undefined)
        ?.fileId,
    ).toBe(held.fileId);
  });

  it('rides out a 429 storm with nothing lost or doubled', async () => {
    const before = itemsOf(sim, contacts).length;
    // Webflow answers 429 (Retry-After 60) to the next writes; the client waits each out and resends.
    sim.faults.next({ kind: 'rate_limit', count: 3, method: 'POST' });
    sim.faults.next({ kind: 'rate_limit', count: 2, method: 'PATCH' });
    const created = await connector.write(
      contacts,
      Array.from({ length: 20 }, (_, n) => ({
        kind: 'create' as const,
        fields: { name: `Storm ${n}`, email: `storm${n}@example.com` },
        idempotencyKey: `storm-${n}`,
      })),
    );
    expect(created.every((r) => r.ok)).toBe(true);
    const ids = created.map((r) => (r.ok ? r.remoteId : ''));
    const updated = await connector.write(
      contacts,
      ids.slice(0, 5).map((id) => ({
        kind: 'update' as const,
        remoteId: id,
        fields: { 'job-title': 'CTO' },
        idempotencyKey: key(),
      })),
    );
    expect(updated.every((r) => r.ok)).toBe(true);
    expect(sim.requestLog.count({ status: 429 })).toBeGreaterThanOrEqual(5);
    const storm = itemsOf(sim, contacts).filter((i) => String(i.fieldData.name).startsWith('Storm'));
    expect(storm).toHaveLength(20);
    expect(new Set(storm.map((i) => i.fieldData.email)).size).toBe(20);
    expect(storm.filter((i) => i.fieldData['job-title'] === 'CTO')).toHaveLength(5);
    expect(itemsOf(sim, contacts).length).toBe(before + 20);
    // The same chunk retried by the runtime (same idempotency keys) makes nothing new.
    const again = await connector.write(
      contacts,
      Array.from({ length: 20 }, (_, n) => ({
        kind: 'create' as const,
        fields: { name: `Storm ${n}`, email: `storm${n}@example.com` },
        idempotencyKey: `storm-${n}`,
      })),
    );
    expect(again.map((r) => (r.ok ? r.remoteId : ''))).toEqual(ids);
    expect(itemsOf(sim, contacts).length).toBe(before + 20);
  });

  it("publishes written items at once with publish 'live', and leaves them staged by default", async () => {
    const staged = await connector.write(companies, [
      { kind: 'create', fields: { name: 'Staged Co' }, idempotencyKey: key() },
    ]);
    const live = connectorFor(sim, { publish: 'live' });
    const published = await live.write(companies, [
      { kind: 'create', fields: { name: 'Live Co' }, idempotencyKey: key() },
    ]);
    const item = (r: (typeof staged)[number] | undefined) =>
      sim.state.items.get(companies)?.get(r?.ok ? r.remoteId : '');
    expect(item(staged[0])?.lastPublished).toBeNull();
    expect(item(staged[0])?.isDraft).toBe(false);
    expect(item(published[0])?.lastPublished).not.toBeNull();
    expect(item(published[0])?.live?.fieldData?.name).toBe('Live Co');
    // An update in live mode is published too.
    await live.write(companies, [
      {
        kind: 'update',
        remoteId: published[0]?.ok ? published[0].remoteId : '',
        fields: { name: 'Live Co 2' },
        idempotencyKey: key(),
      },
    ]);
    expect(item(published[0])?.live?.fieldData?.name).toBe('Live Co 2');
  });

  it('publishes the site through the port, and says how long to wait after the one a minute', async () => {
    const s = await startWebflowSimulator({
      clock: new ManualClock(),
      idSeed: 5,
      seed: { companies: 1, contacts: 0, deals: 0 },
    });
    try {
      const port = createWebflowPort({ apiUrl: s.url, client: { perMinute: 0 } });
      const done = await port.publishSite({ apiToken: s.token }, s.siteId);
      expect(done.publishedTo[0]).toBe('webflow.io');
      expect(done.publishedTo).toHaveLength(3);
      await expect(port.publishSite({ apiToken: s.token }, s.siteId)).rejects.toMatchObject({
        code: 'rate_limited',
        userFacingMessage: expect.stringMatching(/once a minute\. Try again in \d+ seconds/),
      });
    } finally {
      await s.close();
    }
  });
});
