import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanonicalValue } from '@lockstep/engine';
import { type AirtableSimulator, startAirtableSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { type AirtableConnector, createAirtableConnector } from './airtable-connector';

type Fields = Record<string, CanonicalValue>;

/** Field ids of the seeded Contacts table, by name. */
async function contactFieldIds(
  connector: AirtableConnector,
  tableId: string,
): Promise<Record<string, string>> {
  const fields = await connector.fieldsOf(tableId);
  return Object.fromEntries(fields.map((f) => [f.name, f.remoteId]));
}

let counter = 0;

runConformanceSuite('Airtable (simulator)', async () => {
  // The simulator's 5 req/s limit is off here (pacing is tested below); faults inject 429s instead.
  const sim = await startAirtableSimulator({ seed: { contacts: 5 }, rateLimit: false });
  const crm = sim.crm!;
  const make = (token: string) =>
    createAirtableConnector({
      token,
      baseId: crm.baseId,
      baseUrl: sim.url,
      rateLimitWaitMs: 5,
      requestsPerSecond: 0,
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))),
      webhooks,
    });
  const webhooks: Record<string, { macSecretBase64: string; tableId?: string }> = {};
  const connector = make(sim.token);
  const ids = await contactFieldIds(connector, crm.tables.contacts);
  const name = ids.Name!;
  const email = ids.Email!;
  const status = ids.Status!;
  const sample = (): Fields => {
    counter += 1;
    return { [name]: `Conformance ${counter}`, [email]: `c${counter}@example.com`, [status]: 'Lead' };
  };
  return {
    connector,
    tableId: crm.tables.contacts,
    sampleFields: sample,
    async seed(count) {
      return Array.from({ length: count }, () => {
        counter += 1;
        return sim.createRecord(crm.baseId, crm.tables.contacts, { Name: `Seeded ${counter}` }).id;
      });
    },
    async mutate(remoteId) {
      sim.mutateRecord(crm.baseId, crm.tables.contacts, remoteId, {
        Name: 'Changed in Airtable',
        Status: 'Customer',
      });
      return { [name]: 'Changed in Airtable', [status]: 'Customer' };
    },
    async remove(remoteId) {
      sim.deleteRecord(crm.baseId, crm.tables.contacts, remoteId);
    },
    invalidFields: () => ({ [name]: 'Bad status', [status]: 'Not an option' }),
    async discover() {
      const tables = await connector.describe(true);
      return tables.map((t) => ({
        remoteId: t.id,
        fields: t.fields.map((f) => ({ remoteId: f.id, fieldType: f.type })),
      }));
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 503, count });
    },
    async badAuthConnector() {
      sim.state.tokens.add({
        token: 'patRevoked.x',
        scopes: ['data.records:read', 'data.records:write', 'schema.bases:read'],
        kind: 'pat',
        userId: 'usr',
      });
      const c = make('patRevoked.x');
      await c.describe(); // schema cached while the token still worked
      sim.revokeToken('patRevoked.x');
      return c;
    },
    webhook: {
      async deliver() {
        const received: { headers: Record<string, string>; body: string }[] = [];
        const server = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            received.push({
              headers: req.headers as Record<string, string>,
              body: Buffer.concat(chunks).toString('utf8'),
            });
            res.writeHead(200).end();
          });
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        try {
          const res = await fetch(`${sim.url}/v0/bases/${crm.baseId}/webhooks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              notificationUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
              specification: {
                options: { filters: { dataTypes: ['tableData'], recordChangeScope: crm.tables.contacts } },
              },
            }),
          });
          const hook = (await res.json()) as { id: string; macSecretBase64: string };
          webhooks[hook.id] = { macSecretBase64: hook.macSecretBase64, tableId: crm.tables.contacts };
          sim.createRecord(crm.baseId, crm.tables.contacts, { Name: 'Webhook trigger' });
          await sim.flushNotifications();
        } finally {
          server.close();
        }
        const delivery = received[0]!;
        return { ...delivery, expected: { tableRemoteId: crm.tables.contacts } };
      },
      verify: (headers, body) => connector.verifyWebhook(headers, body),
      parse: (headers, body) => connector.parseWebhook(headers, body),
    },
    close: () => sim.close(),
  };
});

describe('Airtable connector specifics', () => {
  let sim: AirtableSimulator;
  let connector: AirtableConnector;
  beforeAll(async () => {
    sim = await startAirtableSimulator();
    connector = createAirtableConnector({
      token: sim.token,
      baseId: sim.crm!.baseId,
      baseUrl: sim.url,
      rateLimitWaitMs: 5,
    });
  });
  afterAll(() => sim.close());

  it('reads canonical values: currency in minor units, percent as a fraction, links as ids, false checkbox', async () => {
    const { records } = await readAll(connector, sim.crm!.tables.deals, null, 100);
    const f = await connector.fieldsOf(sim.crm!.tables.deals);
    const id = (n: string) => f.find((x) => x.name === n)!.remoteId;
    const first = records.find((r) => r.id === sim.crm!.dealIds[0])!;
    expect(first.fields[id('Amount')]).toEqual({ minor: '500000', code: 'USD' });
    expect(first.fields[id('Probability')]).toBe('0.1');
    expect(first.fields[id('Won')]).toBe(false);
    expect(first.fields[id('Company')]).toEqual([sim.crm!.companyIds[0]]);
    expect(f.find((x) => x.name === 'Summary')!.readOnly).toBe(true);
  });

  it('paces itself under the 5 requests per second per base limit', async () => {
    sim.requestLog.reset();
    const started = Date.now();
    for (let i = 0; i < 12; i++) await connector.read(sim.crm!.tables.companies, null, { pageSize: 5 });
    expect(sim.requestLog.count({ status: 429 })).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it('splits writes into batches of 10 requests', async () => {
    await new Promise((r) => setTimeout(r, 1100)); // a fresh rate-limit window
    const f = await connector.fieldsOf(sim.crm!.tables.contacts);
    const name = f.find((x) => x.name === 'Name')!.remoteId;
    sim.requestLog.reset();
    const results = await connector.write(
      sim.crm!.tables.contacts,
      Array.from({ length: 23 }, (_, i) => ({
        kind: 'create' as const,
        fields: { [name]: `Batch ${i}` },
        idempotencyKey: `b-${i}`,
      })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(sim.requestLog.count({ method: 'POST', path: `/v0/${sim.crm!.baseId}/` })).toBe(3);
  });
});

describe('Airtable connector: a field deleted under a live sync', () => {
  it('reads with a schema at most a minute old, leaving the deleted field out (not read as emptied)', async () => {
    const sim = await startAirtableSimulator();
    let clock = Date.parse('2026-05-01T10:00:00Z');
    try {
      const connector = createAirtableConnector({
        token: sim.token,
        baseId: sim.crm!.baseId,
        baseUrl: sim.url,
        rateLimitWaitMs: 5,
        now: () => clock,
      });
      expect(connector.capabilities.recordsCarryEveryField).toBe(true);
      const table = sim.crm!.tables.contacts;
      const fields = await connector.fieldsOf(table);
      const email = fields.find((f) => f.name === 'Email')!.remoteId;
      const before = await connector.read(table, null, { pageSize: 100 });
      expect(before.records[0]?.fields).toHaveProperty(email);
      sim.state.deleteField(sim.crm!.baseId, table, email);
      // Within the minute the cached schema still lists it (Airtable gives no sign on read).
      clock += 61_000;
      const after = await connector.read(table, null, { pageSize: 100 });
      expect(after.records.length).toBeGreaterThan(0);
      for (const r of after.records) expect(r.fields).not.toHaveProperty(email);
    } finally {
      await sim.close();
    }
  });
});
