import { type AirtableSimulator, ManualClock, startAirtableSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAll } from '../sdk/conformance';
import { ConnectorError } from '../sdk/connector';
import { mapAirtableError } from './airtable-api';
import { createAirtableConnector, packIds, unpackIds } from './airtable-connector';
import { airtableApiUrl, createAirtablePort, createAirtableRuntimeConnector } from './port';

describe('Airtable error bodies', () => {
  it.each([
    [401, { error: { type: 'AUTHENTICATION_REQUIRED', message: 'Authentication required' } }, 'auth_invalid'],
    [403, { error: { type: 'INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND', message: 'x' } }, 'permission_denied'],
    [404, { error: 'NOT_FOUND' }, 'not_found'],
    [422, { error: { type: 'ROW_DOES_NOT_EXIST', message: 'Record not found' } }, 'not_found'],
    [
      422,
      { error: { type: 'INVALID_VALUE_FOR_COLUMN', message: 'Field "Status" cannot accept' } },
      'validation',
    ],
    [422, { error: { type: 'LIST_RECORDS_ITERATOR_NOT_AVAILABLE' } }, 'cursor_invalid'],
    [429, { errors: [{ error: 'RATE_LIMIT_REACHED', message: 'Rate limit exceeded' }] }, 'rate_limited'],
    [402, { error: { type: 'PUBLIC_API_BILLING_LIMIT_EXCEEDED' } }, 'permission_denied'],
    [503, 'Service Unavailable', 'transient'],
  ])('%i %j -> %s', (status, body, code) => {
    const error = mapAirtableError(status, body);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.code).toBe(code);
    expect(error.userFacingMessage).toMatch(/\S/);
  });

  it('keeps the refused value in the user-facing text', () => {
    expect(
      mapAirtableError(422, {
        error: { type: 'INVALID_VALUE_FOR_COLUMN', message: 'Field "Status" cannot accept' },
      }).userFacingMessage,
    ).toContain('Field "Status" cannot accept');
  });
});

describe('Airtable base URL of a connection', () => {
  it('honours a baseUrl item only for the sandbox or on a local server', () => {
    const sandbox = 'http://127.0.0.1:4000';
    expect(airtableApiUrl({}, { apiKey: 'pat' })).toBe('https://api.airtable.com');
    expect(airtableApiUrl({ apiUrl: 'http://sim:1/' }, { apiKey: 'pat' })).toBe('http://sim:1');
    expect(airtableApiUrl({ sandboxUrls: () => [sandbox] }, { baseUrl: `${sandbox}/` })).toBe(sandbox);
    expect(() =>
      airtableApiUrl({ sandboxUrls: () => [sandbox] }, { baseUrl: 'http://169.254.169.254' }),
    ).toThrow(expect.objectContaining({ code: 'permission_denied' }));
    expect(() =>
      airtableApiUrl(
        { allowCustomBaseUrl: true, sandboxUrls: () => [] },
        { baseUrl: sandbox, sandbox: 'true' },
      ),
    ).toThrow(expect.objectContaining({ code: 'auth_invalid' }));
    expect(airtableApiUrl({ allowCustomBaseUrl: true }, { baseUrl: 'http://localhost:9/' })).toBe(
      'http://localhost:9',
    );
  });

  it('packs id sets for cursors', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `rec${String(i).padStart(14, '0')}`);
    const packed = packIds(ids);
    expect(packed.length).toBeLessThan(ids.join(',').length);
    expect(unpackIds(packed)).toEqual(new Set(ids));
    expect(unpackIds(packIds([]))).toEqual(new Set());
  });
});

