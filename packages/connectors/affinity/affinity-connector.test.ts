import type { CanonicalValue } from '@lockstep/engine';
import { type AffinitySimulator, ManualClock, startAffinitySimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { type AffinityConnector, createAffinityConnector } from './affinity-connector';
import { createAffinityPort } from './port';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(
  sim: AffinitySimulator,
  extra: Partial<Parameters<typeof createAffinityConnector>[0]> = {},
) {
  return createAffinityConnector({
    apiKey: sim.token,
    baseUrl: sim.url,
    // The simulator's limits are tested below; here the client does not pace itself.
    perMinute: 0,
    rateLimitWaitMs: 5,
    sleep: fastSleep,
    ...extra,
  });
}

let counter = 0;

function person(sim: AffinitySimulator, label: string): string {
  counter += 1;
  return String(
    sim.create('person', {
      first_name: label,
      last_name: `N${counter}`,
      emails: [`${label.toLowerCase()}${counter}@example.com`],
    }).id,
  );
}

function seedOf(sim: AffinitySimulator) {
  if (!sim.seed) throw new Error('the simulator was started without its seed');
  return sim.seed;
}

const fieldId = (sim: AffinitySimulator, name: string) => seedOf(sim).fields[name] as number;
const cell = (sim: AffinitySimulator, field: string, entityId: number, listEntryId: number | null = null) =>
  sim.state.cellValues(fieldId(sim, field), entityId, listEntryId).map((v) => v.value);

runConformanceSuite('Affinity (simulator)', async () => {
  const sim = await startAffinitySimulator({ idSeed: 1, seed: false, rateLimit: false });
  const make = (token: string) => connectorFor(sim, { apiKey: token });
  return {
    connector: make(sim.token),
    tableId: 'persons',
    sampleFields: (): Fields => {
      counter += 1;
      return {
        firstName: `Conformance ${counter}`,
        lastName: 'Person',
        primaryEmailAddress: `c${counter}@example.com`,
      };
    },
    async seed(count) {
      return Array.from({ length: count }, () => person(sim, 'Seeded'));
    },
    async mutate(remoteId) {
      sim.update('person', Number(remoteId), { last_name: 'Changed in Affinity' });
      return { lastName: 'Changed in Affinity' };
    },
    async remove(remoteId) {
      sim.remove('person', Number(remoteId));
    },
    invalidFields: () => ({ firstName: 'Bad', lastName: 'Email', primaryEmailAddress: 'not an email' }),
    async discover() {
      const port = createAffinityPort({ apiUrl: sim.url, client: { perMinute: 0 } });
      return port.discoverSchema({ apiKey: sim.token }, String(sim.state.tenant.id));
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      sim.addToken('affinity-revoked-key');
      sim.revokeToken('affinity-revoked-key');
      return make('affinity-revoked-key');
    },
    close: () => sim.close(),
  };
});

describe('Affinity connector against the simulator', () => {
  let sim: AffinitySimulator;
  let connector: AffinityConnector;
  beforeAll(async () => {
    sim = await startAffinitySimulator({ idSeed: 7, rateLimit: false });
    connector = connectorFor(sim);
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('checks the key and discovers persons, companies, opportunities and lists with canonical types', async () => {
    const port = createAffinityPort({ apiUrl: sim.url, client: { perMinute: 0 } });
    await expect(port.check({ apiKey: sim.token })).resolves.toBeDefined();
    const bad = await port.check({ apiKey: 'wrong-key' }).catch((e) => e);
    expect(bad.code).toBe('auth_invalid');
    expect(bad.userFacingMessage).toMatch(/API key/);
    const [base] = await port.listBases({ apiKey: sim.token });
    expect(base?.remoteId).toBe(String(sim.state.tenant.id));
    const tables = await port.discoverSchema({ apiKey: sim.token }, base?.remoteId as string);
    const { pipeline, portfolio } = seedOf(sim).lists;
    expect(tables.map((t) => t.remoteId)).toEqual(
      expect.arrayContaining([
        'persons',
        'companies',
        'opportunities',
        `list-${pipeline}`,
        `list-${portfolio}`,
      ]),
    );
    const byTable = (id: string) =>
      new Map(tables.find((t) => t.remoteId === id)?.fields.map((f) => [f.remoteId, f]));
    const persons = byTable('persons');
    expect(persons.get('primaryEmailAddress')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(persons.get('emailAddresses')?.readOnly).toBe(true);
    expect(persons.get(`field-${fieldId(sim, 'jobTitle')}`)).toMatchObject({
      fieldType: 'text',
      readOnly: false,
    });
    expect(persons.get('affinity-data-job-titles')).toMatchObject({ readOnly: true });
    const companies = byTable('companies');
    expect(companies.get(`field-${fieldId(sim, 'industry')}`)).toMatchObject({
      fieldType: 'multi_select',
      options: { choices: expect.arrayContaining(['Software', 'Fintech']) },
    });
    expect(companies.get('affinity-data-description')?.readOnly).toBe(true);
    const deals = byTable(`list-${pipeline}`);
    expect(deals.get(`field-${fieldId(sim, 'status')}`)).toMatchObject({
      fieldType: 'single_select',
      options: { choices: ['Lead', 'Qualified', 'Term Sheet', 'Won', 'Lost'] },
    });
    expect(deals.get(`field-${fieldId(sim, 'owners')}`)).toMatchObject({
      fieldType: 'relations',
      options: { relationTarget: 'persons' },
    });
    expect(deals.get('entityName')?.readOnly).toBe(false);
    expect(deals.get('createdAt')?.readOnly).toBe(true);
  });

  it('links persons to organizations and opportunities to persons and organizations: read, written through v1, changed in the app', async () => {
    const seed = seedOf(sim);
    // Discovery: linked-record fields naming the table they link to; organizations get no second side.
    const port = createAffinityPort({ apiUrl: sim.url, client: { perMinute: 0 } });
    const tables = await port.discoverSchema({ apiKey: sim.token }, String(sim.state.tenant.id));
    const fieldOf = (table: string, id: string) =>
      tables.find((t) => t.remoteId === table)?.fields.find((f) => f.remoteId === id);
    expect(fieldOf('persons', 'companies')).toMatchObject({
      name: 'Organizations',
      fieldType: 'relations',
      readOnly: false,
      options: { references: 'companies' },
    });
    expect(fieldOf('opportunities', 'persons')).toMatchObject({
      fieldType: 'relations',
      readOnly: false,
      options: { references: 'persons' },
    });
    expect(fieldOf('opportunities', 'companies')).toMatchObject({ options: { references: 'companies' } });
    expect(
      tables.find((t) => t.remoteId === 'companies')?.fields.some((f) => f.fieldType === 'relations'),
    ).toBe(false);

    // Read: a page of persons carries each one's organizations (the v2 association field, one request).
    const [o1, o2, o3] = seed.organizations.map(String) as [string, string, string];
    const p1 = Number(seed.persons[0]);
    const orgsOf = (id: number) => sim.state.person(id).organizationIds.map(String).sort();
    sim.requestLog.reset();
    const { records } = await readAll(connector, 'persons', null, 100);
    const first = records.find((r) => r.id === String(p1));
    expect(first?.fields.companies).toEqual(orgsOf(p1));
    expect(sim.requestLog.byPath()['GET /v2/persons']).toBe(Math.ceil(sim.state.persons.size / 100));
    const opps = await readAll(connector, 'opportunities', null, 100);
    const opp = sim.state.opportunity(seed.opportunities[0] as number);
    expect(opps.records.find((r) => r.id === String(opp.id))?.fields).toMatchObject({
      persons: opp.personIds.map(String),
      companies: opp.organizationIds.map(String),
      listId: String(opp.listId),
    });
    // One v1 listing request for every opportunity (up to its page size), not one per record.
    expect(sim.requestLog.byPath()['GET /opportunities']).toBe(1);

    // Write: a person made with two organizations, then moved to a third (v1 organization_ids).
    const [made] = await connector.write('persons', [
      {
        kind: 'create',
        fields: {
          firstName: 'Linda',
          lastName: 'Linked',
          primaryEmailAddress: 'linda@linked.example',
          companies: [o1, o2],
        },
        idempotencyKey: 'links-1',
      },
    ]);
    if (!made?.ok) throw new Error(JSON.stringify(made));
    const linda = Number(made.remoteId);
    expect(orgsOf(linda)).toEqual([o1, o2].sort());
    // Affinity keeps both sides: the organization lists the person too.
    expect(sim.state.organization(Number(o1)).personIds).toContain(linda);
    expect(made.postImage?.fields.companies).toEqual([o1, o2].sort());
    const [moved] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: made.remoteId,
        fields: { companies: [o3] },
        expected: { companies: [o2, o1] },
        idempotencyKey: 'links-2',
      },
    ]);
    expect(moved?.ok).toBe(true);
    expect(orgsOf(linda)).toEqual([o3]);
    expect(sim.state.organization(Number(o1)).personIds).not.toContain(linda);

    // Opportunities: made with a person and an organization, then their links replaced and emptied.
    const listId = String(seed.lists.pipeline);
    const [deal] = await connector.write('opportunities', [
      {
        kind: 'create',
        fields: { name: 'Linked deal', listId, persons: [made.remoteId], companies: [o2] },
        idempotencyKey: 'links-3',
      },
    ]);
    if (!deal?.ok) throw new Error(JSON.stringify(deal));
    const dealOf = () => sim.state.opportunity(Number(deal.remoteId));
    expect(dealOf()).toMatchObject({ personIds: [linda], organizationIds: [Number(o2)] });
    expect(deal.postImage?.fields).toMatchObject({ persons: [made.remoteId], companies: [o2] });
    const [relinked] = await connector.write('opportunities', [
      {
        kind: 'update',
        remoteId: deal.remoteId,
        fields: { persons: [String(p1), made.remoteId], companies: null },
        expected: { persons: [made.remoteId] },
        idempotencyKey: 'links-4',
      },
    ]);
    expect(relinked?.ok).toBe(true);
    expect(dealOf().personIds.sort((a, b) => a - b)).toEqual([p1, linda].sort((a, b) => a - b));
    expect(dealOf().organizationIds).toEqual([]);
    // A link to something that is not an id fails that record alone.
    const [bad] = await connector.write('opportunities', [
      { kind: 'update', remoteId: deal.remoteId, fields: { companies: ['acme'] }, idempotencyKey: 'links-5' },
    ]);
    expect(bad).toMatchObject({ ok: false, error: { code: 'validation' } });

    // Changed in the app: the next pass returns the person and the opportunity with their new links.
    const cursorPersons = (await readAll(connector, 'persons', null, 100)).cursor;
    const cursorOpps = (await readAll(connector, 'opportunities', null, 100)).cursor;
    sim.update('person', linda, { organization_ids: [Number(o1)] });
    sim.update('opportunity', Number(deal.remoteId), { organization_ids: [Number(o3)] });
    const persons2 = await readAll(connector, 'persons', cursorPersons, 100);
    expect(persons2.records.map((r) => [r.id, r.fields.companies])).toEqual([[made.remoteId, [o1]]]);
    const opps2 = await readAll(connector, 'opportunities', cursorOpps, 100);
    expect(opps2.records.map((r) => [r.id, r.fields.companies])).toEqual([[deal.remoteId, [o3]]]);
    // A stale expectation on a link is a conflict, not a silent overwrite.
    const [stale] = await connector.write('opportunities', [
      {
        kind: 'update',
        remoteId: deal.remoteId,
        fields: { companies: [o1] },
        expected: { companies: [o2] },
        idempotencyKey: 'links-6',
      },
    ]);
    expect(stale).toMatchObject({ ok: false, error: { code: 'version_conflict' } });
    expect(dealOf().organizationIds).toEqual([Number(o3)]);
  });

  it('converts values both ways: names, emails, dropdowns, ranked dropdowns, numbers, dates, people, locations', async () => {
    const { pipeline } = seedOf(sim).lists;
    const owner = String(seedOf(sim).users[0]);
    const table = `list-${pipeline}`;
    const status = `field-${fieldId(sim, 'status')}`;
    const amount = `field-${fieldId(sim, 'amount')}`;
    const owners = `field-${fieldId(sim, 'owners')}`;
    const close = `field-${fieldId(sim, 'closeDate')}`;
    const [made] = await connector.write(table, [
      {
        kind: 'create',
        idempotencyKey: 'conv-1',
        fields: {
          entityName: 'Big deal',
          [status]: 'Term Sheet',
          [amount]: '1250000.5',
          [owners]: [owner],
          [close]: '2026-06-30T00:00:00.000Z',
        },
      },
    ]);
    expect(made?.ok).toBe(true);
    if (!made?.ok) return;
    const entry = sim.state.listEntries.get(Number(made.remoteId));
    expect(entry).toBeDefined();
    const oppId = entry?.entityId as number;
    expect(sim.state.opportunity(oppId).name).toBe('Big deal');
    const statusField = sim.state.field(fieldId(sim, 'status'));
    const held = cell(sim, 'status', oppId, entry?.id ?? null);
    expect(statusField.dropdownOptions.find((o) => o.id === held[0])?.text).toBe('Term Sheet');
    expect(cell(sim, 'amount', oppId, entry?.id ?? null)).toEqual([1250000.5]);
    expect(cell(sim, 'owners', oppId, entry?.id ?? null)).toEqual([Number(owner)]);
    expect(made.postImage?.fields).toMatchObject({
      entityName: 'Big deal',
      [status]: 'Term Sheet',
      [amount]: '1250000.5',
      [owners]: [owner],
      [close]: '2026-06-30T00:00:00.000Z',
      entity: [String(oppId)],
    });

    // Companies: a multi-value dropdown is the whole set; a number.
    const industry = `field-${fieldId(sim, 'industry')}`;
    const employees = `field-${fieldId(sim, 'employees')}`;
    const org = seedOf(sim).organizations[0] as number;
    for (const set of [['Fintech', 'Software'], ['Fintech', 'Software'], ['Energy']]) {
      const [r] = await connector.write('companies', [
        {
          kind: 'update',
          remoteId: String(org),
          fields: { [industry]: set, [employees]: '42' },
          idempotencyKey: `ind-${set.length}`,
        },
      ]);
      expect(r?.ok && r.postImage?.fields).toMatchObject({ [industry]: [...set].sort(), [employees]: '42' });
    }
    expect(cell(sim, 'industry', org)).toHaveLength(1);

    // Persons: names, primary email, a location, a text field; read back as written.
    const location = `field-${fieldId(sim, 'personLocation')}`;
    const job = `field-${fieldId(sim, 'jobTitle')}`;
    const [p] = await connector.write('persons', [
      {
        kind: 'create',
        idempotencyKey: 'conv-p',
        fields: {
          firstName: 'Ada',
          lastName: 'Lovelace',
          primaryEmailAddress: 'ada@example.com',
          [job]: 'Analyst',
          [location]: { json: { city: 'London', country: 'United Kingdom' } },
        },
      },
    ]);
    expect(p?.ok).toBe(true);
    if (!p?.ok) return;
    const [back] = await connector.readRecords('persons', [p.remoteId]);
    expect(back?.fields).toMatchObject({
      firstName: 'Ada',
      lastName: 'Lovelace',
      primaryEmailAddress: 'ada@example.com',
      emailAddresses: ['ada@example.com'],
      [job]: 'Analyst',
      [location]: { json: { city: 'London', country: 'United Kingdom' } },
    });
    expect(sim.state.person(Number(p.remoteId)).emails).toEqual(['ada@example.com']);
  });

  it('writes a new primary email in place of the old one and keeps the other emails', async () => {
    const id = Number(person(sim, 'Multi'));
    sim.update('person', id, { emails: [...sim.state.person(id).emails, 'second@example.com'] });
    const [r] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(id),
        fields: { primaryEmailAddress: 'new.primary@example.com' },
        idempotencyKey: 'em-1',
      },
    ]);
    expect(r?.ok && r.postImage?.fields.primaryEmailAddress).toBe('new.primary@example.com');
    expect(sim.state.person(id).emails).toEqual(['new.primary@example.com', 'second@example.com']);
  });

  it('offers persons a writable Full name made of first and last name: read joined, written split, checked before write', async () => {
    const port = createAffinityPort({ apiUrl: sim.url, client: { perMinute: 0 } });
    const tables = await port.discoverSchema({ apiKey: sim.token }, String(sim.state.tenant.id));
    const field = (table: string) =>
      tables.find((t) => t.remoteId === table)?.fields.find((f) => f.remoteId === 'firstName+lastName');
    expect(field('persons')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
      options: { madeOf: ['firstName', 'lastName'] },
    });
    expect(field('companies')).toBeUndefined();

    const [made] = await connector.write('persons', [
      {
        kind: 'create',
        fields: { 'firstName+lastName': 'Mary Ann  Smith', primaryEmailAddress: 'mary.ann.fn@example.com' },
        idempotencyKey: 'full-name-1',
      },
    ]);
    expect(made?.ok && made.postImage?.fields['firstName+lastName']).toBe('Mary Ann Smith');
    const id = Number(made?.ok ? made.remoteId : 0);
    expect([sim.state.person(id).firstName, sim.state.person(id).lastName]).toEqual(['Mary Ann', 'Smith']);
    const [read] = await connector.readRecords('persons', [String(id)]);
    expect(read?.fields).toMatchObject({ 'firstName+lastName': 'Mary Ann Smith', firstName: 'Mary Ann' });

    // One word is a first name (Affinity requires one), the last name cleared; a last name written
    // in the same request wins over its part.
    const [renamed] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(id),
        fields: { 'firstName+lastName': 'Cher' },
        idempotencyKey: 'full-name-2',
      },
    ]);
    expect(renamed?.ok && renamed.postImage?.fields['firstName+lastName']).toBe('Cher');
    expect([sim.state.person(id).firstName, sim.state.person(id).lastName ?? null]).toEqual(['Cher', null]);
    const [both] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(id),
        fields: { 'firstName+lastName': 'Cher Bono', lastName: 'Sarkisian' },
        idempotencyKey: 'full-name-3',
      },
    ]);
    expect(both?.ok && both.postImage?.fields['firstName+lastName']).toBe('Cher Sarkisian');

    // A last name edited in Affinity since it was read: the full name's write is a conflict.
    sim.update('person', id, { last_name: 'Allman' });
    const [stale] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(id),
        fields: { 'firstName+lastName': 'Cherilyn Sarkisian' },
        expected: { 'firstName+lastName': 'Cher Sarkisian' },
        idempotencyKey: 'full-name-4',
      },
    ]);
    expect(stale).toMatchObject({
      ok: false,
      error: { code: 'version_conflict' },
      current: { fields: { 'firstName+lastName': 'Cher Allman' } },
    });
    expect(sim.state.person(id).lastName).toBe('Allman');
  });

  it('pages persons to the end, every record once, at most the page size per request', async () => {
    for (let i = 0; i < 130; i++) person(sim, 'Page');
    const small = connectorFor(sim, { queryPageSize: 25 });
    const total = sim.state.persons.size;
    const rec = sim.requestLog.total;
    const { records, pages } = await readAll(small, 'persons', null, 60);
    expect(records).toHaveLength(total);
    expect(new Set(records.map((r) => r.id)).size).toBe(total);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(total / 60));
    for (const p of pages) expect(p.records.length).toBeLessThanOrEqual(60);
    expect(sim.requestLog.total - rec).toBeGreaterThanOrEqual(Math.ceil(total / 25));
    const quiet = await readAll(small, 'persons', pages.at(-1)?.nextCursor ?? null, 60);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  it('reads an in-app edit (a name, a field value) and a delete incrementally, and only them', async () => {
    const small = connectorFor(sim, { queryPageSize: 40 });
    const scan = await readAll(small, 'persons', null, 500);
    const [named, valued, deleted] = (seedOf(sim).persons ?? []).slice(3, 6) as [number, number, number];
    sim.update('person', named, { first_name: 'Edited' });
    const [fv] = sim.state.cellValues(fieldId(sim, 'jobTitle'), valued, null);
    sim.update('fieldValue', fv?.id as number, { value: 'Edited title' });
    sim.remove('person', deleted);
    const next = await readAll(small, 'persons', scan.cursor, 500);
    expect(next.records.map((r) => r.id).sort()).toEqual([String(named), String(valued)].sort());
    expect(next.records.find((r) => r.id === String(named))?.fields.firstName).toBe('Edited');
    expect(
      next.records.find((r) => r.id === String(valued))?.fields[`field-${fieldId(sim, 'jobTitle')}`],
    ).toBe('Edited title');
    expect(next.deletedIds).toEqual([String(deleted)]);
    const quiet = await readAll(small, 'persons', next.cursor, 500);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  it('reads list entries incrementally: a field edited in the app, an entry removed', async () => {
    const { portfolio } = seedOf(sim).lists;
    const table = `list-${portfolio}`;
    const scan = await readAll(connector, table, null, 500);
    expect(scan.records.length).toBeGreaterThan(2);
    const [first, second] = scan.records.map((r) => ({ id: r.id })) as [{ id: string }, { id: string }];
    const e1 = sim.state.listEntries.get(Number(first.id));
    const [fv] = sim.state.cellValues(fieldId(sim, 'priority'), e1?.entityId as number, e1?.id as number);
    const low = sim.state.field(fieldId(sim, 'priority')).dropdownOptions.find((o) => o.text === 'Low')?.id;
    sim.update('fieldValue', fv?.id as number, { value: low === fv?.value ? 'High' : 'Low' });
    sim.remove('listEntry', Number(second.id), portfolio);
    const next = await readAll(connector, table, scan.cursor, 500);
    expect(next.records.map((r) => r.id)).toEqual([first.id]);
    expect(next.deletedIds).toEqual([second.id]);
  });

  it('fails one bad record alone in a batch, with a message for people; a taken email answers existingId', async () => {
    const taken = sim.state.person(seedOf(sim).persons[8] as number).emails[0] as string;
    const results = await connector.write('persons', [
      {
        kind: 'create',
        fields: { firstName: 'Good', lastName: 'One', primaryEmailAddress: 'good1@example.com' },
        idempotencyKey: 'b1',
      },
      {
        kind: 'create',
        fields: {
          firstName: 'Bad',
          lastName: 'Number',
          [`field-${fieldId(sim, 'personLocation')}`]: { json: {} },
        },
        idempotencyKey: 'b2',
      },
      { kind: 'update', remoteId: '99999999', fields: { firstName: 'Nobody' }, idempotencyKey: 'b3' },
      {
        kind: 'create',
        fields: { firstName: 'Dup', lastName: 'Email', primaryEmailAddress: taken },
        idempotencyKey: 'b4',
      },
      {
        kind: 'create',
        fields: { firstName: 'Good', lastName: 'Two', primaryEmailAddress: 'good2@example.com' },
        idempotencyKey: 'b5',
      },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, false, true]);
    const [, bad, missing, dup] = results;
    if (bad && !bad.ok) {
      expect(bad.error.code).toBe('validation');
      expect(bad.error.userFacingMessage).toMatch(/Affinity refused/);
    }
    if (missing && !missing.ok) expect(missing.error.code).toBe('not_found');
    if (dup && !dup.ok) {
      expect(dup.error.code).toBe('validation');
      expect(dup.existingId).toBe(String(seedOf(sim).persons[8]));
    }
    const emails = [...sim.state.persons.values()].flatMap((p) => p.emails);
    expect(emails.filter((e) => e === taken)).toHaveLength(1);
    // The refused value failed the item before anything was made.
    expect([...sim.state.persons.values()].some((p) => p.firstName === 'Bad')).toBe(false);
    expect(emails).toContain('good2@example.com');
  });

  it('refuses an update or delete of a record edited since it was read (version_conflict with its current values)', async () => {
    const [x, y] = (seedOf(sim).persons ?? []).slice(10, 12) as [number, number];
    const [bx, by] = await connector.readRecords('persons', [String(x), String(y)]);
    sim.update('person', x, { last_name: 'Edited in Affinity meanwhile' });
    sim.update('person', y, { first_name: 'Also edited' });
    const results = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(x),
        fields: { lastName: 'From the other side' },
        expected: { lastName: bx?.fields.lastName ?? null },
        idempotencyKey: 'stale-1',
      },
      {
        kind: 'delete',
        remoteId: String(y),
        expected: { firstName: by?.fields.firstName ?? null },
        idempotencyKey: 'stale-2',
      },
    ]);
    for (const r of results) expect(r.ok).toBe(false);
    const r = results[0];
    if (r && !r.ok) {
      expect(r.error.code).toBe('version_conflict');
      expect(r.current?.fields.lastName).toBe('Edited in Affinity meanwhile');
    }
    expect(sim.state.person(x).lastName).toBe('Edited in Affinity meanwhile');
    expect(sim.state.persons.has(y)).toBe(true);
    const [ok] = await connector.write('persons', [
      {
        kind: 'update',
        remoteId: String(x),
        fields: { lastName: 'From the other side' },
        expected: { lastName: 'Edited in Affinity meanwhile' },
        idempotencyKey: 'stale-3',
      },
    ]);
    expect(ok?.ok).toBe(true);
    expect(sim.state.person(x).lastName).toBe('From the other side');
  });

  it('deletes persons, companies and list entries (a replay of a delete is fine)', async () => {
    const p = person(sim, 'Gone');
    const { portfolio } = seedOf(sim).lists;
    const entry = [...sim.state.listEntries.values()].find((e) => e.listId === portfolio) as { id: number };
    const org = seedOf(sim).organizations.at(-1) as number;
    for (let i = 0; i < 2; i++) {
      expect(
        (await connector.write('persons', [{ kind: 'delete', remoteId: p, idempotencyKey: `d-${i}` }]))[0]
          ?.ok,
      ).toBe(true);
      expect(
        (
          await connector.write(`list-${portfolio}`, [
            { kind: 'delete', remoteId: String(entry.id), idempotencyKey: `e-${i}` },
          ])
        )[0]?.ok,
      ).toBe(true);
      expect(
        (
          await connector.write('companies', [
            { kind: 'delete', remoteId: String(org), idempotencyKey: `o-${i}` },
          ])
        )[0]?.ok,
      ).toBe(true);
    }
    expect(sim.state.persons.has(Number(p))).toBe(false);
    expect(sim.state.listEntries.has(entry.id)).toBe(false);
    expect(sim.state.organizations.has(org)).toBe(false);
  });
});

