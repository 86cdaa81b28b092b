import type { CanonicalValue } from '@lockstep/engine';
import { type HubSpotSimulator, ManualClock, startHubSpotSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { mapHubSpotError } from './hubspot-api';
import {
  canonicalType,
  createHubSpotConnector,
  fromCanonical,
  type HubSpotConnector,
  type HubSpotProperty,
  toCanonical,
} from './hubspot-connector';
import { createHubSpotPort } from './port';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(
  sim: HubSpotSimulator,
  extra: Partial<Parameters<typeof createHubSpotConnector>[0]> = {},
) {
  return createHubSpotConnector({
    token: sim.token,
    baseUrl: sim.url,
    // The simulator's limits are tested below; here the client does not pace itself.
    perTenSeconds: 0,
    rateLimitWaitMs: 5,
    sleep: fastSleep,
    ...extra,
  });
}

let counter = 0;

/** What the connector sent: URLs and JSON bodies, recorded around global fetch. */
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
  const restore = () => {
    globalThis.fetch = original;
  };
  return { sent, restore };
}

runConformanceSuite('HubSpot (simulator)', async () => {
  const clock = new ManualClock();
  const sim = await startHubSpotSimulator({ clock, idSeed: 1, seed: { contacts: 5 }, rateLimit: false });
  const make = (token: string) => connectorFor(sim, { token });
  const connector = make(sim.token);
  // The simulator's clock stands still: each out-of-band edit moves it past the search index's lag.
  const later = () => clock.advance(3_000);
  return {
    connector,
    tableId: 'contacts',
    sampleFields: (): Fields => {
      counter += 1;
      return {
        email: `c${counter}@example.com`,
        firstname: `Conformance ${counter}`,
        lifecyclestage: 'lead',
      };
    },
    async seed(count) {
      const ids = Array.from({ length: count }, () => {
        counter += 1;
        return sim.create('contacts', {
          email: `seeded${counter}@example.com`,
          firstname: `Seeded ${counter}`,
        }).id;
      });
      later();
      return ids;
    },
    async mutate(remoteId) {
      later();
      sim.mutate('contacts', remoteId, { firstname: 'Changed in HubSpot', lifecyclestage: 'customer' });
      later();
      return { firstname: 'Changed in HubSpot', lifecyclestage: 'customer' };
    },
    async remove(remoteId) {
      sim.archive('contacts', remoteId);
      later();
    },
    invalidFields: () => ({ email: `bad${++counter}@example.com`, lifecyclestage: 'not_a_stage' }),
    async discover() {
      const port = createHubSpotPort({ apiUrl: sim.url, client: { perTenSeconds: 0 } });
      return port.discoverSchema({ accessToken: sim.token }, String(sim.state.portalId));
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      sim.state.tokens.add({ token: 'pat-na1-revoked', scopes: [], kind: 'pat', userId: '1' });
      sim.revokeToken('pat-na1-revoked');
      return make('pat-na1-revoked');
    },
    close: () => sim.close(),
  };
});

