import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanonicalValue } from '@lockstep/engine';
import { ManualClock, type PipedriveSimulator, startPipedriveSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { mapPipedriveError, untilMidnightUtc } from './pipedrive-api';
import { choiceOptions } from './pipedrive-choices';
import {
  createPipedriveConnector,
  fromCanonical,
  type PipedriveConnector,
  type PipedriveField,
  packIds,
  pipedriveFields,
  toCanonical,
  unpackIds,
  withPrimary,
} from './pipedrive-connector';
import { createPipedrivePort } from './port';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(
  sim: PipedriveSimulator,
  extra: Partial<Parameters<typeof createPipedriveConnector>[0]> = {},
) {
  return createPipedriveConnector({
    apiToken: sim.token,
    baseUrl: sim.url,
    // The simulator's limits are tested below; here the client does not pace itself.
    perTwoSeconds: 0,
    rateLimitWaitMs: 5,
    sleep: fastSleep,
    ...extra,
  });
}

let counter = 0;

function crmOf(sim: PipedriveSimulator) {
  if (!sim.crm) throw new Error('the simulator was not seeded');
  return sim.crm;
}

describe('Pipedrive values and helpers (pure)', () => {
  const enumField: PipedriveField = {
    remoteId: 'a'.repeat(40),
    name: 'Lead source',
    fieldType: 'single_select',
    readOnly: false,
    kind: 'custom',
    pipedriveType: 'enum',
    options: [
      { id: 11, label: 'Website' },
      { id: 12, label: 'Referral' },
    ],
  };
  const setField: PipedriveField = { ...enumField, fieldType: 'multi_select', pipedriveType: 'set' };

  it('reads option ids as labels and writes labels back as ids', () => {
    expect(toCanonical(enumField, 12)).toBe('Referral');
    expect(fromCanonical(enumField, 'referral')).toBe(12);
    expect(toCanonical(setField, [12, 11])).toEqual(['Referral', 'Website']);
    expect(toCanonical(setField, '11,12')).toEqual(['Referral', 'Website']);
    expect(fromCanonical(setField, ['Website', 'Referral'])).toEqual([11, 12]);
    expect(toCanonical(setField, [])).toBeNull();
    expect(() => fromCanonical(enumField, 'Billboard')).toThrow(/not one of its options/);
  });

  it('converts numbers, dates, monetary and address custom values', () => {
    const num: PipedriveField = { ...enumField, fieldType: 'number', pipedriveType: 'double', options: [] };
    expect(toCanonical(num, 42.5)).toBe('42.5');
    expect(fromCanonical(num, '42.5')).toBe(42.5);
    expect(() => fromCanonical(num, 'lots')).toThrow(/not a number/);
    const money: PipedriveField = { ...num, pipedriveType: 'monetary' };
    expect(toCanonical(money, { value: 1200, currency: 'EUR' })).toBe('1200');
    const date: PipedriveField = { ...num, fieldType: 'date', pipedriveType: 'date' };
    expect(toCanonical(date, '2026-03-04')).toBe('2026-03-04');
    const address: PipedriveField = { ...num, fieldType: 'text', pipedriveType: 'address' };
    expect(toCanonical(address, { value: '1 Main St', locality: 'Springfield' })).toBe('1 Main St');
    const time: PipedriveField = { ...num, fieldType: 'datetime', kind: 'plain', pipedriveType: 'date' };
    expect(toCanonical(time, '2026-01-15 09:00:00')).toBe('2026-01-15T09:00:00.000Z');
  });

  it('replaces the primary email and keeps the others', () => {
    const list = [
      { value: 'old@x.com', primary: true, label: 'work' },
      { value: 'home@x.com', primary: false, label: 'home' },
    ];
    expect(withPrimary(list, 'new@x.com', 'work')).toEqual([
      { value: 'new@x.com', primary: true, label: 'work' },
      { value: 'home@x.com', primary: false, label: 'home' },
    ]);
    expect(withPrimary([], 'a@x.com', 'work')).toEqual([{ value: 'a@x.com', primary: true, label: 'work' }]);
    expect(withPrimary(list, null, 'work')).toEqual([{ value: 'home@x.com', primary: true, label: 'home' }]);
  });

  it('names standard fields as the account does and custom fields by name, not hash', () => {
    const fields = pipedriveFields('persons', [
      { key: 'name', name: 'Full name', field_type: 'varchar' },
      { key: 'email', name: 'E-mail', field_type: 'varchar' },
      { key: 'b'.repeat(40), name: 'Lead source', field_type: 'enum', options: [{ id: 1, label: 'Web' }] },
      { key: 'c'.repeat(40), name: 'Lead source', field_type: 'varchar' },
      { key: 'd'.repeat(40), name: 'Span', field_type: 'daterange' },
    ]);
    const by = (id: string) => fields.find((f) => f.remoteId === id);
    expect(by('name')?.name).toBe('Full name');
    expect(by('email')).toMatchObject({ name: 'E-mail', fieldType: 'email', readOnly: false });
    expect(by('b'.repeat(40))).toMatchObject({ name: 'Lead source', fieldType: 'single_select' });
    expect(by('c'.repeat(40))?.name).toBe('Lead source (cccccc)');
    expect(by('d'.repeat(40))).toBeUndefined();
    expect(by('id')?.readOnly).toBe(true);
    expect(by('update_time')?.readOnly).toBe(true);
  });

  it('reads organization and person links as linked records of their tables, and writes one id back', () => {
    const deals = pipedriveFields('deals', [
      { key: 'e'.repeat(40), name: 'Partner', field_type: 'org' },
      { key: 'f'.repeat(40), name: 'Sponsor', field_type: 'people' },
      { key: '1'.repeat(40), name: 'Reviewer', field_type: 'user' },
    ]);
    const by = (id: string) => deals.find((f) => f.remoteId === id) as PipedriveField;
    expect(by('org_id')).toMatchObject({ fieldType: 'relations', references: 'organizations' });
    expect(by('person_id')).toMatchObject({ fieldType: 'relations', references: 'persons' });
    expect(by('e'.repeat(40))).toMatchObject({ fieldType: 'relations', references: 'organizations' });
    expect(by('f'.repeat(40))).toMatchObject({ fieldType: 'relations', references: 'persons' });
    // Users are not a synced table: an owner stays an id.
    expect(by('1'.repeat(40))).toMatchObject({ fieldType: 'number' });
    expect(by('owner_id')).toMatchObject({ fieldType: 'number' });
    expect(by('owner_id').references).toBeUndefined();

    expect(toCanonical(by('org_id'), 12)).toEqual(['12']);
    expect(toCanonical(by('org_id'), { id: 12, name: 'Acme' })).toEqual(['12']);
    expect(toCanonical(by('org_id'), null)).toBeNull();
    expect(toCanonical(by('f'.repeat(40)), { value: 7, name: 'Ada' })).toEqual(['7']);
    expect(fromCanonical(by('org_id'), ['12'])).toBe(12);
    expect(fromCanonical(by('org_id'), [])).toBeNull();
    expect(fromCanonical(by('org_id'), null)).toBeNull();
    expect(() => fromCanonical(by('person_id'), ['1', '2'])).toThrow(/links one person, not 2/);
    expect(() => fromCanonical(by('org_id'), ['recXYZ'])).toThrow(/is not an id/);
  });

  it('names owners, pipelines and stages uniquely: a shared user name by email, a shared stage name by pipeline', () => {
    const options = (kind: 'users' | 'pipelines' | 'stages') =>
      choiceOptions(
        {
          users: [
            { id: 1, name: 'Alex', email: 'alex@a.example' },
            { id: 2, name: 'Alex', email: 'alex@b.example' },
            { id: 3, name: 'Sam', email: 'sam@a.example' },
          ],
          pipelines: [
            { id: 10, name: 'Sales' },
            { id: 11, name: 'Renewals' },
          ],
          stages: [
            { id: 102, name: 'Won over', pipeline_id: 10, order_nr: 2 },
            { id: 101, name: 'Qualified', pipeline_id: 10, order_nr: 1 },
            { id: 110, name: 'Qualified', pipeline_id: 11, order_nr: 1 },
            { id: 120, name: 'Orphan', pipeline_id: 99, order_nr: 1 },
          ],
        },
        kind,
      );
    expect(options('users')).toEqual([
      { id: 1, label: 'Alex (alex@a.example)' },
      { id: 2, label: 'Alex (alex@b.example)' },
      { id: 3, label: 'Sam' },
    ]);
    expect(options('pipelines')).toEqual([
      { id: 10, label: 'Sales' },
      { id: 11, label: 'Renewals' },
    ]);
    // In pipeline order, then stage order; a stage of a pipeline that is gone is left out.
    expect(options('stages')).toEqual([
      { id: 101, label: 'Qualified (Sales)' },
      { id: 102, label: 'Won over' },
      { id: 110, label: 'Qualified (Renewals)' },
    ]);
  });

  it('reads an owner, pipeline and stage id as its name and writes the name back as the id', () => {
    const deals = pipedriveFields('deals', [], {
      users: [{ id: 7, name: 'Sam Seller' }],
      pipelines: [{ id: 1, name: 'Sales' }],
      stages: [{ id: 3, name: 'Proposal Made', pipeline_id: 1 }],
    });
    const by = (id: string) => deals.find((f) => f.remoteId === id) as PipedriveField;
    for (const id of ['owner_id', 'pipeline_id', 'stage_id'])
      expect(by(id)).toMatchObject({ fieldType: 'single_select', kind: 'named' });
    expect(toCanonical(by('owner_id'), 7)).toBe('Sam Seller');
    expect(toCanonical(by('stage_id'), 3)).toBe('Proposal Made');
    expect(toCanonical(by('pipeline_id'), 1)).toBe('Sales');
    // An id that is not (or no longer) an option reads as the id: never as another name.
    expect(toCanonical(by('stage_id'), 99)).toBe('99');
    expect(fromCanonical(by('owner_id'), 'sam seller')).toBe(7);
    expect(fromCanonical(by('stage_id'), 'Proposal Made')).toBe(3);
    expect(fromCanonical(by('stage_id'), null)).toBeNull();
    expect(() => fromCanonical(by('stage_id'), 'Closing')).toThrow(/not one of its options.*Proposal Made/);
    // Without the lists (older callers), the ids stay numbers.
    expect(pipedriveFields('deals', []).find((f) => f.remoteId === 'stage_id')).toMatchObject({
      fieldType: 'number',
      kind: 'int',
    });
  });

  it('packs ids compactly and back', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => String(1000 + i * 3));
    const packed = packIds(ids);
    expect(packed.length).toBeLessThan(2000);
    expect([...unpackIds(packed)].sort()).toEqual([...ids].sort());
    expect(unpackIds('').size).toBe(0);
  });

  it("maps Pipedrive's errors: 401, 400 with its text, 429 by its own signal, the daily budget", () => {
    expect(mapPipedriveError(401, { success: false, error: 'unauthorized access' }).code).toBe(
      'auth_invalid',
    );
    const bad = mapPipedriveError(400, { success: false, error: 'name is required' });
    expect(bad.code).toBe('validation');
    expect(bad.userFacingMessage).toMatch(/name is required/);
    const burst = mapPipedriveError(
      429,
      { success: false, error: 'Request over limit' },
      new Headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2' }),
    );
    expect(burst).toMatchObject({ code: 'rate_limited', retryAfterMs: 2000 });
    const retryAfter = mapPipedriveError(429, {}, new Headers({ 'retry-after': '3' }));
    expect(retryAfter.retryAfterMs).toBe(3000);
    const now = Date.UTC(2026, 0, 15, 23, 0, 0);
    const daily = mapPipedriveError(
      429,
      { success: false, error: 'Daily API token budget exceeded' },
      new Headers({ 'x-daily-requests-left': '0' }),
      { now: () => now },
    );
    expect(daily.retryAfterMs).toBe(untilMidnightUtc(now));
    expect(daily.retryAfterMs).toBe(3_600_000);
  });
});

