import { createHash, randomBytes } from 'node:crypto';
import type { CanonicalValue } from '@lockstep/engine';
import { ManualClock, type SalesforceSimulator, startSalesforceSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import type { WriteResult } from '../sdk/connector';
import { createSalesforcePort } from './port';
import { createSalesforceConnector, type SalesforceConnectorOptions } from './salesforce-connector';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(sim: SalesforceSimulator, extra: Partial<SalesforceConnectorOptions> = {}) {
  return createSalesforceConnector({
    instanceUrl: sim.url,
    token: sim.token,
    // No pacing here: the simulator's limits are tested below.
    perSecond: 0,
    rateLimitWaitMs: 5,
    bulkPollMs: 1,
    sleep: fastSleep,
    ...extra,
  });
}

function ok(r: WriteResult | undefined): Extract<WriteResult, { ok: true }> {
  if (!r?.ok) throw new Error(`write failed: ${JSON.stringify(r)}`);
  return r;
}

let counter = 0;
/** A minute on: getDeleted ignores seconds, so a delete is reported once its minute has passed. */
const MINUTE = 61_000;

runConformanceSuite('Salesforce (simulator)', async () => {
  const clock = new ManualClock();
  const sim = await startSalesforceSimulator({ clock, idSeed: 1, seed: false, rateLimit: false });
  const make = (token: string) => connectorFor(sim, { token });
  const connector = make(sim.token);
  return {
    connector,
    tableId: 'Contact',
    sampleFields: (): Fields => {
      counter += 1;
      return { LastName: `Conformance ${counter}`, Email: `c${counter}@example.com`, LeadSource: 'Web' };
    },
    async seed(count) {
      const ids = Array.from({ length: count }, () => {
        counter += 1;
        return sim.create('Contact', {
          LastName: `Seeded ${counter}`,
          Email: `seeded${counter}@example.com`,
        });
      });
      clock.advance(1_000);
      return ids;
    },
    async mutate(remoteId) {
      clock.advance(1_000);
      sim.update('Contact', remoteId, { FirstName: 'Changed in Salesforce', LeadSource: 'Phone Inquiry' });
      clock.advance(1_000);
      return { FirstName: 'Changed in Salesforce', LeadSource: 'Phone Inquiry' };
    },
    async remove(remoteId) {
      sim.remove('Contact', remoteId);
      clock.advance(MINUTE);
    },
    // Contact's LastName is required.
    invalidFields: () => ({ FirstName: `No last name ${++counter}` }),
    async discover() {
      const port = createSalesforcePort({ apiUrl: sim.url, client: { perSecond: 0 } });
      return port.discoverSchema({ accessToken: sim.token, instanceUrl: sim.url }, sim.state.orgId);
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0) sim.faults.next({ status: kind === 'rate_limited' ? 429 : 503, count });
    },
    async badAuthConnector() {
      return make('00DREVOKED!notATokenSalesforceKnows');
    },
    close: () => sim.close(),
  };
});