describe('HubSpot connector against the simulator', () => {
  let sim: HubSpotSimulator;
  let clock: ManualClock;
  let connector: HubSpotConnector;
  beforeAll(async () => {
    clock = new ManualClock();
    sim = await startHubSpotSimulator({ clock, idSeed: 7, rateLimit: false });
    connector = connectorFor(sim);
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('scans every contact across pages of at most 100 (limit, after, properties asked for)', async () => {
    for (let i = 0; i < 200; i++)
      sim.create('contacts', { email: `page${i}@example.com`, firstname: `P${i}` });
    const rec = recordFetch();
    const { records, pages } = await readAll(connector, 'contacts', null, 120).finally(rec.restore);
    expect(records).toHaveLength(250);
    expect(new Set(records.map((r) => r.id)).size).toBe(250);
    expect(pages.length).toBe(3);
    const gets = rec.sent.filter((e) => e.method === 'GET' && e.url.pathname === '/crm/v3/objects/contacts');
    expect(gets.length).toBeGreaterThanOrEqual(3);
    for (const e of gets) {
      expect(Number(e.url.searchParams.get('limit'))).toBeLessThanOrEqual(100);
      expect(e.url.searchParams.get('properties')).toContain('email');
      expect(e.url.searchParams.get('properties')).toContain('lifecyclestage');
    }
    const first = records.find((r) => r.id === sim.crm!.contacts[0])!;
    expect(Object.keys(first.fields)).toEqual(
      expect.arrayContaining(['email', 'firstname', 'hs_email_optout']),
    );
  });

  it('reads edits incrementally through search, after the index lag, and reports archives and merges as deletes', async () => {
    const scan = await readAll(connector, 'contacts', null, 500);
    clock.advance(60_000);
    const [a, b, c, d] = sim.crm!.contacts as [string, string, string, string];
    sim.mutate('contacts', a, { firstname: 'Edited once' });
    sim.archive('contacts', b);
    const merged = sim.merge('contacts', c, d);
    // Within the lag the index still has the old values: whatever it finds is read live, and what
    // it does not find yet comes with the next read (the overlap).
    const early = await readAll(connector, 'contacts', scan.cursor, 500);
    for (const r of early.records)
      expect(r.fields.firstname).toBe(sim.state.get('contacts', r.id)?.properties.get('firstname') ?? null);
    clock.advance(5_000);
    const next = await readAll(connector, 'contacts', early.cursor, 500);
    expect(next.records.find((r) => r.id === a)?.fields.firstname).toBe('Edited once');
    expect(next.records.find((r) => r.id === merged.id)).toBeDefined();
    expect(next.deletedIds).toEqual(expect.arrayContaining([b, c, d]));
    expect(next.deletedIds).not.toContain(a);
    // The next read reaches 30 s back before the previous one began: the edits come again (echoes the
    // engine drops); one more read later finds nothing.
    clock.advance(120_000);
    const overlap = await readAll(connector, 'contacts', next.cursor, 500);
    expect(overlap.records.map((r) => r.id).sort()).toEqual([a, merged.id].sort());
    clock.advance(120_000);
    const quiet = await readAll(connector, 'contacts', overlap.cursor, 500);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  it("never reads a record older than it is: search's lagging index does not undo a write just made", async () => {
    const id = sim.crm!.contacts[40] as string;
    clock.advance(60_000);
    const scan = await readAll(connector, 'contacts', null, 1000);
    clock.advance(1_000);
    sim.mutate('contacts', id, { firstname: 'Edited in HubSpot' });
    clock.advance(5_000); // indexed
    const [written] = await connector.write('contacts', [
      { kind: 'update', remoteId: id, fields: { firstname: 'Written by Lockstep' }, idempotencyKey: 'lag-1' },
    ]);
    expect(written?.ok).toBe(true);
    // Right away: the index still holds 'Edited in HubSpot'; the read must not report it.
    const next = await readAll(connector, 'contacts', scan.cursor, 1000);
    const r = next.records.find((x) => x.id === id);
    expect(r?.fields.firstname).toBe('Written by Lockstep');
  });

  it('answers a 207 with per-item results: a missing id fails alone', async () => {
    const [x, y] = sim.crm!.contacts.slice(10, 12) as [string, string];
    const results = await connector.write('contacts', [
      { kind: 'update', remoteId: x, fields: { firstname: 'Batch one' }, idempotencyKey: 'u1' },
      { kind: 'update', remoteId: '999999999', fields: { firstname: 'Nobody' }, idempotencyKey: 'u2' },
      { kind: 'update', remoteId: y, fields: { firstname: 'Batch two' }, idempotencyKey: 'u3' },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    const failed = results[1]!;
    if (!failed.ok) expect(failed.error.code).toBe('not_found');
    expect(results[0]!.ok && results[0]!.postImage?.fields.firstname).toBe('Batch one');
    expect(
      sim.requestLog.count({ method: 'POST', path: '/crm/v3/objects/contacts/batch/update', status: 207 }),
    ).toBe(1);
  });

  it('answers a duplicate email on create with existingId (the runtime links instead of duplicating)', async () => {
    const existing = sim.crm!.contacts[12] as string;
    const email = sim.state.get('contacts', existing)!.properties.get('email') as string;
    const results = await connector.write('contacts', [
      {
        kind: 'create',
        fields: { email: 'fresh.one@example.com', firstname: 'Fresh' },
        idempotencyKey: 'd1',
      },
      { kind: 'create', fields: { email: email.toUpperCase(), firstname: 'Dup' }, idempotencyKey: 'd2' },
    ]);
    expect(results[0]!.ok).toBe(true);
    const dup = results[1]!;
    expect(dup.ok).toBe(false);
    if (!dup.ok) {
      expect(dup.existingId).toBe(existing);
      expect(dup.error.userFacingMessage).toMatch(/already has a contact/);
    }
  });

  it('refuses an update or delete of a record edited since it was read (version_conflict with its current values)', async () => {
    const [x, y] = sim.crm!.contacts.slice(20, 22) as [string, string];
    const before = (await connector.readRecords('contacts', [x, y])).map((r) => r.fields.firstname);
    sim.mutate('contacts', x, { firstname: 'Edited in HubSpot meanwhile' });
    sim.mutate('contacts', y, { firstname: 'Also edited meanwhile' });
    const results = await connector.write('contacts', [
      {
        kind: 'update',
        remoteId: x,
        fields: { firstname: 'From the other side' },
        expected: { firstname: before[0] ?? null },
        idempotencyKey: 'stale-1',
      },
    ]);
    const r = results[0]!;
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('version_conflict');
      expect(r.current?.fields.firstname).toBe('Edited in HubSpot meanwhile');
    }
    expect(sim.state.get('contacts', x)!.properties.get('firstname')).toBe('Edited in HubSpot meanwhile');
    // As expected: written.
    const [ok] = await connector.write('contacts', [
      {
        kind: 'update',
        remoteId: x,
        fields: { firstname: 'Now it lands' },
        expected: { firstname: 'Edited in HubSpot meanwhile' },
        idempotencyKey: 'stale-2',
      },
    ]);
    expect(ok?.ok).toBe(true);
    const [spared] = await connector.write('contacts', [
      { kind: 'delete', remoteId: y, expected: { firstname: before[1] ?? null }, idempotencyKey: 'stale-3' },
    ]);
    expect(spared?.ok).toBe(false);
    expect(sim.state.get('contacts', y)).toBeDefined();
  });

  it('offers contacts a Full name made of first and last name: read joined, written split at the last space, checked before write', async () => {
    const fields = await connector.fieldsOf('contacts');
    expect(fields.find((f) => f.remoteId === 'firstname+lastname')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
    });
    expect((await connector.fieldsOf('companies')).some((f) => f.remoteId === 'firstname+lastname')).toBe(
      false,
    );

    const [made] = await connector.write('contacts', [
      {
        kind: 'create',
        fields: { email: 'mary.ann@example.com', 'firstname+lastname': 'Mary Ann  Smith' },
        idempotencyKey: 'full-name-1',
      },
    ]);
    expect(made?.ok).toBe(true);
    const id = made?.ok ? made.remoteId : '';
    const held = () => sim.state.get('contacts', id)!.properties;
    expect([held().get('firstname'), held().get('lastname')]).toEqual(['Mary Ann', 'Smith']);
    const [read] = await connector.readRecords('contacts', [id]);
    expect(read?.fields['firstname+lastname']).toBe('Mary Ann Smith');

    // One word: the first name alone, the last name cleared.
    const [renamed] = await connector.write('contacts', [
      {
        kind: 'update',
        remoteId: id,
        fields: { 'firstname+lastname': 'Cher' },
        idempotencyKey: 'full-name-2',
      },
    ]);
    expect(renamed?.ok && renamed.postImage?.fields['firstname+lastname']).toBe('Cher');
    expect([held().get('firstname'), held().get('lastname') ?? null]).toEqual(['Cher', null]);

    // A last name edited in HubSpot since it was read: the full name's write is a conflict.
    sim.mutate('contacts', id, { lastname: 'Bono' });
    const [stale] = await connector.write('contacts', [
      {
        kind: 'update',
        remoteId: id,
        fields: { 'firstname+lastname': 'Cher Sarkisian' },
        expected: { 'firstname+lastname': 'Cher' },
        idempotencyKey: 'full-name-3',
      },
    ]);
    expect(stale?.ok).toBe(false);
    if (stale && !stale.ok) {
      expect(stale.error.code).toBe('version_conflict');
      expect(stale.current?.fields['firstname+lastname']).toBe('Cher Bono');
    }
    expect(held().get('lastname')).toBe('Bono');
  });

  it('does not archive the merged record when asked to delete an id merged away', async () => {
    const [p, q] = sim.crm!.contacts.slice(30, 32) as [string, string];
    const merged = sim.merge('contacts', p, q);
    const [r] = await connector.write('contacts', [
      { kind: 'delete', remoteId: q, idempotencyKey: 'merged-del' },
    ]);
    expect(r?.ok).toBe(true);
    expect(sim.state.get('contacts', merged.id)).toBeDefined();
  });

  it('converts values both ways: numbers, booleans, dates, datetimes, selects and multi-selects', async () => {
    const client = connector.client;
    await client.request({
      method: 'POST',
      path: '/crm/v3/properties/contacts',
      body: {
        name: 'interests',
        label: 'Interests',
        type: 'enumeration',
        fieldType: 'checkbox',
        groupName: 'contactinformation',
        options: [
          { label: 'Red', value: 'red' },
          { label: 'Blue', value: 'blue' },
          { label: 'Green', value: 'green' },
        ],
      },
    });
    await client.request({
      method: 'POST',
      path: '/crm/v3/properties/contacts',
      body: {
        name: 'birthday',
        label: 'Birthday',
        type: 'date',
        fieldType: 'date',
        groupName: 'contactinformation',
      },
    });
    await client.request({
      method: 'POST',
      path: '/crm/v3/properties/contacts',
      body: {
        name: 'score',
        label: 'Score',
        type: 'number',
        fieldType: 'number',
        groupName: 'contactinformation',
      },
    });
    await connector.describe('contacts', true);
    const fields = await connector.fieldsOf('contacts');
    const typeOf = (n: string) => fields.find((f) => f.remoteId === n)?.fieldType;
    expect(typeOf('interests')).toBe('multi_select');
    expect(typeOf('birthday')).toBe('date');
    expect(typeOf('lifecyclestage')).toBe('single_select');
    expect(typeOf('hs_email_optout')).toBe('boolean');
    expect(typeOf('email')).toBe('email');
    expect(typeOf('phone')).toBe('phone');
    expect(fields.find((f) => f.remoteId === 'createdate')).toMatchObject({
      fieldType: 'datetime',
      readOnly: true,
    });
    expect(fields.find((f) => f.remoteId === 'hs_object_id')?.readOnly).toBe(true);
    expect(fields.find((f) => f.remoteId === 'lastmodifieddate')?.readOnly).toBe(true);
    expect(fields.find((f) => f.remoteId === 'email')?.readOnly).toBe(false);

    const [created] = await connector.write('contacts', [
      {
        kind: 'create',
        fields: {
          email: 'Values@Example.com',
          interests: ['red', 'green'],
          birthday: '1990-04-05',
          score: '42.5',
          hs_email_optout: true,
          lifecyclestage: 'customer',
        },
        idempotencyKey: 'values-1',
      },
    ]);
    if (!created?.ok) throw new Error(JSON.stringify(created));
    // On the wire: strings as HubSpot stores them.
    const stored = sim.state.get('contacts', created.remoteId)!.properties;
    expect(stored.get('interests')).toBe('red;green');
    expect(stored.get('birthday')).toBe('1990-04-05');
    expect(stored.get('score')).toBe('42.5');
    expect(stored.get('hs_email_optout')).toBe('true');
    expect(stored.get('email')).toBe('values@example.com');
    // Read back canonical.
    const [back] = await connector.readRecords('contacts', [created.remoteId]);
    expect(back?.fields).toMatchObject({
      email: 'values@example.com',
      interests: ['green', 'red'],
      birthday: '1990-04-05',
      score: '42.5',
      hs_email_optout: true,
      lifecyclestage: 'customer',
    });
    expect(back?.fields.createdate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Clearing writes '' (HubSpot's way of unsetting); an unset boolean reads false.
    await connector.write('contacts', [
      {
        kind: 'update',
        remoteId: created.remoteId,
        fields: { interests: null, hs_email_optout: false, score: null },
        idempotencyKey: 'values-2',
      },
    ]);
    const [cleared] = await connector.readRecords('contacts', [created.remoteId]);
    expect(cleared?.fields).toMatchObject({ interests: null, hs_email_optout: false, score: null });
  });

  it('rides out a 429 storm on writes and reads with nothing lost and nothing doubled', async () => {
    sim.requestLog.reset();
    sim.faults.next({ kind: 'rate_limit', count: 4 });
    const results = await connector.write(
      'contacts',
      Array.from({ length: 150 }, (_, i) => ({
        kind: 'create' as const,
        fields: { email: `storm${i}@example.com`, firstname: `Storm ${i}` },
        idempotencyKey: `storm-${i}`,
      })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(sim.requestLog.count({ status: 429 })).toBe(4);
    const storm = sim.state.list('contacts').filter((o) => o.properties.get('email')?.startsWith('storm'));
    expect(storm).toHaveLength(150);
    sim.faults.next({ kind: 'rate_limit', count: 3 });
    const { records } = await readAll(connector, 'contacts', null, 100);
    expect(records.filter((r) => String(r.fields.email).startsWith('storm'))).toHaveLength(150);
  });
});

describe('HubSpot scan of a portal with many properties', () => {
  it('lists the ids and reads the records by id when the property list would make the URL too long', async () => {
    const sim = await startHubSpotSimulator({ idSeed: 9, rateLimit: false, seed: { contacts: 7 } });
    try {
      const connector = connectorFor(sim, { maxUrlProperties: 10 });
      const rec = recordFetch();
      const { records } = await readAll(connector, 'contacts', null, 3).finally(rec.restore);
      expect(records).toHaveLength(7);
      const one = sim.state.get('contacts', records[0]!.id)!;
      expect(records[0]!.fields).toMatchObject({
        email: one.properties.get('email'),
        firstname: one.properties.get('firstname'),
      });
      for (const e of rec.sent.filter((x) => x.url.pathname === '/crm/v3/objects/contacts'))
        expect(e.url.searchParams.get('properties')).toBe('hs_object_id');
      expect(rec.sent.filter((x) => x.url.pathname.endsWith('/batch/read')).length).toBe(3);
    } finally {
      await sim.close();
    }
  });
});

describe('HubSpot incremental read over several pages', () => {
  it('loses nothing when a record read on an earlier page is edited before the next page', async () => {
    const clock = new ManualClock();
    const sim = await startHubSpotSimulator({
      clock,
      idSeed: 8,
      seed: false,
      rateLimit: false,
      searchLagMs: 0,
    });
    try {
      const connector = connectorFor(sim);
      const scan = await readAll(connector, 'contacts', null, 100);
      clock.advance(1_000);
      const ids = Array.from({ length: 10 }, (_, i) => {
        clock.advance(10);
        return sim.create('contacts', { email: `p${i}@pages.example` }).id;
      });
      clock.advance(60_000);
      const first = await connector.read('contacts', scan.cursor, { pageSize: 3 });
      expect(first.records.map((r) => r.id)).toEqual(ids.slice(0, 3));
      expect(first.hasMore).toBe(true);
      // Edited between two pages of one read: it moves to the end of the ordering.
      sim.mutate('contacts', ids[1] as string, { firstname: 'Moved' });
      const rest = await readAll(connector, 'contacts', first.nextCursor, 3);
      const all = new Set([...first.records, ...rest.records].map((r) => r.id));
      for (const id of ids) expect(all.has(id), id).toBe(true);
    } finally {
      await sim.close();
    }
  });
});

describe('HubSpot search past 10,000 results', () => {
  it('continues with a new search from the last modification time seen, reading every change once', async () => {
    const clock = new ManualClock();
    const sim = await startHubSpotSimulator({
      clock,
      idSeed: 3,
      seed: false,
      rateLimit: false,
      searchLagMs: 0,
    });
    try {
      const connector = connectorFor(sim);
      const scan = await readAll(connector, 'contacts', null, 100);
      expect(scan.records).toEqual([]);
      clock.advance(60_000);
      // 10,250 changes after the scan, a few per millisecond.
      for (let i = 0; i < 10_250; i++) {
        if (i % 4 === 0) clock.advance(1);
        sim.state.create('contacts', { email: `many${i}@example.com` }, 'CRM_UI');
      }
      const rec = recordFetch();
      const next = await readAll(connector, 'contacts', scan.cursor, 2_000).finally(rec.restore);
      const ids = new Set(next.records.map((r) => r.id));
      expect(ids.size).toBe(10_250);
      const searches = rec.sent.filter((e) => e.url.pathname === '/crm/v3/objects/contacts/search');
      expect(sim.requestLog.count({ path: '/crm/v3/objects/contacts/search', status: 400 })).toBe(0);
      // A second query started from a later modification time.
      const froms = new Set(
        searches.map(
          (e) =>
            (e.body as { filterGroups: { filters: { value: string }[] }[] }).filterGroups[0]!.filters[0]!
              .value,
        ),
      );
      expect(froms.size).toBeGreaterThan(1);
    } finally {
      await sim.close();
    }
  }, 60_000);
});

describe('HubSpot client pacing and limits', () => {
  it('waits out the 10-second window after the simulator refuses (no Retry-After)', async () => {
    const sim = await startHubSpotSimulator({ idSeed: 2, rateLimit: { perTenSeconds: 3 } });
    try {
      const waits: number[] = [];
      const connector = createHubSpotConnector({
        token: sim.token,
        baseUrl: sim.url,
        perTenSeconds: 0,
        sleep: async (ms) => {
          waits.push(ms);
          await new Promise((r) => setTimeout(r, 10));
        },
        maxRetryAfterMs: 60_000,
      });
      await expect(connector.read('contacts', null, { pageSize: 1 }))
        .rejects.toBeTruthy()
        .catch(() => {});
      const e = mapHubSpotError(429, {
        status: 'error',
        message: 'You have reached your ten_secondly_rolling limit.',
        errorType: 'RATE_LIMIT',
        policyName: 'TEN_SECONDLY_ROLLING',
      });
      expect(e.code).toBe('rate_limited');
      expect(e.retryAfterMs).toBe(10_000);
      expect(mapHubSpotError(429, { errorType: 'RATE_LIMIT', policyName: 'SECONDLY' }).retryAfterMs).toBe(
        1_000,
      );
    } finally {
      await sim.close();
    }
  });

  it('paces its own requests under the burst limit: no 429 from the simulator', async () => {
    const sim = await startHubSpotSimulator({
      idSeed: 4,
      rateLimit: { perTenSeconds: 5 },
      seed: { contacts: 5 },
    });
    try {
      const connector = createHubSpotConnector({ token: sim.token, baseUrl: sim.url, perTenSeconds: 5 });
      const started = Date.now();
      // 1 schema request and 6 pages: the 6th and 7th wait for the window to slide.
      for (let i = 0; i < 6; i++) await connector.read('companies', null, { pageSize: 5 });
      expect(sim.requestLog.count({ status: 429 })).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    } finally {
      await sim.close();
    }
  }, 30_000);
});

describe('HubSpot value conversion', () => {
  const prop = (type: string, fieldType: string, name = 'p'): HubSpotProperty => ({
    name,
    label: name,
    type,
    fieldType,
  });
  it('maps property types to canonical types and values', () => {
    expect(canonicalType(prop('enumeration', 'checkbox'))).toBe('multi_select');
    expect(canonicalType(prop('enumeration', 'radio'))).toBe('single_select');
    expect(canonicalType(prop('enumeration', 'booleancheckbox'))).toBe('boolean');
    expect(canonicalType(prop('bool', 'booleancheckbox'))).toBe('boolean');
    expect(toCanonical(prop('number', 'number'), '1.50')).toBe('1.5');
    expect(toCanonical(prop('datetime', 'date'), '2026-01-15T09:00:00Z')).toBe('2026-01-15T09:00:00.000Z');
    expect(toCanonical(prop('datetime', 'date'), '1768467600000')).toBe('2026-01-15T09:00:00.000Z');
    expect(toCanonical(prop('bool', 'booleancheckbox'), null)).toBe(false);
    expect(toCanonical(prop('string', 'text'), '')).toBe(null);
    expect(fromCanonical(prop('enumeration', 'checkbox'), ['a', 'b'])).toBe('a;b');
    expect(fromCanonical(prop('bool', 'booleancheckbox'), false)).toBe('false');
    expect(fromCanonical(prop('date', 'date'), '2026-03-01')).toBe('2026-03-01');
    expect(fromCanonical(prop('string', 'text'), null)).toBe('');
  });
});

describe('HubSpot port (REST side)', () => {
  it("honours a connection's baseUrl only for the server's sandboxes (or on a local server)", async () => {
    const sim = await startHubSpotSimulator({ idSeed: 6, portalId: 778 });
    try {
      const items = { accessToken: sim.token, baseUrl: sim.url };
      // The app's own API is elsewhere: the sandbox's address is used because the server runs it.
      const sandboxed = createHubSpotPort({
        apiUrl: 'http://127.0.0.1:9/',
        sandboxUrls: () => [sim.url],
        client: { perTenSeconds: 0 },
      });
      expect(await sandboxed.listBases(items)).toEqual([{ remoteId: '778', name: 'HubSpot account 778' }]);
      const strict = createHubSpotPort({ apiUrl: 'http://127.0.0.1:9/', client: { perTenSeconds: 0 } });
      await expect(strict.check(items)).rejects.toMatchObject({ code: 'permission_denied' });
      await expect(strict.check({ ...items, sandbox: 'true' })).rejects.toMatchObject({
        code: 'auth_invalid',
      });
    } finally {
      await sim.close();
    }
  });

  it('checks the token, lists the account as the one base, discovers the object types it may read', async () => {
    const sim = await startHubSpotSimulator({
      idSeed: 5,
      portalId: 777,
      tokens: [
        {
          token: 'pat-na1-contacts-only',
          scopes: ['crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.schemas.contacts.read'],
        },
        { token: 'pat-na1-nothing', scopes: [] },
      ],
    });
    try {
      const port = createHubSpotPort({ apiUrl: sim.url, client: { perTenSeconds: 0 } });
      await expect(port.check({ accessToken: sim.token })).resolves.toEqual({ accountEmail: null });
      expect(await port.listBases({ accessToken: sim.token })).toEqual([
        { remoteId: '777', name: 'HubSpot account 777' },
      ]);
      const all = await port.discoverSchema({ accessToken: sim.token }, '777');
      expect(all.map((t) => t.remoteId)).toEqual(['contacts', 'companies', 'deals']);
      const deals = all.find((t) => t.remoteId === 'deals')!;
      expect(deals.fields.find((f) => f.remoteId === 'dealstage')).toMatchObject({
        fieldType: 'single_select',
        options: { choices: expect.arrayContaining(['closedwon']) },
      });
      expect(deals.fields.find((f) => f.remoteId === 'hs_lastmodifieddate')?.readOnly).toBe(true);
      const some = await port.discoverSchema({ accessToken: 'pat-na1-contacts-only' }, '777');
      expect(some.map((t) => t.remoteId)).toEqual(['contacts']);
      await expect(port.discoverSchema({ accessToken: 'pat-na1-nothing' }, '777')).rejects.toMatchObject({
        code: 'permission_denied',
        userFacingMessage: expect.stringMatching(/crm\.schemas\.\w+\.read/),
      });
      await expect(port.check({ accessToken: 'pat-na1-unknown' })).rejects.toMatchObject({
        code: 'auth_invalid',
      });
      await expect(port.check({})).rejects.toMatchObject({ code: 'auth_invalid' });
    } finally {
      await sim.close();
    }
  });
});

describe('HubSpot batch create results out of order', () => {
  it('gives each create the record that holds its values', async () => {
    const sim = await startHubSpotSimulator({ idSeed: 6, rateLimit: false, seed: false });
    try {
      const connector = connectorFor(sim);
      await connector.describe('contacts');
      // A proxy in front of the client reverses HubSpot's results (HubSpot does not promise their order).
      const original = globalThis.fetch;
      globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
        const res = await original(input, init);
        if (!String(input).endsWith('/batch/create')) return res;
        const body = (await res.json()) as { results: unknown[] };
        body.results.reverse();
        return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
      }) as typeof fetch;
      let results: Awaited<ReturnType<typeof connector.write>>;
      try {
        results = await connector.write(
          'contacts',
          ['a', 'b', 'c'].map((x) => ({
            kind: 'create' as const,
            fields: { email: `${x}@order.example`, firstname: x.toUpperCase() },
            idempotencyKey: `order-${x}`,
          })),
        );
      } finally {
        globalThis.fetch = original;
      }
      for (const [k, x] of ['a', 'b', 'c'].entries()) {
        const r = results[k]!;
        if (!r.ok) throw new Error(JSON.stringify(r));
        expect(sim.state.get('contacts', r.remoteId)!.properties.get('email')).toBe(`${x}@order.example`);
        expect(r.postImage?.fields.firstname).toBe(x.toUpperCase());
      }
    } finally {
      await sim.close();
    }
  });
});

describe('HubSpot associations as linked records', () => {
  let sim: HubSpotSimulator;
  let clock: ManualClock;
  let connector: HubSpotConnector;
  const COMPANIES = 'associations.companies';
  const CONTACTS = 'associations.contacts';
  beforeAll(async () => {
    clock = new ManualClock();
    sim = await startHubSpotSimulator({ clock, idSeed: 21, rateLimit: false });
    connector = connectorFor(sim, { associationSweepMs: 600_000 });
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  const linked = (type: 'contacts' | 'companies' | 'deals', id: string, to: 'contacts' | 'companies') =>
    sim.state.associated(type, id, to).map((a) => a.id);
  const v4 = (sent: { url: URL; body: unknown }[], op: string) =>
    sent.filter((e) => e.url.pathname.startsWith('/crm/v4/associations/') && e.url.pathname.endsWith(op));

  it('offers a contact Companies, a deal Contacts and Companies (written) and a company Contacts (read-only)', async () => {
    const fields = async (type: string) =>
      Object.fromEntries((await connector.fieldsOf(type)).map((f) => [f.remoteId, f]));
    const contact = await fields('contacts');
    expect(contact[COMPANIES]).toMatchObject({
      fieldType: 'relations',
      readOnly: false,
      options: { references: 'companies' },
    });
    expect((await fields('companies'))[CONTACTS]).toMatchObject({
      fieldType: 'relations',
      readOnly: true,
      options: { references: 'contacts' },
    });
    const deal = await fields('deals');
    expect(deal[CONTACTS]).toMatchObject({ readOnly: false, options: { references: 'contacts' } });
    expect(deal[COMPANIES]).toMatchObject({ readOnly: false, options: { references: 'companies' } });
    const port = createHubSpotPort({ apiUrl: sim.url });
    const tables = await port.discoverSchema({ accessToken: sim.token }, String(sim.state.portalId));
    expect(tables.find((t) => t.remoteId === 'deals')?.fields.map((f) => f.remoteId)).toEqual(
      expect.arrayContaining([CONTACTS, COMPANIES]),
    );
  });

  it('reads associations with every record: in the list pages of a scan (no extra request), batched v4 reads after a search', async () => {
    const rec = recordFetch();
    const scan = await readAll(connector, 'contacts', null, 500).finally(rec.restore);
    expect(scan.records).toHaveLength(50);
    for (const r of scan.records) expect(r.fields[COMPANIES]).toEqual(linked('contacts', r.id, 'companies'));
    expect(scan.records.every((r) => (r.fields[COMPANIES] as string[]).length === 1)).toBe(true);
    // The list pages carried them: not one association request for the scan.
    expect(rec.sent.filter((e) => e.url.pathname.startsWith('/crm/v4/'))).toEqual([]);
    expect(
      rec.sent.every(
        (e) =>
          e.url.pathname !== '/crm/v3/objects/contacts' ||
          e.url.searchParams.get('associations') === 'companies',
      ),
    ).toBe(true);

    const deals = await readAll(connector, 'deals', null, 500);
    const deal = deals.records[0]!;
    expect(deal.fields[CONTACTS]).toEqual(linked('deals', deal.id, 'contacts'));
    expect(deal.fields[COMPANIES]).toEqual(linked('deals', deal.id, 'companies'));
    const companies = await readAll(connector, 'companies', null, 500);
    const company = companies.records.find((r) => r.id === sim.crm!.companies[0])!;
    expect((company.fields[CONTACTS] as string[]).length).toBe(5);

    // Twenty contacts edited: one search, one batch read of them, one v4 association read for all.
    clock.advance(60_000);
    for (const id of sim.crm!.contacts.slice(0, 20)) sim.mutate('contacts', id, { jobtitle: 'Edited' });
    clock.advance(5_000);
    const rec2 = recordFetch();
    const next = await readAll(connector, 'contacts', scan.cursor, 500).finally(rec2.restore);
    expect(next.records).toHaveLength(20);
    for (const r of next.records) expect(r.fields[COMPANIES]).toEqual(linked('contacts', r.id, 'companies'));
    const reads = v4(rec2.sent, '/batch/read');
    expect(reads).toHaveLength(1);
    expect((reads[0]!.body as { inputs: unknown[] }).inputs).toHaveLength(20);
    expect(rec2.sent.filter((e) => e.url.pathname.endsWith('/search'))).toHaveLength(1);

    // readRecords (a retry, a record's status) carries them too.
    const [one] = await connector.readRecords('contacts', [sim.crm!.contacts[3]!]);
    expect(one?.fields[COMPANIES]).toEqual(linked('contacts', sim.crm!.contacts[3]!, 'companies'));
  });

  it('writes an update as the difference from what HubSpot holds: one archive, one associate/default, nothing when unchanged', async () => {
    const [c1, c2] = sim.crm!.contacts.slice(30, 32) as [string, string];
    const [x, y, z] = sim.crm!.companies.slice(6, 9) as [string, string, string];
    const before1 = linked('contacts', c1, 'companies');
    const rec = recordFetch();
    const results = await connector
      .write('contacts', [
        // Moves to two other companies (its own one dropped).
        { kind: 'update', remoteId: c1, fields: { [COMPANIES]: [x, y] }, idempotencyKey: 'a1' },
        // Keeps its company, gains one, and a property changes in the same write.
        {
          kind: 'update',
          remoteId: c2,
          fields: { [COMPANIES]: [...linked('contacts', c2, 'companies'), z], jobtitle: 'Linked' },
          idempotencyKey: 'a2',
        },
      ])
      .finally(rec.restore);
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    expect(linked('contacts', c1, 'companies')).toEqual([x, y].sort((a, b) => Number(a) - Number(b)));
    expect(linked('contacts', c2, 'companies')).toContain(z);
    expect(linked('companies', z, 'contacts')).toContain(c2);
    expect(sim.state.get('contacts', c2)?.properties.get('jobtitle')).toBe('Linked');
    const r1 = results[0] as Extract<(typeof results)[number], { ok: true }>;
    expect(r1.postImage?.fields[COMPANIES]).toEqual([x, y].sort());
    // One read of what HubSpot holds, one archive (c1's old company), one create for the three new links.
    expect(v4(rec.sent, '/batch/read')).toHaveLength(1);
    const archived = v4(rec.sent, '/batch/archive');
    expect(archived.map((e) => e.body)).toEqual([
      { inputs: [{ from: { id: c1 }, to: before1.map((id) => ({ id })) }] },
    ]);
    const made = v4(rec.sent, '/batch/associate/default');
    expect(made).toHaveLength(1);
    expect((made[0]!.body as { inputs: unknown[] }).inputs).toHaveLength(3);
    // Only c2 had properties to write.
    const updates = rec.sent.filter((e) => e.url.pathname === '/crm/v3/objects/contacts/batch/update');
    expect(updates.map((e) => (e.body as { inputs: { id: string }[] }).inputs.map((i) => i.id))).toEqual([
      [c2],
    ]);

    // The same lists again: read, compared, nothing written.
    const rec2 = recordFetch();
    const again = await connector
      .write('contacts', [
        { kind: 'update', remoteId: c1, fields: { [COMPANIES]: [y, x] }, idempotencyKey: 'a3' },
      ])
      .finally(rec2.restore);
    expect(again[0]?.ok).toBe(true);
    expect(v4(rec2.sent, '/batch/archive')).toEqual([]);
    expect(v4(rec2.sent, '/batch/associate/default')).toEqual([]);
  });

  it('unassociates: an emptied list removes every association, on both sides', async () => {
    const c = sim.crm!.contacts[33]!;
    const company = linked('contacts', c, 'companies')[0]!;
    const [result] = await connector.write('contacts', [
      { kind: 'update', remoteId: c, fields: { [COMPANIES]: null }, idempotencyKey: 'un1' },
    ]);
    expect(result).toMatchObject({ ok: true, postImage: { fields: { [COMPANIES]: null } } });
    expect(linked('contacts', c, 'companies')).toEqual([]);
    expect(linked('companies', company, 'contacts')).not.toContain(c);
  });

  it('creates a deal with its contacts and companies in the create request', async () => {
    const [contact] = sim.crm!.contacts.slice(34) as [string];
    const company = sim.crm!.companies[2]!;
    const rec = recordFetch();
    const [created] = await connector
      .write('deals', [
        {
          kind: 'create',
          fields: { dealname: 'Linked deal', [CONTACTS]: [contact], [COMPANIES]: [company] },
          idempotencyKey: 'deal-1',
        },
      ])
      .finally(rec.restore);
    expect(created?.ok).toBe(true);
    const id = (created as Extract<typeof created, { ok: true }>).remoteId;
    expect(linked('deals', id, 'contacts')).toEqual([contact]);
    expect(linked('deals', id, 'companies')).toEqual([company]);
    expect((created as Extract<typeof created, { ok: true }>).postImage?.fields).toMatchObject({
      [CONTACTS]: [contact],
      [COMPANIES]: [company],
    });
    expect(rec.sent.map((e) => e.url.pathname)).toEqual(['/crm/v3/objects/deals/batch/create']);
  });

  it('fails alone the record linked to a company that no longer exists; the others are linked', async () => {
    const [c1, c2] = sim.crm!.contacts.slice(35, 37) as [string, string];
    const gone = sim.create('companies', { name: 'Gone soon' }).id;
    sim.archive('companies', gone);
    const keep = sim.crm!.companies[9]!;
    const had = linked('contacts', c1, 'companies');
    const results = await connector.write('contacts', [
      { kind: 'update', remoteId: c1, fields: { [COMPANIES]: [gone] }, idempotencyKey: 'bad1' },
      { kind: 'update', remoteId: c2, fields: { [COMPANIES]: [keep] }, idempotencyKey: 'bad2' },
      { kind: 'update', remoteId: '99999999', fields: { [COMPANIES]: [keep] }, idempotencyKey: 'bad3' },
    ]);
    expect(results.map((r) => r.ok)).toEqual([false, true, false]);
    expect(results[0]).toMatchObject({ ok: false, error: { code: 'validation' } });
    expect((results[0] as { error: { userFacingMessage: string } }).error.userFacingMessage).toContain(gone);
    expect(results[2]).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(linked('contacts', c2, 'companies')).toEqual([keep]);
    // The failed record keeps the company it had: nothing of its write was made.
    expect(linked('contacts', c1, 'companies')).toEqual(had);
  });

  it('leaves the read-only side alone: a company Contacts list in a write changes nothing', async () => {
    const company = sim.crm!.companies[4]!;
    const before = linked('companies', company, 'contacts');
    const [r] = await connector.write('companies', [
      {
        kind: 'update',
        remoteId: company,
        fields: { [CONTACTS]: null, name: 'Renamed' },
        idempotencyKey: 'ro1',
      },
    ]);
    expect(r?.ok).toBe(true);
    expect(linked('companies', company, 'contacts')).toEqual(before);
  });

  it('refuses an update whose expected associations HubSpot no longer holds (version_conflict, current with its associations)', async () => {
    const c = sim.crm!.contacts[37]!;
    const held = linked('contacts', c, 'companies');
    const added = sim.crm!.companies[8]!;
    sim.associate('contacts', c, 'companies', added);
    const [r] = await connector.write('contacts', [
      {
        kind: 'update',
        remoteId: c,
        fields: { [COMPANIES]: null },
        expected: { [COMPANIES]: held },
        idempotencyKey: 'cf1',
      },
    ]);
    expect(r).toMatchObject({ ok: false, error: { code: 'version_conflict' } });
    expect((r as { current: { fields: Record<string, unknown> } }).current.fields[COMPANIES]).toEqual(
      [...held, added].sort(),
    );
    expect(linked('contacts', c, 'companies')).toContain(added);
  });

  it('finds an association made in HubSpot, which moves no modified time, with the periodic sweep', async () => {
    const scan = await readAll(connector, 'contacts', null, 500);
    const c = sim.crm!.contacts[45]!;
    const company = sim.crm!.companies[7]!;
    clock.advance(60_000);
    sim.associate('contacts', c, 'companies', company);
    clock.advance(5_000);
    // The search cannot see it: nothing was modified.
    const quiet = await readAll(connector, 'contacts', scan.cursor, 500);
    expect(quiet.records.find((r) => r.id === c)).toBeUndefined();
    // Once the sweep is due (10 minutes here), the next read lists the type again with its associations.
    clock.advance(600_000);
    const tick = await readAll(connector, 'contacts', quiet.cursor, 500);
    clock.advance(60_000);
    const rec = recordFetch();
    const swept = await readAll(connector, 'contacts', tick.cursor, 500).finally(rec.restore);
    expect(swept.records.find((r) => r.id === c)?.fields[COMPANIES]).toContain(company);
    expect(swept.records.length).toBeGreaterThanOrEqual(50);
    const lists = rec.sent.filter(
      (e) => e.method === 'GET' && e.url.searchParams.get('archived') === 'false',
    );
    expect(lists.length).toBeGreaterThan(0);
    // The next read does not sweep again.
    clock.advance(60_000);
    const after = await readAll(connector, 'contacts', swept.cursor, 500);
    expect(after.records).toEqual([]);
  });
});