runConformanceSuite('Pipedrive (simulator)', async () => {
  const clock = new ManualClock();
  const sim = await startPipedriveSimulator({ clock, seed: { persons: 5 }, rateLimit: false });
  const make = (token: string) => connectorFor(sim, { apiToken: token });
  const connector = make(sim.token);
  const leadSource = crmOf(sim).fields.leadSource.key as string;
  const later = () => clock.advance(2_000);
  return {
    connector,
    tableId: 'persons',
    sampleFields: (): Fields => {
      counter += 1;
      return {
        email: `c${counter}@example.com`,
        name: `Conformance ${counter}`,
        [leadSource]: 'Referral',
      };
    },
    async seed(count) {
      const ids = Array.from({ length: count }, () => {
        counter += 1;
        return String(
          sim.create('persons', {
            name: `Seeded ${counter}`,
            emails: [{ value: `seeded${counter}@example.com`, primary: true, label: 'work' }],
          }).id,
        );
      });
      later();
      return ids;
    },
    async mutate(remoteId) {
      later();
      const option = crmOf(sim).fields.leadSource.options?.find((o) => o.label === 'Event')?.id;
      sim.update('persons', Number(remoteId), {
        name: 'Changed in Pipedrive',
        custom_fields: { [leadSource]: option },
      });
      later();
      return { name: 'Changed in Pipedrive', [leadSource]: 'Event' };
    },
    async remove(remoteId) {
      sim.remove('persons', Number(remoteId));
      later();
    },
    invalidFields: () => ({ email: `bad${++counter}@example.com`, name: 'Bad', [leadSource]: 'Billboard' }),
    async discover() {
      const port = createPipedrivePort({ apiUrl: sim.url, client: { perTwoSeconds: 0 } });
      return port.discoverSchema({ apiToken: sim.token }, String(sim.state.companyId));
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      return make('ffffffffffffffffffffffffffffffffffffffff');
    },
    close: () => sim.close(),
  };
});

