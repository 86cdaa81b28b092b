import { createAirtableConnector } from '@lockstep/connectors/airtable';
import { startAirtableSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';

/**
 * API efficiency against the Airtable simulator with Airtable's real limits switched on (5 requests
 * per second per base, 30 s lockout after a 429, 10 records per write, 100 per page): requests per
 * synced record against 1 / batch size, and records per second against the rate-limit ceiling.
 * LOCKSTEP_BENCH_SAAS_RECORDS sets the number of records written (default 300).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 300);
  // Records already there for the read (a full scan of many pages is paced, a few pages are not).
  const sim = await startAirtableSimulator({
    seed: { contacts: Number(process.env.LOCKSTEP_BENCH_SAAS_READ ?? 2700) },
  });
  try {
    const crm = sim.crm as NonNullable<typeof sim.crm>;
    const connector = createAirtableConnector({ token: sim.token, baseId: crm.baseId, baseUrl: sim.url });
    const fields = await connector.fieldsOf(crm.tables.contacts);
    const id = (name: string) => fields.find((f) => f.name === name)?.remoteId as string;
    const batch = connector.capabilities.batchSize;

    // Writes: the runtime hands the connector batches of its batch size.
    sim.requestLog.reset();
    const started = performance.now();
    for (let i = 0; i < records; i += batch) {
      const requests = Array.from({ length: Math.min(batch, records - i) }, (_, j) => ({
        kind: 'create' as const,
        idempotencyKey: `bench-${i + j}`,
        fields: { [id('Name')]: `Bench ${i + j}`, [id('Email')]: `bench${i + j}@example.com` },
      }));
      const results = await connector.write(crm.tables.contacts, requests);
      if (results.some((r) => !r.ok)) throw new Error('a write failed');
    }
    const writeSeconds = (performance.now() - started) / 1000;
    const writeRequests = sim.requestLog.total;
    const writes429 = sim.requestLog.count({ status: 429 });

    // Reads: a full scan in pages of 100.
    sim.requestLog.reset();
    const readStart = performance.now();
    let cursor: string | null = null;
    let read = 0;
    for (;;) {
      const page = await connector.read(crm.tables.contacts, cursor, { pageSize: 100 });
      read += page.records.length;
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    }
    const readSeconds = (performance.now() - readStart) / 1000;
    const readRequests = sim.requestLog.total;

    const ceilingWrite = 5 * batch; // records per second at 5 requests per second
    const ceilingRead = 5 * 100;
    return [
      {
        name: `Airtable writes, ${records} records: requests per record`,
        value: writeRequests / records,
        unit: 'req/record',
        target: `<= ${(1.1 / batch).toFixed(3)} (1.1 / batch of ${batch})`,
        note: `${writeRequests} requests, ${writes429} answered 429`,
      },
      {
        name: `Airtable writes, ${records} records: throughput`,
        value: records / writeSeconds,
        unit: 'records/s',
        target: `>= ${0.9 * ceilingWrite} (90% of ${ceilingWrite})`,
        note: `${((records / writeSeconds / ceilingWrite) * 100).toFixed(0)}% of the ceiling`,
      },
      {
        name: `Airtable full read, ${read} records: requests per record`,
        value: readRequests / read,
        unit: 'req/record',
        target: '<= 0.011 (1.1 / page of 100)',
        note: `${readRequests} requests (incl. metadata and the id sweep)`,
      },
      {
        name: `Airtable full read, ${read} records: throughput`,
        value: read / readSeconds,
        unit: 'records/s',
        target: `>= ${0.9 * ceilingRead} (90% of ${ceilingRead})`,
        note: `${((read / readSeconds / ceilingRead) * 100).toFixed(0)}% of the ceiling`,
      },
    ];
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
