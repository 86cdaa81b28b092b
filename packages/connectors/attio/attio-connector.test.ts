import type { CanonicalValue } from '@lockstep/engine';
import { type AttioSimulator, startAttioSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { type AttioConnector, createAttioConnector } from './attio-connector';
import { createAttioPort } from './port';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(sim: AttioSimulator, extra: Partial<Parameters<typeof createAttioConnector>[0]> = {}) {
  return createAttioConnector({
    token: sim.token,
    baseUrl: sim.url,
    // The simulator's limits are tested below; here the client does not pace itself.
    readsPerSecond: 0,
    writesPerSecond: 0,
    sleep: fastSleep,
    ...extra,
  });
}

let counter = 0;

/** People as the simulator's in-app edits make them. */
function person(sim: AttioSimulator, label: string) {
  counter += 1;
  return sim.create('people', {
    name: { first_name: label, last_name: `N${counter}`, full_name: `${label} N${counter}` },
    email_addresses: [`${label.toLowerCase()}${counter}@example.com`],
    job_title: 'Seeded',
  }).id;
}

const emailsOf = (sim: AttioSimulator, id: string) =>
  ((sim.read('people', id).values as Record<string, { email_address: string }[]>).email_addresses ?? []).map(
    (v) => v.email_address,
  );

runConformanceSuite('Attio (simulator)', async () => {
  const sim = await startAttioSimulator({ idSeed: 1, seed: false, rateLimit: false });
  const make = (token: string) => connectorFor(sim, { token });
  return {
    connector: make(sim.token),
    tableId: 'people',
    sampleFields: (): Fields => {
      counter += 1;
      return {
        email_addresses: `c${counter}@example.com`,
        name: `Conformance ${counter}`,
        job_title: 'Engineer',
      };
    },
    async seed(count) {
      return Array.from({ length: count }, () => person(sim, 'Seeded'));
    },
    async mutate(remoteId) {
      sim.update('people', remoteId, { job_title: 'Changed in Attio' });
      return { job_title: 'Changed in Attio' };
    },
    async remove(remoteId) {
      sim.remove('people', remoteId);
    },
    invalidFields: () => ({ email_addresses: `bad${++counter}@example.com`, phone_numbers: 'not a phone' }),
    async discover() {
      const port = createAttioPort({ apiUrl: sim.url, client: { readsPerSecond: 0, writesPerSecond: 0 } });
      return port.discoverSchema({ apiKey: sim.token }, sim.state.workspace.id);
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      sim.addToken('attio_revoked_key');
      sim.revokeToken('attio_revoked_key');
      return make('attio_revoked_key');
    },
    close: () => sim.close(),
  };
});

// A list is a table too: its entries, with the parent record as a linked record.
runConformanceSuite('Attio list (simulator)', async () => {
  const sim = await startAttioSimulator({ idSeed: 2, seed: false, rateLimit: false });
  const list = 'sales_pipeline';
  const actor = { type: 'workspace-member' as const, id: sim.member };
  const companies = ['Acme', 'Globex', 'Initech'].map((name) => sim.create('companies', { name }).id);
  const company = () => companies[counter % companies.length] as string;
  return {
    connector: connectorFor(sim),
    tableId: `list:${list}`,
    sampleFields: (): Fields => {
      counter += 1;
      return { parent_record: [company()], next_step: `Step ${counter}`, priority: 'High' };
    },
    async seed(count) {
      return Array.from({ length: count }, () => {
        counter += 1;
        return sim.addEntry(list, 'companies', company(), { next_step: `Seeded ${counter}` }).id;
      });
    },
    async mutate(remoteId) {
      sim.state.updateEntry(list, remoteId, { next_step: 'Changed in Attio' }, 'append', actor);
      return { next_step: 'Changed in Attio' };
    },
    async remove(remoteId) {
      sim.state.deleteEntry(list, remoteId, actor);
    },
    invalidFields: () => ({ parent_record: [company()], priority: 'Not an option' }),
    async discover() {
      const port = createAttioPort({ apiUrl: sim.url, client: { readsPerSecond: 0, writesPerSecond: 0 } });
      return port.discoverSchema({ apiKey: sim.token }, sim.state.workspace.id);
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      sim.addToken('attio_revoked_list_key');
      sim.revokeToken('attio_revoked_list_key');
      return connectorFor(sim, { token: 'attio_revoked_list_key' });
    },
    close: () => sim.close(),
  };
});

describe('Attio lists as tables', () => {
  let sim: AttioSimulator;
  let connector: AttioConnector;
  beforeAll(async () => {
    sim = await startAttioSimulator({ idSeed: 8, rateLimit: false });
    connector = connectorFor(sim);
  });
  afterAll(() => sim.close());

  it('discovers a list as a table named after it: its attributes and the parent record as a link to the parent table', async () => {
    const port = createAttioPort({ apiUrl: sim.url, client: { readsPerSecond: 0, writesPerSecond: 0 } });
    const tables = await port.discoverSchema({ apiKey: sim.token }, sim.state.workspace.id);
    const list = tables.find((t) => t.remoteId === 'list:sales_pipeline');
    expect(list).toMatchObject({
      name: 'Sales pipeline',
      extras: expect.objectContaining({ attioParentObject: 'companies' }),
    });
    expect(list?.extras).not.toHaveProperty('attioObjectId');
    const byId = new Map(list?.fields.map((f) => [f.remoteId, f]));
    expect(byId.get('parent_record')).toMatchObject({
      name: 'Parent company',
      fieldType: 'relations',
      readOnly: false,
      options: expect.objectContaining({ references: 'companies', required: true }),
    });
    expect(byId.get('stage')).toMatchObject({ fieldType: 'single_select' });
    expect(byId.get('priority')?.options.choices).toEqual(['Low', 'Medium', 'High']);
    expect(byId.get('amount')).toMatchObject({ fieldType: 'currency' });
    expect(byId.get('entry_id')?.readOnly).toBe(true);
    // A token that may not read lists still discovers the objects.
    sim.addToken('objects-only', ['record_permission:read', 'object_configuration:read']);
    const objectsOnly = await port.discoverSchema({ apiKey: 'objects-only' }, sim.state.workspace.id);
    expect(objectsOnly.map((t) => t.remoteId)).not.toContain('list:sales_pipeline');
    expect(objectsOnly.map((t) => t.remoteId)).toContain('companies');
  });

  it('reads entries with their parent, adds one to a record, updates it and refuses to move it', async () => {
    const { records } = await readAll(connector, 'list:sales_pipeline', null, 100);
    expect(records).toHaveLength(sim.state.queryableEntries('sales_pipeline').length);
    const seeded = sim.state.queryableEntries('sales_pipeline')[0];
    expect(records.find((r) => r.id === seeded?.id)?.fields).toMatchObject({
      parent_record: [seeded?.parentRecordId],
      next_step: expect.stringMatching(/^Call /),
    });

    const company = sim.state.queryableRecords('companies').at(-1)?.id as string;
    const [made] = await connector.write('list:sales_pipeline', [
      {
        kind: 'create',
        fields: { parent_record: [company], next_step: 'Send the proposal', priority: 'Medium' },
        idempotencyKey: 'list-entry-1',
      },
    ]);
    expect(made).toMatchObject({ ok: true });
    const id = (made as { remoteId: string }).remoteId;
    const entry = sim.state.entry('sales_pipeline', id);
    expect(entry).toMatchObject({ parentObject: 'companies', parentRecordId: company });
    expect((made as { postImage: { fields: Fields } }).postImage.fields).toMatchObject({
      parent_record: [company],
      next_step: 'Send the proposal',
      priority: 'Medium',
    });

    const [updated, moved] = await connector.write('list:sales_pipeline', [
      {
        kind: 'update',
        remoteId: id,
        fields: { next_step: 'Sign', parent_record: [company] },
        idempotencyKey: 'list-entry-2',
      },
      {
        kind: 'update',
        remoteId: id,
        fields: { parent_record: [sim.state.queryableRecords('companies')[0]?.id as string] },
        idempotencyKey: 'list-entry-3',
      },
    ]);
    expect(updated).toMatchObject({
      ok: true,
      postImage: { fields: expect.objectContaining({ next_step: 'Sign' }) },
    });
    expect(moved).toMatchObject({ ok: false, error: { code: 'validation' } });
    expect(sim.state.entry('sales_pipeline', id).parentRecordId).toBe(company);

    const [removed] = await connector.write('list:sales_pipeline', [
      { kind: 'delete', remoteId: id, idempotencyKey: 'list-entry-4' },
    ]);
    expect(removed).toMatchObject({ ok: true });
    expect(() => sim.state.entry('sales_pipeline', id)).toThrow();
  });
});

describe('Attio connector against the simulator', () => {
  let sim: AttioSimulator;
  let connector: AttioConnector;
  beforeAll(async () => {
    sim = await startAttioSimulator({ idSeed: 7, rateLimit: false });
    connector = connectorFor(sim);
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('discovers objects with canonical types, read-only attributes flagged, and choices', async () => {
    const port = createAttioPort({ apiUrl: sim.url, client: { readsPerSecond: 0, writesPerSecond: 0 } });
    const tables = await port.discoverSchema({ apiKey: sim.token }, sim.state.workspace.id);
    expect(tables.map((t) => t.remoteId)).toEqual([
      'companies',
      'people',
      'deals',
      'projects',
      'list:sales_pipeline',
    ]);
    const people = tables.find((t) => t.remoteId === 'people')!;
    const byId = new Map(people.fields.map((f) => [f.remoteId, f]));
    expect(byId.get('email_addresses')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(byId.get('name')).toMatchObject({ fieldType: 'text' });
    expect(byId.get('name.last_name')).toMatchObject({ fieldType: 'text' });
    expect(byId.get('record_id')?.readOnly).toBe(true);
    expect(byId.get('created_at')).toMatchObject({ fieldType: 'datetime', readOnly: true });
    expect(byId.get('first_email_interaction')?.readOnly).toBe(true);
    // A reference names its object's table (the api_slug, as tables are keyed), not Attio's object id.
    expect(byId.get('company')).toMatchObject({
      fieldType: 'relations',
      readOnly: false,
      options: expect.objectContaining({ references: 'companies' }),
    });
    const deals = tables.find((t) => t.remoteId === 'deals')!;
    const stage = deals.fields.find((f) => f.remoteId === 'stage');
    expect(stage).toMatchObject({ fieldType: 'single_select' });
    expect(stage?.options.choices).toEqual(['Lead', 'In Progress', 'Won 🎉', 'Lost']);
    expect(deals.fields.find((f) => f.remoteId === 'value')?.options).toMatchObject({ currencyCode: 'USD' });
  });

  it('converts values both ways: names, emails, selects, statuses, currency, dates, references', async () => {
    const company = sim.seed!.companies[0] as string;
    const [made] = await connector.write('deals', [
      {
        kind: 'create',
        idempotencyKey: 'conv-1',
        fields: {
          name: 'Big deal',
          stage: 'Won 🎉',
          value: { minor: '1234550', code: 'USD' },
          associated_company: [company],
        },
      },
    ]);
    expect(made?.ok).toBe(true);
    if (!made?.ok) return;
    const stored = sim.read('deals', made.remoteId).values as Record<string, Record<string, unknown>[]>;
    expect(stored.value?.[0]?.currency_value).toBe(12345.5);
    expect((stored.stage?.[0]?.status as { title: string } | undefined)?.title).toBe('Won 🎉');
    expect(stored.associated_company?.[0]?.target_record_id).toBe(company);
    const [back] = await connector.readRecords('deals', [made.remoteId]);
    expect(back?.fields).toMatchObject({
      name: 'Big deal',
      stage: 'Won 🎉',
      value: { minor: '1234550', code: 'USD' },
      associated_company: [company],
    });

    const [c] = await connector.write('companies', [
      {
        kind: 'create',
        idempotencyKey: 'conv-2',
        fields: {
          name: 'Typed Co',
          domains: 'typed.example',
          categories: ['SaaS', 'B2B'],
          employee_range: '11-50',
          is_customer: true,
          account_rating: '4',
          founded_on: '2020-02-29',
          last_reviewed_at: '2024-05-01T10:00:00.000Z',
        },
      },
    ]);
    expect(c?.ok && c.postImage?.fields).toMatchObject({
      name: 'Typed Co',
      domains: 'typed.example',
      categories: ['B2B', 'SaaS'],
      employee_range: '11-50',
      is_customer: true,
      account_rating: '4',
      founded_on: '2020-02-29',
      last_reviewed_at: '2024-05-01T10:00:00.000Z',
    });

    // A person read: the primary email, the name and its parts, the company reference.
    const p = sim.seed!.people[0] as string;
    const [read] = await connector.readRecords('people', [p]);
    const raw = sim.read('people', p).values as Record<string, Record<string, unknown>[]>;
    expect(read?.fields.email_addresses).toBe(raw.email_addresses?.[0]?.email_address);
    expect(read?.fields.name).toBe(raw.name?.[0]?.full_name);
    expect(read?.fields['name.first_name']).toBe(raw.name?.[0]?.first_name);
    expect(read?.fields.company).toEqual([raw.company?.[0]?.target_record_id]);
  });

  it('replaces multiselect lists (PUT) and keeps secondary emails: values never duplicate over rounds', async () => {
    const company = sim.seed!.companies[1] as string;
    for (const categories of [['SaaS', 'Retail'], ['SaaS', 'Retail'], ['Retail']]) {
      const [r] = await connector.write('companies', [
        {
          kind: 'update',
          remoteId: company,
          fields: { categories },
          idempotencyKey: `ms-${categories.length}`,
        },
      ]);
      expect(r?.ok && r.postImage?.fields.categories).toEqual([...categories].sort());
    }
    const stored = sim.read('companies', company).values as Record<string, unknown[]>;
    expect(stored.categories).toHaveLength(1);

    const p = person(sim, 'Multi');
    sim.update('people', p, { email_addresses: ['second@example.com'] }, 'append');
    const before = emailsOf(sim, p);
    expect(before).toHaveLength(2);
    const [u] = await connector.write('people', [
      {
        kind: 'update',
        remoteId: p,
        fields: { email_addresses: 'new.primary@example.com' },
        idempotencyKey: 'em-1',
      },
    ]);
    expect(u?.ok && u.postImage?.fields.email_addresses).toBe('new.primary@example.com');
    const after = emailsOf(sim, p);
    expect(after[0]).toBe('new.primary@example.com');
    expect(after).toContain(before[1]);
    expect(after).toHaveLength(2);
    // The same write again changes nothing (no address added twice).
    await connector.write('people', [
      {
        kind: 'update',
        remoteId: p,
        fields: { email_addresses: 'new.primary@example.com' },
        idempotencyKey: 'em-2',
      },
    ]);
    expect(emailsOf(sim, p)).toEqual(after);
  });

  it('pages the whole object to the end, every record once, at most the query page size per request', async () => {
    for (let i = 0; i < 230; i++) person(sim, 'Page');
    const small = connectorFor(sim, { queryPageSize: 50 });
    const total = sim.state.queryableRecords('people').length;
    const { records, pages } = await readAll(small, 'people', null, 120);
    expect(records).toHaveLength(total);
    expect(new Set(records.map((r) => r.id)).size).toBe(total);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(total / 120));
    for (const p of pages) expect(p.scanComplete).toBe(false);
  });

  it('reads an in-app edit and a delete incrementally, and only them', async () => {
    const small = connectorFor(sim, { queryPageSize: 40 });
    const scan = await readAll(small, 'people', null, 500);
    const [edited, deleted] = sim.seed!.people.slice(3, 5) as [string, string];
    sim.update('people', edited, { job_title: 'Edited in Attio' });
    sim.remove('people', deleted);
    const next = await readAll(small, 'people', scan.cursor, 500);
    expect(next.records.map((r) => r.id)).toEqual([edited]);
    expect(next.records[0]?.fields.job_title).toBe('Edited in Attio');
    expect(next.deletedIds).toEqual([deleted]);
    const quiet = await readAll(small, 'people', next.cursor, 500);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  it('never reports a record skipped by an offset shift as deleted (a delete earlier in the order mid-pass)', async () => {
    const small = connectorFor(sim, { queryPageSize: 20 });
    const scan = await readAll(small, 'people', null, 500);
    const ids = sim.state.queryableRecords('people').map((r) => r.id);
    const edited = ids[25] as string;
    sim.update('people', edited, { job_title: 'Edited during the pass' });
    // The pass reads its first page, then a record before the position is deleted: the rest shift.
    const first = await small.read('people', scan.cursor, { pageSize: 1 });
    expect(first.hasMore).toBe(true);
    sim.remove('people', ids[2] as string);
    const rest = await readAll(small, 'people', first.nextCursor, 500);
    const all = [...first.records, ...rest.records];
    expect(all.find((r) => r.id === edited)?.fields.job_title).toBe('Edited during the pass');
    // The record that moved into the place the pass had passed (the 41st) was not seen by the
    // pages; it is read by id and not reported deleted.
    expect(rest.deletedIds).toEqual([]);
    expect(sim.state.queryableRecords('people').map((r) => r.id)).toContain(ids[40]);
    // The delete itself happened after its page was read: the next pass reports it.
    const next = await readAll(small, 'people', rest.cursor, 500);
    expect(next.deletedIds).toEqual([ids[2]]);
    expect(next.records).toEqual([]);
  });

  it('fails one bad record alone in a batch, with a message for people', async () => {
    const results = await connector.write('people', [
      {
        kind: 'create',
        fields: { email_addresses: 'good1@example.com', name: 'Good One' },
        idempotencyKey: 'b1',
      },
      {
        kind: 'create',
        fields: { email_addresses: 'bad@example.com', phone_numbers: 'nope' },
        idempotencyKey: 'b2',
      },
      {
        kind: 'update',
        remoteId: '00000000-0000-4000-8000-000000000000',
        fields: { job_title: 'Nobody' },
        idempotencyKey: 'b3',
      },
      {
        kind: 'create',
        fields: { email_addresses: 'good2@example.com', name: 'Good Two' },
        idempotencyKey: 'b4',
      },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, true]);
    const bad = results[1]!;
    if (!bad.ok) {
      expect(bad.error.code).toBe('validation');
      expect(bad.error.userFacingMessage).toMatch(/Attio/);
    }
    const missing = results[2]!;
    if (!missing.ok) expect(missing.error.code).toBe('not_found');
  });

  it('refuses an update or delete of a record edited since it was read (version_conflict with its current values)', async () => {
    const [x, y] = sim.seed!.people.slice(6, 8) as [string, string];
    const [bx, by] = await connector.readRecords('people', [x, y]);
    sim.update('people', x, { job_title: 'Edited in Attio meanwhile' });
    sim.update('people', y, { job_title: 'Also edited meanwhile' });
    const results = await connector.write('people', [
      {
        kind: 'update',
        remoteId: x,
        fields: { job_title: 'From the other side' },
        expected: { job_title: bx?.fields.job_title ?? null },
        idempotencyKey: 'stale-1',
      },
      {
        kind: 'delete',
        remoteId: y,
        expected: { job_title: by?.fields.job_title ?? null },
        idempotencyKey: 'stale-2',
      },
    ]);
    for (const r of results) expect(r.ok).toBe(false);
    const r = results[0]!;
    if (!r.ok) {
      expect(r.error.code).toBe('version_conflict');
      expect(r.current?.fields.job_title).toBe('Edited in Attio meanwhile');
    }
    expect((sim.read('people', x).values as Record<string, { value: string }[]>).job_title?.[0]?.value).toBe(
      'Edited in Attio meanwhile',
    );
    // Spared: still there.
    expect(sim.read('people', y)).toBeDefined();
    // As expected now: written.
    const [ok] = await connector.write('people', [
      {
        kind: 'update',
        remoteId: x,
        fields: { job_title: 'From the other side' },
        expected: { job_title: 'Edited in Attio meanwhile' },
        idempotencyKey: 'stale-3',
      },
    ]);
    expect(ok?.ok).toBe(true);
  });

  it('asserts creates on the email: a create sent again updates the same person, never a second one', async () => {
    const fields = { email_addresses: 'assert.me@example.com', name: 'Assert Me' };
    const [a] = await connector.write('people', [{ kind: 'create', fields, idempotencyKey: 'as-1' }]);
    // Another process (no memory of the key) sends the same create again.
    const other = connectorFor(sim);
    const [b] = await other.write('people', [{ kind: 'create', fields, idempotencyKey: 'as-1' }]);
    expect(a?.ok && b?.ok && a.remoteId === b.remoteId).toBe(true);
    const same = sim.state
      .queryableRecords('people')
      .filter((r) => emailsOf(sim, r.id).includes('assert.me@example.com'));
    expect(same).toHaveLength(1);
    expect(
      sim.requestLog.count({ method: 'PUT', path: '/v2/objects/people/records' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it('writes a batch of 100 updates in at most 1.05 requests per record', async () => {
    const ids = sim.state
      .queryableRecords('people')
      .slice(0, 100)
      .map((r) => r.id);
    const scan = await connector.readRecords('people', ids);
    const before = sim.requestLog.total;
    const results = await connector.write(
      'people',
      scan.map((r, i) => ({
        kind: 'update' as const,
        remoteId: r.id,
        fields: { job_title: `Bulk ${i}` },
        expected: { job_title: r.fields.job_title ?? null },
        idempotencyKey: `bulk-${i}`,
      })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect((sim.requestLog.total - before) / 100).toBeLessThanOrEqual(1.05);
  });
});

describe('Attio connector under a 429 storm', () => {
  it("waits out Attio's Retry-After date: nothing lost, nothing doubled", async () => {
    // Attio's real limit shape, tightened: 5 writes per second; the client does not pace itself.
    const sim = await startAttioSimulator({
      idSeed: 3,
      seed: false,
      rateLimit: { readsPerSecond: 20, writesPerSecond: 5 },
    });
    try {
      const connector = createAttioConnector({
        token: sim.token,
        baseUrl: sim.url,
        readsPerSecond: 0,
        writesPerSecond: 0,
        maxAttempts: 20,
      });
      const creates = Array.from({ length: 15 }, (_, i) => ({
        kind: 'create' as const,
        fields: { email_addresses: `storm${i}@example.com`, name: `Storm ${i}` },
        idempotencyKey: `storm-${i}`,
      }));
      // Half of them without a unique value: plain POSTs, which must not be doubled by the retries.
      const plain = Array.from({ length: 10 }, (_, i) => ({
        kind: 'create' as const,
        fields: { name: `Plain ${i}`, job_title: 'No email' },
        idempotencyKey: `plain-${i}`,
      }));
      const results = await connector.write('people', [...creates, ...plain]);
      expect(results.every((r) => r.ok)).toBe(true);
      expect(sim.requestLog.count({ status: 429 })).toBeGreaterThan(0);
      const rows = sim.state.queryableRecords('people');
      expect(rows).toHaveLength(25);
      const ids = results.map((r) => (r.ok ? r.remoteId : ''));
      expect(new Set(ids).size).toBe(25);
      const { records } = await readAll(connector, 'people', null, 500);
      expect(records).toHaveLength(25);
    } finally {
      await sim.close();
    }
  }, 30_000);
});
