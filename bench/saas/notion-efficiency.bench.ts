import { createNotionConnector } from '@lockstep/connectors/notion';
import type { CanonicalValue } from '@lockstep/engine';
import { startNotionSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';

/**
 * API efficiency against the Notion simulator with Notion's limit on (an average of 3 requests per
 * second, 429 with Retry-After; one page per create, queries of 100): requests per synced record
 * and records per second against the ceiling. LOCKSTEP_BENCH_NOTION_RECORDS sets the records
 * written (default 30), LOCKSTEP_BENCH_NOTION_READ the pages seeded for the read (default 570).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_NOTION_RECORDS ?? 30);
  const sim = await startNotionSimulator({
    seed: { people: Number(process.env.LOCKSTEP_BENCH_NOTION_READ ?? 570) },
    autoDeliverWebhooks: false,
  });
  try {
    const ds = (sim.workspace as NonNullable<typeof sim.workspace>).peopleDataSourceId;
    const connector = createNotionConnector({ token: sim.token, baseUrl: sim.url });
    const fields = await connector.fieldsOf(ds);
    const id = (name: string) => fields.find((f) => f.name === name)?.remoteId as string;
    const batch = connector.capabilities.batchSize;

    sim.requestLog.reset();
    const started = performance.now();
    for (let i = 0; i < records; i += batch) {
      const requests = Array.from({ length: Math.min(batch, records - i) }, (_, j) => ({
        kind: 'create' as const,
        idempotencyKey: `bench-${i + j}`,
        fields: { [id('Name')]: `Bench ${i + j}`, [id('Email')]: `bench${i + j}@example.com` } as Record<
          string,
          CanonicalValue
        >,
      }));
      const results = await connector.write(ds, requests);
      if (results.some((r) => !r.ok)) throw new Error('a write failed');
    }
    const writeSeconds = (performance.now() - started) / 1000;
    const writeRequests = sim.requestLog.total;

    sim.requestLog.reset();
    const readStart = performance.now();
    let cursor: string | null = null;
    let read = 0;
    for (;;) {
      const page = await connector.read(ds, cursor, { pageSize: 100 });
      read += page.records.length;
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    }
    const readSeconds = (performance.now() - readStart) / 1000;
    const readRequests = sim.requestLog.total;
    const ceilingWrite = 3 * batch;
    const ceilingRead = 3 * 100;
    return [
      {
        name: `Notion writes, ${records} pages: requests per record`,
        value: writeRequests / records,
        unit: 'req/record',
        target: `<= ${(1.1 / batch).toFixed(2)} (1.1 / batch of ${batch})`,
        note: `${writeRequests} requests, ${sim.requestLog.count({ status: 429 })} answered 429`,
      },
      {
        name: `Notion writes, ${records} pages: throughput`,
        value: records / writeSeconds,
        unit: 'records/s',
        target: `>= ${(0.9 * ceilingWrite).toFixed(1)} (90% of ${ceilingWrite})`,
        note: `${((records / writeSeconds / ceilingWrite) * 100).toFixed(0)}% of the ceiling`,
      },
      {
        name: `Notion full read, ${read} pages: requests per record`,
        value: readRequests / read,
        unit: 'req/record',
        target: '<= 0.011 (1.1 / query of 100)',
        note: `${readRequests} requests`,
      },
      {
        name: `Notion full read, ${read} pages: throughput`,
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