describe('Pipedrive connector against the simulator', () => {
  let sim: PipedriveSimulator;
  let clock: ManualClock;
  let connector: PipedriveConnector;
  const person = (id: string) => sim.state.get('persons', Number(id));
  beforeAll(async () => {
    clock = new ManualClock();
    sim = await startPipedriveSimulator({ clock, rateLimit: false });
    connector = connectorFor(sim);
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('scans every person across pages (limit <= 500, Pipedrive cursor) to the end', async () => {
    for (let i = 0; i < 620; i++)
      sim.create('persons', {
        name: `Page ${i}`,
        emails: [{ value: `page${i}@example.com`, primary: true, label: 'work' }],
      });
    const total = sim.state.list('persons').filter((e) => !e.deleted).length;
    const { records, pages } = await readAll(connector, 'persons', null, 300);
    expect(records).toHaveLength(total);
    expect(new Set(records.map((r) => r.id)).size).toBe(total);
    expect(pages.length).toBe(Math.ceil(total / 300));
    const big = await readAll(connector, 'persons', null, 2000);
    expect(big.records).toHaveLength(total);
    const lists = sim.requestLog.entries.filter((e) => e.method === 'GET' && e.path === '/api/v2/persons');
    expect(lists.length).toBeGreaterThanOrEqual(Math.ceil(total / 500));
    expect(sim.requestLog.count({ status: 400 })).toBe(0);
  });

  it('reads an in-app edit and a delete incrementally (updated_since with an overlap, id sweep for deletes)', async () => {
    // The records made so far are older than the read's overlap.
    clock.advance(60_000);
    const scan = await readAll(connector, 'persons', null, 1000);
    clock.advance(60_000);
    const [a, b] = crmOf(sim).persons as [number, number];
    sim.update('persons', a, { name: 'Edited in Pipedrive' });
    sim.remove('persons', b);
    clock.advance(1_000);
    const next = await readAll(connector, 'persons', scan.cursor, 1000);
    expect(next.records.find((r) => r.id === String(a))?.fields.name).toBe('Edited in Pipedrive');
    expect(next.deletedIds).toEqual([String(b)]);
    expect(next.records.some((r) => r.id === String(b))).toBe(false);
    // Only the changes are listed, not the whole table.
    expect(next.records.length).toBeLessThan(5);
    // The next read reaches back the overlap before the previous one began: the edit comes again
    // (an echo the engine drops), the delete does not; one more read later finds nothing.
    clock.advance(120_000);
    const overlap = await readAll(connector, 'persons', next.cursor, 1000);
    expect(overlap.records.map((r) => r.id)).toEqual([String(a)]);
    expect(overlap.deletedIds).toEqual([]);
    clock.advance(120_000);
    const quiet = await readAll(connector, 'persons', overlap.cursor, 1000);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  it('reports a person deleted between the changes listing and the id sweep of one read, on the next read', async () => {
    const ownClock = new ManualClock();
    const own = await startPipedriveSimulator({ clock: ownClock, rateLimit: false });
    // Between the simulator and the connector: deletes `victim` the moment the read's id sweep
    // (sorted by id) asks for its first page, after the changes listing has returned the person.
    let victim: number | null = null;
    const proxy = createServer((req, res) => {
      if (victim !== null && req.url?.includes('sort_by=id')) {
        own.remove('persons', victim);
        victim = null;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length'),
      ) as Record<string, string>;
      void fetch(`${own.url}${req.url}`, { method: req.method, headers }).then(async (r) => {
        res.writeHead(r.status, Object.fromEntries(r.headers));
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const c = connectorFor(own, { baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      ownClock.advance(60_000);
      const scan = await readAll(c, 'persons', null, 1000);
      ownClock.advance(60_000);
      const target = crmOf(own).persons[0] as number;
      own.update('persons', target, { name: 'Edited just before its delete' });
      ownClock.advance(1_000);
      victim = target;
      const next = await readAll(c, 'persons', scan.cursor, 1000);
      expect(victim).toBeNull(); // the sweep ran, and the person was deleted in the middle of the read
      ownClock.advance(1_000);
      const after = await readAll(c, 'persons', next.cursor, 1000);
      expect([...next.deletedIds, ...after.deletedIds]).toContain(String(target));
      expect(after.records.some((r) => r.id === String(target))).toBe(false);
    } finally {
      proxy.close();
      await own.close();
    }
  });

  it('re-reads the overlap: an edit stamped in the second the previous read started is not missed', async () => {
    const scan = await readAll(connector, 'organizations', null, 100);
    // The edit lands in the same second as the read's start (update_time has whole seconds).
    const org = crmOf(sim).organizations[0] as number;
    sim.update('organizations', org, { name: 'Same second' });
    const next = await readAll(connector, 'organizations', scan.cursor, 100);
    expect(next.records.find((r) => r.id === String(org))?.fields.name).toBe('Same second');
  });

  it('reads a deleted deal as a delete from the status=deleted listing', async () => {
    const scan = await readAll(connector, 'deals', null, 500);
    clock.advance(30_000);
    const deal = crmOf(sim).deals[0] as number;
    sim.remove('deals', deal);
    clock.advance(1_000);
    const next = await readAll(connector, 'deals', scan.cursor, 500);
    expect(next.deletedIds).toContain(String(deal));
  });

  it('converts values both ways: custom enum and set by label, primary email and phone, numbers, links', async () => {
    const f = crmOf(sim).fields;
    if (!f) throw new Error('no seed');
    const fields = await connector.fieldsOf('persons');
    const byName = (n: string) => fields.find((x) => x.name === n);
    expect(byName('Lead source')).toMatchObject({ remoteId: f.leadSource.key, fieldType: 'single_select' });
    expect(byName('Interests')).toMatchObject({ remoteId: f.interests.key, fieldType: 'multi_select' });
    expect(fields.find((x) => x.remoteId === 'email')?.fieldType).toBe('email');
    // The organization is a linked record of Organizations (the entity type is the table's remote id).
    expect(fields.find((x) => x.remoteId === 'org_id')).toMatchObject({
      fieldType: 'relations',
      references: 'organizations',
    });
    const org = String(crmOf(sim).organizations[1]);
    const [created] = await connector.write('persons', [
      {
        kind: 'create',
        fields: {
          first_name: 'Vera',
          last_name: 'Values',
          email: 'Vera@Example.com',
          phone: '+1 555 0199',
          org_id: [org],
          [f.leadSource.key]: 'Event',
          [f.interests.key]: ['Reporting', 'Sync'],
          [f.preferredName.key]: 'V',
        },
        idempotencyKey: 'values-1',
      },
    ]);
    if (!created?.ok) throw new Error(JSON.stringify(created));
    // On the wire: ids and lists, as Pipedrive stores them.
    const stored = person(created.remoteId);
    expect(stored?.values.name).toBe('Vera Values');
    expect(stored?.values.emails).toEqual([{ value: 'vera@example.com', primary: true, label: 'work' }]);
    expect(stored?.values.org_id).toBe(Number(org));
    const opt = (field: typeof f.leadSource, label: string) =>
      field.options?.find((o) => o.label === label)?.id;
    expect(stored?.custom[f.leadSource.key]).toBe(opt(f.leadSource, 'Event'));
    expect([...((stored?.custom[f.interests.key] ?? []) as number[])].sort()).toEqual(
      [opt(f.interests, 'Reporting'), opt(f.interests, 'Sync')].sort(),
    );
    // Read back canonical.
    const [back] = await connector.readRecords('persons', [created.remoteId]);
    expect(back?.fields).toMatchObject({
      email: 'vera@example.com',
      phone: '+1 555 0199',
      org_id: [org],
      [f.leadSource.key]: 'Event',
      [f.interests.key]: ['Reporting', 'Sync'],
      [f.preferredName.key]: 'V',
    });
    // A second email added in Pipedrive survives Lockstep's change of the primary.
    sim.update('persons', Number(created.remoteId), {
      emails: [
        { value: 'vera@example.com', primary: true, label: 'work' },
        { value: 'vera@home.example', primary: false, label: 'home' },
      ],
    });
    const [updated] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: created.remoteId,
        fields: { email: 'vera.new@example.com', [f.interests.key]: null, org_id: null },
        idempotencyKey: 'values-2',
      },
    ]);
    expect(updated?.ok).toBe(true);
    // An emptied link clears the organization.
    expect(person(created.remoteId)?.values.org_id ?? null).toBeNull();
    expect(updated?.ok && updated.postImage?.fields.org_id).toBeNull();
    expect(person(created.remoteId)?.values.emails).toEqual([
      { value: 'vera.new@example.com', primary: true, label: 'work' },
      { value: 'vera@home.example', primary: false, label: 'home' },
    ]);
    expect(updated?.ok && updated.postImage?.fields[f.interests.key]).toBeNull();
  });

  it('syncs a deal owner, pipeline and stage by name: read, written back as ids, an in-app change read', async () => {
    const fields = await connector.fieldsOf('deals');
    const stage = fields.find((x) => x.remoteId === 'stage_id');
    expect(stage).toMatchObject({ fieldType: 'single_select', kind: 'named' });
    expect(stage?.options?.map((o) => o.label)).toEqual(sim.state.stages.map((s) => s.name));
    expect(fields.find((x) => x.remoteId === 'owner_id')?.options?.map((o) => o.label)).toEqual(
      sim.state.users.map((u) => u.name),
    );
    // Discovery offers the same names as the select's choices (what the engine checks values against).
    const port = createPipedrivePort({ apiUrl: sim.url, client: { perTwoSeconds: 0 } });
    const tables = await port.discoverSchema({ apiToken: sim.token }, String(sim.state.companyId));
    const discovered = tables
      .find((t) => t.remoteId === 'deals')
      ?.fields.find((f) => f.remoteId === 'stage_id');
    expect(discovered).toMatchObject({ fieldType: 'single_select' });
    expect(discovered?.options.choices).toEqual(sim.state.stages.map((s) => s.name));

    const [sam, alex] = [sim.state.users[1], sim.state.users[0]];
    if (!sam || !alex) throw new Error('no users');
    const [made] = await connector.write('deals', [
      {
        kind: 'create',
        fields: { title: 'Named deal', owner_id: sam.name, pipeline_id: 'Partnerships', stage_id: 'Signed' },
        idempotencyKey: 'named-1',
      },
    ]);
    if (!made?.ok) throw new Error(JSON.stringify(made));
    const deal = () => sim.state.get('deals', Number(made.remoteId));
    // On the wire, ids.
    expect(deal()?.values).toMatchObject({ owner_id: sam.id, pipeline_id: 2, stage_id: 6 });
    expect(made.postImage?.fields).toMatchObject({
      owner_id: sam.name,
      pipeline_id: 'Partnerships',
      stage_id: 'Signed',
    });
    // A stage of another pipeline moves the deal there (Pipedrive sets the pipeline from the stage).
    const [moved] = await connector.write('deals', [
      {
        kind: 'update',
        remoteId: made.remoteId,
        fields: { stage_id: 'Proposal Made', owner_id: alex.name },
        expected: { stage_id: 'Signed' },
        idempotencyKey: 'named-2',
      },
    ]);
    expect(moved?.ok).toBe(true);
    expect(deal()?.values).toMatchObject({ owner_id: alex.id, pipeline_id: 1, stage_id: 3 });
    // An unknown name fails that record alone, before anything is sent.
    const writes = sim.requestLog.count({ method: 'PATCH' });
    const [refusedStage] = await connector.write('deals', [
      { kind: 'update', remoteId: made.remoteId, fields: { stage_id: 'Closing' }, idempotencyKey: 'named-3' },
    ]);
    expect(refusedStage).toMatchObject({ ok: false, error: { code: 'validation' } });
    expect(sim.requestLog.count({ method: 'PATCH' })).toBe(writes);
    // A change made in Pipedrive reads as the new names.
    sim.update('deals', Number(made.remoteId), { stage_id: 4, owner_id: sam.id });
    const [back] = await connector.readRecords('deals', [made.remoteId]);
    expect(back?.fields).toMatchObject({
      owner_id: sam.name,
      pipeline_id: 'Sales',
      stage_id: 'Negotiations Started',
    });
  });

  it('fails one bad record alone with a clear message; the rest land', async () => {
    const f = crmOf(sim).fields;
    if (!f) throw new Error('no seed');
    const [x] = crmOf(sim).persons.slice(5, 6) as [number];
    const results = await connector.write('persons', [
      { kind: 'create', fields: { name: 'Good one', email: 'good1@example.com' }, idempotencyKey: 'b1' },
      {
        kind: 'create',
        fields: { name: 'Bad option', [f.leadSource.key]: 'Billboard' },
        idempotencyKey: 'b2',
      },
      { kind: 'create', fields: { email: 'noname@example.com' }, idempotencyKey: 'b3' },
      { kind: 'update', remoteId: '99999999', fields: { name: 'Nobody' }, idempotencyKey: 'b4' },
      { kind: 'update', remoteId: String(x), fields: { name: 'Good two' }, idempotencyKey: 'b5' },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, false, true]);
    const [, option, noName, missing] = results;
    if (option?.ok || noName?.ok || missing?.ok) throw new Error('expected failures');
    expect(option?.error).toMatchObject({ code: 'validation' });
    expect(option?.error.userFacingMessage).toMatch(/Lead source: "Billboard" is not one of its options/);
    expect(noName?.error.code).toBe('validation');
    expect(noName?.error.userFacingMessage).toMatch(/name is required/);
    expect(missing?.error.code).toBe('not_found');
    expect(person(String(x))?.values.name).toBe('Good two');
  });

  it('refuses an update or delete of a record changed since it was read (version_conflict with its current values)', async () => {
    const [x, y] = crmOf(sim).persons.slice(7, 9) as [number, number];
    const before = (await connector.readRecords('persons', [String(x), String(y)])).map((r) => r.fields.name);
    sim.update('persons', x, { name: 'Edited in Pipedrive meanwhile' });
    sim.update('persons', y, { name: 'Also edited meanwhile' });
    const [r] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(x),
        fields: { name: 'From the other side' },
        expected: { name: before[0] ?? null },
        idempotencyKey: 'stale-1',
      },
    ]);
    expect(r?.ok).toBe(false);
    if (r && !r.ok) {
      expect(r.error.code).toBe('version_conflict');
      expect(r.current?.fields.name).toBe('Edited in Pipedrive meanwhile');
    }
    expect(person(String(x))?.values.name).toBe('Edited in Pipedrive meanwhile');
    const [ok] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(x),
        fields: { name: 'Now it lands' },
        expected: { name: 'Edited in Pipedrive meanwhile' },
        idempotencyKey: 'stale-2',
      },
    ]);
    expect(ok?.ok).toBe(true);
    expect(person(String(x))?.values.name).toBe('Now it lands');
    const [spared] = await connector.write('persons', [
      {
        kind: 'delete',
        remoteId: String(y),
        expected: { name: before[1] ?? null },
        idempotencyKey: 'stale-3',
      },
    ]);
    expect(spared?.ok).toBe(false);
    expect(person(String(y))?.deleted).toBe(false);
  });

  it('rides out a 429 storm on writes: nothing lost, nothing doubled', async () => {
    const storm = createPipedriveConnector({
      apiToken: sim.token,
      baseUrl: sim.url,
      perTwoSeconds: 0,
      sleep: fastSleep,
      maxAttempts: 4,
    });
    const before = sim.state.list('persons').filter((e) => !e.deleted).length;
    const log429 = sim.requestLog.count({ status: 429 });
    // The storm starts after two creates landed, with more 429s than one request's attempts: the
    // write stops (the runtime retries the chunk), and the retry with the same idempotency keys
    // creates only what is missing.
    const original = globalThis.fetch;
    let posted = 0;
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await original(input, init);
      if (init?.method === 'POST' && res.status === 200 && ++posted === 2)
        sim.faults.next({ kind: 'rate_limit', count: 6, method: 'POST' });
      return res;
    }) as typeof fetch;
    const requests = Array.from({ length: 5 }, (_, i) => ({
      kind: 'create' as const,
      fields: { name: `Storm ${i}`, email: `storm${i}@example.com` },
      idempotencyKey: `storm-${i}`,
    }));
    const first = await storm
      .write('persons', requests)
      .catch((e: unknown) => e)
      .finally(() => {
        globalThis.fetch = original;
      });
    expect(first).toMatchObject({ code: 'rate_limited' });
    const results = await storm.write('persons', requests);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(sim.requestLog.count({ status: 429 }) - log429).toBe(6);
    const live = sim.state.list('persons').filter((e) => !e.deleted);
    expect(live.length - before).toBe(5);
    const emails = live.flatMap((e) => (e.values.emails as { value: string }[]).map((m) => m.value));
    for (let i = 0; i < 5; i++) expect(emails.filter((m) => m === `storm${i}@example.com`)).toHaveLength(1);
    // Updates retried through 429s land once, with the value asked for.
    sim.faults.next({ kind: 'rate_limit', count: 3, method: 'PATCH' });
    const id = (results[0] as { remoteId: string }).remoteId;
    const [u] = await storm.write('persons', [
      { kind: 'update', remoteId: id, fields: { name: 'After the storm' }, idempotencyKey: 'storm-u' },
    ]);
    expect(u?.ok).toBe(true);
    expect(person(id)?.values.name).toBe('After the storm');
  });

  it("paces under Pipedrive's burst window: x-ratelimit-remaining 0 makes the next request wait for the reset", async () => {
    const clock2 = new ManualClock();
    const limited = await startPipedriveSimulator({ clock: clock2, seed: false, rateLimit: { burst: 3 } });
    try {
      const waits: number[] = [];
      const c = createPipedriveConnector({
        apiToken: limited.token,
        baseUrl: limited.url,
        perTwoSeconds: 0,
        // The simulator's clock moves as the connector waits.
        sleep: async (ms) => {
          waits.push(ms);
          clock2.advance(ms);
        },
        now: () => clock2.now(),
      });
      for (let i = 0; i < 7; i++) await c.read('organizations', null, { pageSize: 10 });
      expect(limited.requestLog.count({ status: 429 })).toBe(0);
      expect(c.client.headerWaits).toBeGreaterThan(0);
      expect(waits.some((w) => w >= 1000)).toBe(true);
    } finally {
      await limited.close();
    }
  });
});