describe('Salesforce connector against the simulator', () => {
  let sim: SalesforceSimulator;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock();
    sim = await startSalesforceSimulator({
      clock,
      idSeed: 7,
      seed: false,
      rateLimit: false,
      bulk: { processingMs: 0 },
    });
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('discovers the standard objects and custom ones with canonical types, read-only and required fields', async () => {
    const port = createSalesforcePort({ apiUrl: sim.url, client: { perSecond: 0 } });
    // As the token answer gives them (the identity URL tells the user and the org).
    const items = {
      accessToken: sim.token,
      instanceUrl: sim.url,
      identityUrl: `${sim.url}/id/${sim.state.orgId}/${sim.state.userId}`,
    };
    const tables = await port.discoverSchema(items, sim.state.orgId);
    expect(tables.map((t) => t.remoteId)).toEqual([
      'Account',
      'Contact',
      'Lead',
      'Opportunity',
      'Project__c',
    ]);
    const contact = tables.find((t) => t.remoteId === 'Contact')!;
    const f = (name: string) => contact.fields.find((x) => x.remoteId === name);
    expect(f('LeadSource')).toMatchObject({
      fieldType: 'single_select',
      options: { choices: expect.arrayContaining(['Web']) },
    });
    expect(f('Interests__c')?.fieldType).toBe('multi_select');
    expect(f('AccountId')).toMatchObject({ fieldType: 'relations', options: { references: 'Account' } });
    expect(f('LastName')?.options.required).toBe(true);
    expect(f('Name')?.readOnly).toBe(true);
    expect(f('SystemModstamp')?.readOnly).toBe(true);
    expect(f('Email')?.fieldType).toBe('email');
    const opp = tables.find((t) => t.remoteId === 'Opportunity')!;
    expect(opp.fields.find((x) => x.remoteId === 'ExpectedRevenue')).toMatchObject({
      fieldType: 'number',
      readOnly: true,
    });
    expect(opp.fields.find((x) => x.remoteId === 'Amount')?.fieldType).toBe('number');
    expect(opp.fields.find((x) => x.remoteId === 'Probability')?.fieldType).toBe('number');
    expect(tables.find((t) => t.remoteId === 'Project__c')?.name).toBe('Projects');
    const [base] = await port.listBases(items);
    expect(base?.remoteId).toBe(sim.state.orgId);
    const checked = await port.check(items);
    expect(checked.accountEmail).toMatch(/@/);
    expect(checked.apiUsage).toMatchObject({ max: expect.any(Number), remaining: expect.any(Number) });
  });

  it('converts values both ways on a custom object (numbers, currency, percent, dates, selects, relations, booleans)', async () => {
    const connector = connectorFor(sim);
    const account = sim.create('Account', { Name: 'Values Inc' });
    const fields: Fields = {
      Name: 'Values project',
      Account__c: [account],
      Status__c: 'Active',
      Tags__c: ['Billable', 'Priority'],
      Start_Date__c: '2026-03-01',
      Kickoff_At__c: '2026-03-02T10:30:00.000Z',
      Budget__c: '1200.5',
      Completion__c: '42.25',
      Hours__c: '7.5',
      Active__c: true,
      Website__c: 'https://example.com/values',
      Contact_Email__c: 'values@example.com',
      Notes__c: 'Line one\nline two, "quoted"',
    };
    const [created] = await connector.write('Project__c', [
      { kind: 'create', fields, idempotencyKey: 'values-1' },
    ]);
    const id = ok(created).remoteId;
    expect(ok(created).postImage?.fields).toMatchObject(fields);
    const stored = sim.get('Project__c', id)!;
    expect(stored).toMatchObject({
      Account__c: account,
      Tags__c: 'Billable;Priority',
      Budget__c: 1200.5,
      Active__c: true,
      Start_Date__c: '2026-03-01',
    });
    // Read back by a scan: the same canonical values, the formula read-only and computed.
    const { records } = await readAll(connector, 'Project__c', null, 100);
    const read = records.find((r) => r.id === id)!;
    expect(read.fields).toMatchObject(fields);
    expect(read.fields.Is_Over_Budget__c).toBe(false);
    // Cleared values are written as nulls and read back as null.
    const [cleared] = await connector.write('Project__c', [
      {
        kind: 'update',
        remoteId: id,
        fields: { Tags__c: null, Budget__c: null, Account__c: null },
        idempotencyKey: 'values-2',
      },
    ]);
    expect(ok(cleared).postImage?.fields).toMatchObject({ Tags__c: null, Budget__c: null, Account__c: null });
  });

  it('scans to the end across query batches of 2,000 (nextRecordsUrl) and pages ordered by Id', async () => {
    for (let i = 0; i < 4_500; i++) sim.create('Lead', { LastName: `L${i}`, Company: `Co ${i}` });
    const connector = connectorFor(sim);
    const { records, pages } = await readAll(connector, 'Lead', null, 2_000);
    expect(records).toHaveLength(4_500);
    expect(new Set(records.map((r) => r.id)).size).toBe(4_500);
    expect(pages).toHaveLength(3);
  });

  it('reads an in-app edit and a delete incrementally, and again with the overlap only once more', async () => {
    const connector = connectorFor(sim);
    const ids = Array.from({ length: 5 }, (_, i) =>
      sim.create('Contact', { LastName: `Inc ${i}`, Email: `inc${i}@example.com` }),
    );
    // Past the overlap: the scan's records are not read again as changes.
    clock.advance(2 * MINUTE);
    const scan = await readAll(connector, 'Contact', null, 500);
    clock.advance(5_000);
    sim.update('Contact', ids[0]!, { Title: 'Edited in Salesforce' });
    sim.remove('Contact', ids[1]!);
    clock.advance(MINUTE);
    const next = await readAll(connector, 'Contact', scan.cursor, 500);
    expect(next.records.find((r) => r.id === ids[0])?.fields.Title).toBe('Edited in Salesforce');
    expect(next.deletedIds).toEqual([ids[1]]);
    expect(next.records.some((r) => r.id === ids[2])).toBe(false);
    // Much later: nothing new, nothing deleted again.
    clock.advance(10 * MINUTE);
    const quiet = await readAll(connector, 'Contact', next.cursor, 500);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  it('keeps a record edited during an incremental read that spans pages (keyset on SystemModstamp, Id)', async () => {
    const connector = connectorFor(sim);
    const ids = Array.from({ length: 6 }, (_, i) => sim.create('Account', { Name: `Keyset ${i}` }));
    const scan = await readAll(connector, 'Account', null, 1000);
    clock.advance(5_000);
    for (const id of ids) {
      sim.update('Account', id, { Description: 'first edit' });
      clock.advance(10);
    }
    const first = await connector.read('Account', scan.cursor, { pageSize: 2 });
    expect(first.hasMore).toBe(true);
    // A record of the first page is edited again before the next page: it comes again, none is lost.
    sim.update('Account', first.records[0]!.id, { Description: 'second edit' });
    const rest = await readAll(connector, 'Account', first.nextCursor, 2);
    const all = [...first.records, ...rest.records];
    for (const id of ids) expect(all.some((r) => r.id === id)).toBe(true);
    expect(rest.records.find((r) => r.id === first.records[0]!.id)?.fields.Description).toBe('second edit');
  });

  it('fails one bad record of a batch alone with a clear message; the rest land', async () => {
    const connector = connectorFor(sim);
    const [a, b] = [
      sim.create('Contact', { LastName: 'A', Email: 'a.batch@example.com' }),
      sim.create('Contact', { LastName: 'B' }),
    ];
    const results = await connector.write('Contact', [
      { kind: 'update', remoteId: a, fields: { Title: 'Lands' }, idempotencyKey: 'b1' },
      { kind: 'update', remoteId: b, fields: { Interests__c: ['Not a value'] }, idempotencyKey: 'b2' },
      { kind: 'create', fields: { FirstName: 'No last name' }, idempotencyKey: 'b3' },
      {
        kind: 'create',
        fields: { LastName: 'Created', Email: 'created.batch@example.com' },
        idempotencyKey: 'b4',
      },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, true]);
    for (const r of [results[1], results[2]]) {
      if (r?.ok !== false) throw new Error('expected a failure');
      expect(r.error.code).toBe('validation');
      expect(r.error.userFacingMessage).toMatch(/Salesforce refused the value: .+/);
    }
    expect(results[2]?.ok === false && results[2].error.userFacingMessage).toMatch(/LastName/);
    expect(sim.get('Contact', a)?.Title).toBe('Lands');
  });

  it('refuses an update or delete of a record edited since it was read (version_conflict with its current values)', async () => {
    const connector = connectorFor(sim);
    const id = sim.create('Contact', { LastName: 'Conflict', Title: 'Read by Lockstep' });
    const other = sim.create('Contact', { LastName: 'Spared', Title: 'Read by Lockstep' });
    const third = sim.create('Contact', { LastName: 'Third', Title: 'Read by Lockstep' });
    sim.update('Contact', id, { Title: 'Edited in Salesforce' });
    sim.update('Contact', other, { Title: 'Edited in Salesforce' });
    sim.update('Contact', third, { Title: 'Edited in Salesforce' });
    const [update, untouched] = await connector.write('Contact', [
      {
        kind: 'update',
        remoteId: id,
        fields: { Title: 'Lockstep' },
        expected: { Title: 'Read by Lockstep' },
        idempotencyKey: 'c1',
      },
      {
        kind: 'update',
        remoteId: third,
        fields: { Department: 'Sales' },
        expected: { Title: 'Edited in Salesforce' },
        idempotencyKey: 'c2',
      },
    ]);
    expect(update).toMatchObject({
      ok: false,
      error: { code: 'version_conflict' },
      current: { id, fields: { Title: 'Edited in Salesforce' } },
    });
    expect(untouched, JSON.stringify(untouched)).toMatchObject({ ok: true });
    expect(sim.get('Contact', id)?.Title).toBe('Edited in Salesforce');
    const [del] = await connector.write('Contact', [
      { kind: 'delete', remoteId: other, expected: { Title: 'Read by Lockstep' }, idempotencyKey: 'c3' },
    ]);
    expect(del).toMatchObject({ ok: false, error: { code: 'version_conflict' } });
    expect(sim.get('Contact', other)).toBeDefined();
    // A delete of a record deleted already holds (a replay).
    sim.remove('Contact', id);
    const [again] = await connector.write('Contact', [
      { kind: 'delete', remoteId: id, idempotencyKey: 'c4' },
    ]);
    expect(again?.ok).toBe(true);
  });

  it('offers contacts and leads a writable Full name made of FirstName and LastName: read joined, written split, checked before write', async () => {
    const connector = connectorFor(sim);
    const port = createSalesforcePort({ apiUrl: sim.url, client: { perSecond: 0 } });
    const tables = await port.discoverSchema(
      { accessToken: sim.token, instanceUrl: sim.url },
      sim.state.orgId,
    );
    const field = (table: string, id: string) =>
      tables.find((t) => t.remoteId === table)?.fields.find((f) => f.remoteId === id);
    // Salesforce's own compound Name stays read-only; the Full name is written as its two parts,
    // required as LastName is.
    expect(field('Contact', 'Name')).toMatchObject({ name: 'Full Name', readOnly: true });
    expect(field('Contact', 'FirstName+LastName')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
      options: { madeOf: ['FirstName', 'LastName'], required: true },
    });
    expect(field('Lead', 'FirstName+LastName')?.readOnly).toBe(false);
    expect(field('Account', 'FirstName+LastName')).toBeUndefined();

    const [made] = await connector.write('Contact', [
      {
        kind: 'create',
        fields: { Email: 'mary.ann@example.com', 'FirstName+LastName': ' Mary Ann  Smith ' },
        idempotencyKey: 'full-name-1',
      },
    ]);
    const id = ok(made).remoteId;
    expect([sim.get('Contact', id)?.FirstName, sim.get('Contact', id)?.LastName]).toEqual([
      'Mary Ann',
      'Smith',
    ]);
    expect(ok(made).postImage?.fields['FirstName+LastName']).toBe('Mary Ann Smith');
    const [read] = await connector.readRecords('Contact', [id]);
    expect(read?.fields['FirstName+LastName']).toBe('Mary Ann Smith');

    // One word is a last name (Salesforce requires one), the first name cleared.
    const [renamed] = await connector.write('Contact', [
      {
        kind: 'update',
        remoteId: id,
        fields: { 'FirstName+LastName': 'Cher' },
        idempotencyKey: 'full-name-2',
      },
    ]);
    expect(ok(renamed).postImage?.fields['FirstName+LastName']).toBe('Cher');
    expect([sim.get('Contact', id)?.FirstName ?? null, sim.get('Contact', id)?.LastName]).toEqual([
      null,
      'Cher',
    ]);

    // A first name edited in Salesforce since it was read: the full name's write is a conflict.
    sim.update('Contact', id, { FirstName: 'Sonny' });
    const [stale] = await connector.write('Contact', [
      {
        kind: 'update',
        remoteId: id,
        fields: { 'FirstName+LastName': 'Cherilyn Sarkisian' },
        expected: { 'FirstName+LastName': 'Cher' },
        idempotencyKey: 'full-name-3',
      },
    ]);
    expect(stale).toMatchObject({
      ok: false,
      error: { code: 'version_conflict' },
      current: { fields: { 'FirstName+LastName': 'Sonny Cher' } },
    });
    expect(sim.get('Contact', id)?.LastName).toBe('Cher');

    // Through Bulk API 2.0 too, and a blank full name is refused as a missing last name.
    const bulk = connectorFor(sim, { bulkWriteThreshold: 2 });
    const results = await bulk.write('Contact', [
      { kind: 'create', fields: { 'FirstName+LastName': 'Ada Lovelace' }, idempotencyKey: 'full-name-4' },
      { kind: 'create', fields: { 'FirstName+LastName': '' }, idempotencyKey: 'full-name-5' },
    ]);
    const lovelace = ok(results[0]).remoteId;
    expect([sim.get('Contact', lovelace)?.FirstName, sim.get('Contact', lovelace)?.LastName]).toEqual([
      'Ada',
      'Lovelace',
    ]);
    expect(results[1]).toMatchObject({ ok: false, error: { code: 'validation' } });
  });

  it('answers a create refused for a unique value with existingId (the runtime links instead of duplicating)', async () => {
    const connector = connectorFor(sim);
    const existing = sim.create('Project__c', { Name: 'Unique one', Project_Code__c: 'PRJ-UNIQUE-1' });
    const [dupe, fresh] = await connector.write('Project__c', [
      { kind: 'create', fields: { Name: 'Again', Project_Code__c: 'PRJ-UNIQUE-1' }, idempotencyKey: 'u1' },
      { kind: 'create', fields: { Name: 'Other', Project_Code__c: 'PRJ-UNIQUE-2' }, idempotencyKey: 'u2' },
    ]);
    expect(dupe).toMatchObject({ ok: false, error: { code: 'validation' }, existingId: existing });
    expect(fresh?.ok).toBe(true);
  });

  it('answers with what Salesforce holds after a trigger changed the record (the post-image is re-read)', async () => {
    sim.addTrigger('Opportunity', (ctx) =>
      ctx.record && ctx.record.StageName === 'Closed Won' ? { NextStep: 'Send invoice' } : undefined,
    );
    const connector = connectorFor(sim);
    const [created] = await connector.write('Opportunity', [
      {
        kind: 'create',
        fields: { Name: 'Triggered', StageName: 'Closed Won', CloseDate: '2026-02-01', Amount: '100' },
        idempotencyKey: 't1',
      },
    ]);
    expect(ok(created).postImage?.fields).toMatchObject({
      NextStep: 'Send invoice',
      IsWon: true,
      Probability: '100',
    });
  });

  it('rides out a 429 storm on writes and reads with nothing lost and nothing doubled', async () => {
    const connector = connectorFor(sim, { maxAttempts: 3 });
    const requests = Array.from({ length: 30 }, (_, i) => ({
      kind: 'create' as const,
      fields: { LastName: `Storm ${i}`, Email: `storm${i}@example.com` },
      idempotencyKey: `storm-${i}`,
    }));
    // More 429s than the client retries: the write fails over to the runtime, which tries again.
    sim.faults.next({ status: 429, count: 7, method: 'POST' });
    let results: WriteResult[] | undefined;
    for (let attempt = 0; attempt < 5 && !results; attempt++) {
      results = await connector.write('Contact', requests).catch((e: { code?: string }) => {
        expect(e.code).toBe('rate_limited');
        return undefined;
      });
    }
    expect(results?.every((r) => r.ok)).toBe(true);
    const storm = sim.state
      .list('Contact')
      .filter((r) => String(sim.state.image(r).Email ?? '').startsWith('storm'));
    expect(storm).toHaveLength(30);
    expect(sim.requestLog.count({ status: 429 })).toBeGreaterThanOrEqual(7);
    // A retried batch gives the records made the first time, not new ones.
    const again = await connector.write('Contact', requests);
    expect(again.map((r) => ok(r).remoteId)).toEqual(results?.map((r) => ok(r).remoteId));
    sim.faults.next({ status: 429, count: 2, method: 'GET' });
    const { records } = await readAll(connector, 'Contact', null, 2_000);
    expect(records.filter((r) => String(r.fields.Email).startsWith('storm'))).toHaveLength(30);
  });
});

describe('Salesforce Bulk API 2.0', () => {
  it('writes a large batch as one ingest job, results mapped back to each request', async () => {
    const clock = new ManualClock();
    const sim = await startSalesforceSimulator({
      clock,
      idSeed: 3,
      seed: false,
      rateLimit: false,
      bulk: { processingMs: 0 },
    });
    try {
      const connector = connectorFor(sim, { bulkWriteThreshold: 10 });
      const requests = Array.from({ length: 25 }, (_, i) => ({
        kind: 'create' as const,
        fields: (i === 7
          ? { FirstName: 'No last name' }
          : { LastName: `Bulk ${i}`, Email: `bulk${i}@example.com`, Interests__c: ['Security'] }) as Fields,
        idempotencyKey: `bulk-${i}`,
      }));
      const before = sim.requestLog.total;
      const results = await connector.write('Contact', requests);
      expect(results.map((r) => r.ok)).toEqual(requests.map((_, i) => i !== 7));
      for (const [i, r] of results.entries()) {
        if (!r.ok) continue;
        expect(sim.get('Contact', r.remoteId)?.Email).toBe(`bulk${i}@example.com`);
        expect(r.postImage?.fields.Interests__c).toEqual(['Security']);
      }
      expect(sim.requestLog.count({ path: /\/jobs\/ingest$/ })).toBe(1);
      // One job (create, upload, close, poll, results) and the post-images, not 25 calls.
      expect(sim.requestLog.total - before).toBeLessThan(12);
      // Updates and deletes go by Id.
      const ids = results.filter((r) => r.ok).map((r) => ok(r).remoteId);
      const updated = await connector.write(
        'Contact',
        ids.map((id, k) => ({
          kind: 'update' as const,
          remoteId: id,
          fields: { Title: `T${k}` },
          idempotencyKey: `bu-${k}`,
        })),
      );
      expect(updated.every((r) => r.ok)).toBe(true);
      expect(ids.map((id) => sim.get('Contact', id)?.Title)).toEqual(ids.map((_, k) => `T${k}`));
      const deleted = await connector.write(
        'Contact',
        ids.map((id, k) => ({ kind: 'delete' as const, remoteId: id, idempotencyKey: `bd-${k}` })),
      );
      expect(deleted.every((r) => r.ok)).toBe(true);
      expect(ids.filter((id) => sim.get('Contact', id))).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it('maps results back by Id or values, not by position (Salesforce does not keep the upload order)', async () => {
    const sim = await startSalesforceSimulator({
      idSeed: 8,
      seed: false,
      rateLimit: false,
      bulk: { processingMs: 0 },
    });
    // A proxy in front of the client reverses the rows of every bulk result.
    const original = globalThis.fetch;
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await original(input, init);
      if (!/\/(successfulResults|failedResults)$/.test(new URL(String(input)).pathname)) return res;
      const [header, ...rows] = (await res.text()).split('\n').filter((l) => l !== '');
      const text = `${[header, ...rows.reverse()].join('\n')}\n`;
      return new Response(text, { status: res.status, headers: res.headers });
    }) as typeof fetch;
    try {
      const connector = connectorFor(sim, { bulkWriteThreshold: 3 });
      const requests = ['a', 'b', 'bad', 'c'].map((x) => ({
        kind: 'create' as const,
        fields: (x === 'bad'
          ? { FirstName: 'No last name' }
          : { LastName: x, Email: `${x}@order.example` }) as Fields,
        idempotencyKey: `order-${x}`,
      }));
      const results = await connector.write('Contact', requests);
      expect(results.map((r) => r.ok)).toEqual([true, true, false, true]);
      for (const [k, x] of ['a', 'b', 'bad', 'c'].entries()) {
        const r = results[k];
        if (!r?.ok) continue;
        expect(sim.get('Contact', r.remoteId)?.Email).toBe(`${x}@order.example`);
      }
      const updates = await connector.write(
        'Contact',
        results.flatMap((r, k) =>
          r.ok
            ? [
                {
                  kind: 'update' as const,
                  remoteId: r.remoteId,
                  fields: { Title: `T${k}` },
                  idempotencyKey: `ou-${k}`,
                },
              ]
            : [],
        ),
      );
      expect(updates.map((r) => r.ok && sim.get('Contact', r.remoteId)?.Title)).toEqual(['T0', 'T1', 'T3']);
    } finally {
      globalThis.fetch = original;
      await sim.close();
    }
  });

  it('scans a large object with one query job in a handful of calls', async () => {
    const clock = new ManualClock();
    const sim = await startSalesforceSimulator({
      clock,
      idSeed: 4,
      seed: false,
      rateLimit: false,
      bulk: { processingMs: 0 },
    });
    try {
      for (let i = 0; i < 3_000; i++) sim.create('Account', { Name: `Big ${i}`, AnnualRevenue: i });
      clock.advance(2 * MINUTE);
      const connector = connectorFor(sim, { bulkQueryThreshold: 1_000, bulkChunkRecords: 2_500 });
      const before = sim.requestLog.total;
      const { records, cursor } = await readAll(connector, 'Account', null, 500);
      expect(records).toHaveLength(3_000);
      expect(new Set(records.map((r) => r.id)).size).toBe(3_000);
      expect(records.find((r) => r.fields.Name === 'Big 42')?.fields.AnnualRevenue).toBe('42');
      // describe, count, job, poll, two result chunks: not one call per page of 500.
      expect(sim.requestLog.total - before).toBeLessThanOrEqual(8);
      // Then incremental reads go on from where the scan began.
      clock.advance(5_000);
      const some = records[10]!.id;
      sim.update('Account', some, { Name: 'Changed after the bulk scan' });
      const next = await readAll(connector, 'Account', cursor, 500);
      expect(next.records.map((r) => r.id)).toEqual([some]);
    } finally {
      await sim.close();
    }
  });
});

describe('Salesforce limits and sessions', () => {
  it('maps the daily allocation used up (403 REQUEST_LIMIT_EXCEEDED) to a rate limit with a long wait, and shows what is left', async () => {
    const sim = await startSalesforceSimulator({
      idSeed: 5,
      seed: false,
      rateLimit: { dailyApiRequests: 20 },
    });
    try {
      const port = createSalesforcePort({ apiUrl: sim.url, client: { perSecond: 0 } });
      const items = { accessToken: sim.token, instanceUrl: sim.url };
      const { apiUsage } = await port.check(items);
      expect(apiUsage?.max).toBe(20);
      expect(apiUsage?.remaining).toBeLessThan(20);
      sim.usage.consume(20);
      const connector = connectorFor(sim, { maxAttempts: 2 });
      await expect(connector.read('Contact', null, { pageSize: 10 })).rejects.toMatchObject({
        code: 'rate_limited',
        retryAfterMs: 60 * 60_000,
        userFacingMessage: expect.stringMatching(/daily API allocation/),
      });
    } finally {
      await sim.close();
    }
  });

  it('renews an expired session once with the refresh token (INVALID_SESSION_ID) and saves it', async () => {
    const sim = await startSalesforceSimulator({ idSeed: 6, seed: false, rateLimit: false });
    try {
      // The simulator's connected app.
      const client = sim.oauth.clients[0]!;
      const settings = {
        apiUrl: sim.url,
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        client: { perSecond: 0 },
      };
      const port = createSalesforcePort(settings);
      // Sign in with Salesforce: the web-server flow with PKCE, as the browser would follow it.
      const redirectUri = client.redirectUris[0] as string;
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const authorize = port.authorizeUrl({ redirectUri, state: 's1', codeChallenge: challenge });
      expect(new URL(authorize).searchParams.get('code_challenge_method')).toBe('S256');
      const consent = await fetch(authorize, { redirect: 'manual' });
      const back = new URL(consent.headers.get('location') ?? '');
      expect(back.searchParams.get('state')).toBe('s1');
      const items = await port.exchangeCode({
        code: back.searchParams.get('code') ?? '',
        codeVerifier: verifier,
        redirectUri,
      });
      expect(items).toMatchObject({ instanceUrl: sim.url, refreshToken: expect.any(String) });
      // The session ends (revoked, timed out): the next call renews it once and saves the new items.
      sim.revokeToken(items.accessToken as string);
      const saved: Record<string, string>[] = [];
      const { accountEmail } = await port.check(items, async (x) => {
        saved.push(x);
      });
      expect(accountEmail).toMatch(/@/);
      expect(saved).toHaveLength(1);
      expect(saved[0]?.accessToken).not.toBe(items.accessToken);
      expect(saved[0]?.refreshToken).toBe(items.refreshToken);
      const connector = createSalesforcePort(settings);
      await expect(connector.check(saved[0] as Record<string, string>)).resolves.toBeTruthy();
      // Without a refresh token the refusal stands, with a message to act on.
      await expect(
        port.check({ accessToken: items.accessToken as string, instanceUrl: sim.url }),
      ).rejects.toMatchObject({
        code: 'auth_invalid',
      });
    } finally {
      await sim.close();
    }
  });
});
