import { createSalesforceConnector } from '@lockstep/connectors/salesforce';
import { startSalesforceSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';

/**
 * API calls a Salesforce sync spends, against the simulator (Bulk API 2.0 jobs finish after 2 s as
 * by default; the org's daily API allocation counted as Salesforce counts it, `Sforce-Limit-Info`):
 * a first full scan of 100,000 contacts (a Bulk 2.0 query job, read in chunks of 50,000), 2,000
 * creates through one Bulk 2.0 ingest job, and 1,000 updates through `/composite/sobjects` in
 * batches of 200, each checked against a read just before. LOCKSTEP_BENCH_SAAS_RECORDS sets the
 * scanned contacts (default 100,000).
 */
export async function run(): Promise<BenchRow[]> {
  const scanned = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 100_000);
  const sim = await startSalesforceSimulator({
    seed: { accounts: 10, contacts: scanned, leads: 0, opportunities: 0, projects: 0 },
    rateLimit: { dailyApiRequests: 1_000_000 },
  });
  try {
    const connector = createSalesforceConnector({ token: sim.token, instanceUrl: sim.url, bulkPollMs: 500 });
    const rows: BenchRow[] = [];
    const measure = async (label: string, records: number, target: string, run: () => Promise<void>) => {
      sim.requestLog.reset();
      const started = performance.now();
      await run();
      const seconds = (performance.now() - started) / 1000;
      const calls = sim.requestLog.total;
      rows.push({
        name: `Salesforce ${label}, ${records.toLocaleString('en-US')} records: API calls`,
        value: calls,
        unit: 'calls',
        target,
        note: `${(calls / records).toFixed(5)} per record, ${seconds.toFixed(1)} s, ${sim.requestLog.count({ status: 403 })} refused`,
      });
    };

    let read = 0;
    await measure('first full scan (Bulk 2.0 query)', scanned, '"a handful, not thousands"', async () => {
      let cursor: string | null = null;
      for (;;) {
        const page = await connector.read('Contact', cursor, { pageSize: 2_000 });
        read += page.records.length;
        cursor = page.nextCursor;
        if (!page.hasMore || page.scanComplete) break;
      }
    });
    if (read < scanned) throw new Error(`read ${read} of ${scanned} contacts`);

    const creates = 2_000;
    const ids: string[] = [];
    await measure('creates (Bulk 2.0 ingest)', creates, '"a handful" (one ingest job)', async () => {
      const results = await connector.write(
        'Contact',
        Array.from({ length: creates }, (_, i) => ({
          kind: 'create' as const,
          idempotencyKey: `bench-${i}`,
          fields: { LastName: `Bench ${i}`, Email: `bench${i}@example.com` },
        })),
      );
      for (const r of results) {
        if (!r.ok) throw new Error(`a create failed: ${r.error.message}`);
        ids.push(r.remoteId);
      }
    });

    const updates = 1_000;
    await measure(
      'updates (composite, checked before write)',
      updates,
      '~1 per 200 written, plus the check and the post-image reads',
      async () => {
        for (let i = 0; i < updates; i += 200) {
          const results = await connector.write(
            'Contact',
            ids.slice(i, i + 200).map((id, j) => ({
              kind: 'update' as const,
              remoteId: id,
              idempotencyKey: `bench-update-${i + j}`,
              fields: { FirstName: `Edited ${i + j}` },
              expected: { LastName: `Bench ${i + j}` },
            })),
          );
          if (results.some((r) => !r.ok)) throw new Error('an update failed');
        }
      },
    );
    return rows;
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