describe('Affinity connector under a 429 storm', () => {
  it("waits out Affinity's per-minute window by its headers: nothing lost, nothing doubled", async () => {
    // Affinity's real limit shape, tightened: 6 requests a minute per key; time is the simulator's
    // clock, which the client's sleep moves on (waiting out a reset is then instant). Another
    // process of the same user takes the whole window as it opens, three times over: the
    // connector's requests draw 429s with Affinity's headers, and it waits by them.
    const clock = new ManualClock();
    const sim = await startAffinitySimulator({ idSeed: 3, seed: false, clock, rateLimit: { perMinute: 6 } });
    const start = clock.now();
    let taken = 0;
    const otherProcess = async () => {
      for (let i = 0; i < 6; i++)
        await fetch(`${sim.url}/v2/persons?limit=1`, { headers: { authorization: `Bearer ${sim.token}` } });
    };
    try {
      const connector = createAffinityConnector({
        apiKey: sim.token,
        baseUrl: sim.url,
        // The client does not pace itself: every wait is Affinity's answer.
        perMinute: 0,
        maxAttempts: 20,
        now: () => clock.now(),
        sleep: async (ms) => {
          clock.advance(ms);
          if (taken++ < 3) await otherProcess();
        },
      });
      await otherProcess();
      const creates = Array.from({ length: 15 }, (_, i) => ({
        kind: 'create' as const,
        fields: { firstName: 'Storm', lastName: `No ${i}`, primaryEmailAddress: `storm${i}@example.com` },
        idempotencyKey: `storm-${i}`,
      }));
      const results = await connector.write('persons', creates);
      expect(results.every((r) => r.ok)).toBe(true);
      expect(sim.requestLog.count({ status: 429 })).toBeGreaterThanOrEqual(3);
      // 16 requests of the connector at 6 a minute, after three windows lost to the other process.
      expect(clock.now() - start).toBeGreaterThanOrEqual(5 * 60_000);
      const stored = [...sim.state.persons.values()].filter((p) => p.firstName === 'Storm');
      expect(stored).toHaveLength(15);
      expect(new Set(results.map((r) => (r.ok ? r.remoteId : ''))).size).toBe(15);
      const { records } = await readAll(connector, 'persons', null, 500);
      expect(records.filter((r) => r.fields.firstName === 'Storm')).toHaveLength(15);
      expect(records).toHaveLength(sim.state.persons.size);
    } finally {
      await sim.close();
    }
  }, 30_000);

  it('does not sleep through a used-up monthly budget: rate_limited with the wait until it resets', async () => {
    const sim = await startAffinitySimulator({ idSeed: 4, seed: false, rateLimit: { monthly: 2 } });
    try {
      const connector = createAffinityConnector({
        apiKey: sim.token,
        baseUrl: sim.url,
        perMinute: 0,
        maxRetryAfterMs: 60_000,
        sleep: fastSleep,
      });
      await connector.read('persons', null, { pageSize: 10 }).catch(() => undefined);
      const error = await readAll(connector, 'persons', null, 10).catch((e) => e);
      expect(error.code).toBe('rate_limited');
      expect(error.retryAfterMs).toBeGreaterThan(60_000);
      expect(error.userFacingMessage).toMatch(/monthly/);
    } finally {
      await sim.close();
    }
  });
});