describe('Airtable port and runtime connector (simulator)', () => {
  let sim: AirtableSimulator;
  const settings = () => ({ apiUrl: sim.url, client: { rateLimitWaitMs: 5 } });
  beforeAll(async () => {
    sim = await startAirtableSimulator({ seed: { contacts: 8 } });
  });
  afterAll(() => sim.close());

  it('checks the token, lists bases and discovers tables with canonical types and read-only flags', async () => {
    const port = createAirtablePort(settings());
    await expect(port.check({ apiKey: sim.token })).resolves.toEqual({ accountEmail: null });
    await expect(port.check({ apiKey: 'patNope.x' })).rejects.toMatchObject({ code: 'auth_invalid' });
    await expect(port.check({})).rejects.toMatchObject({ code: 'auth_invalid' });
    const bases = await port.listBases({ apiKey: sim.token });
    expect(bases).toEqual([{ remoteId: sim.crm?.baseId, name: 'CRM' }]);
    const tables = await port.discoverSchema({ apiKey: sim.token }, sim.crm?.baseId as string);
    const deals = tables.find((t) => t.name === 'Deals');
    expect(deals?.remoteId).toBe(`${sim.crm?.baseId}/${sim.crm?.tables.deals}`);
    const f = (name: string) => deals?.fields.find((x) => x.name === name);
    expect(f('Amount')).toMatchObject({ fieldType: 'currency', readOnly: false });
    expect(f('Probability')).toMatchObject({ fieldType: 'number' });
    expect(f('Tags')).toMatchObject({
      fieldType: 'multi_select',
      options: expect.objectContaining({ choices: expect.arrayContaining(['SMB']) }),
    });
    expect(f('Won')).toMatchObject({ fieldType: 'boolean' });
    expect(f('Close Date')).toMatchObject({ fieldType: 'date' });
    expect(f('Company')).toMatchObject({
      fieldType: 'relations',
      options: expect.objectContaining({ references: `${sim.crm?.baseId}/${sim.crm?.tables.companies}` }),
    });
    expect(f('Contract')).toMatchObject({ fieldType: 'attachments' });
    expect(f('Deal ID')).toMatchObject({ fieldType: 'number', readOnly: true });
    expect(f('Summary')).toMatchObject({ fieldType: 'json', readOnly: true });
    expect(f('Last Modified')).toMatchObject({ fieldType: 'datetime', readOnly: true });
  });

  it('serves <base>/<table> remote ids and reports deletes found by the id sweep as events', async () => {
    const crm = sim.seed({ contacts: 5 });
    const runtime = createAirtableRuntimeConnector(settings(), { apiKey: sim.token });
    const table = `${crm.baseId}/${crm.tables.contacts}`;
    const scan = await readAll(runtime, table, null, 100);
    expect(scan.records).toHaveLength(5);
    expect(scan.pages.at(-1)?.scanComplete).toBe(true);
    const [a, b] = scan.records;
    sim.deleteRecord(crm.baseId, crm.tables.contacts, b?.id as string);
    const made = sim.createRecord(crm.baseId, crm.tables.contacts, { Name: 'Added' });
    const next = await readAll(runtime, table, scan.cursor, 100);
    expect(next.deletedIds).toEqual([b?.id]);
    expect(next.records.map((r) => r.id)).toContain(made.id);
    expect(next.pages.every((p) => !p.scanComplete)).toBe(true);
    // The new record is known from now on: its delete is found too; nothing is reported twice.
    sim.deleteRecord(crm.baseId, crm.tables.contacts, made.id);
    const after = await readAll(runtime, table, next.cursor, 100);
    expect(after.deletedIds).toEqual([made.id]);
    expect((await readAll(runtime, table, after.cursor, 100)).deletedIds).toEqual([]);
    const [written] = await runtime.write(table, [
      { kind: 'update', remoteId: a?.id as string, fields: {}, idempotencyKey: 'k1' },
    ]);
    expect(written?.ok).toBe(true);
  });

  it('restarts a read whose offset expired instead of failing', async () => {
    const clock = new ManualClock(Date.now());
    const short = await startAirtableSimulator({
      seed: { contacts: 7 },
      clock,
      iteratorTtlMs: 1_000,
      rateLimit: false,
    });
    try {
      const connector = createAirtableConnector({
        token: short.token,
        baseId: short.crm?.baseId as string,
        baseUrl: short.url,
        requestsPerSecond: 0,
      });
      const table = short.crm?.tables.contacts as string;
      const first = await connector.read(table, null, { pageSize: 3 });
      expect(first.hasMore).toBe(true);
      clock.advance(5_000);
      const again = await connector.read(table, first.nextCursor, { pageSize: 3 });
      expect(again.records).toHaveLength(3);
      const rest = await readAll(connector, table, again.nextCursor, 3);
      const ids = [...again.records, ...rest.records].map((r) => r.id);
      expect(new Set(ids).size).toBe(7);
      // An unreadable cursor is a full rescan, not a failure.
      const rescan = await connector.read(table, 'garbage', { pageSize: 100 });
      expect(rescan.records).toHaveLength(7);
      expect(rescan.scanComplete).toBe(true);
    } finally {
      await short.close();
    }
  });

  it('shares the 5 requests per second of a base between connectors of one process', async () => {
    sim.requestLog.reset();
    const crm = sim.crm as NonNullable<AirtableSimulator['crm']>;
    const make = () => createAirtableConnector({ token: sim.token, baseId: crm.baseId, baseUrl: sim.url });
    const [one, two] = [make(), make()];
    await one.describe();
    await two.describe();
    await new Promise((r) => setTimeout(r, 1200));
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? one : two).read(crm.tables.companies, null, { pageSize: 2 }),
      ),
    );
    expect(sim.requestLog.count({ status: 429 })).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });
});
