import { createGoogleSheetsConnector } from '@lockstep/connectors/google-sheets';
import type { CanonicalValue } from '@lockstep/engine';
import { startGoogleSheetsSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';

/**
 * API efficiency against the Google Sheets simulator with Google's quotas on (60 read and 60 write
 * requests per minute per user): requests per synced row. Sheets writes many rows per request, so
 * the quota bounds requests, not rows; the figure to watch is requests per row against 1 / batch.
 * The connector starts cold (its first request learns the schema); the read is a full scan of what
 * was written, every row read once. LOCKSTEP_BENCH_SHEETS_ROWS sets the rows written (default 2000).
 */
export async function run(): Promise<BenchRow[]> {
  const rows = Number(process.env.LOCKSTEP_BENCH_SHEETS_ROWS ?? 5000);
  // Google's limit of 30,000 characters of developer metadata per sheet is on (the simulator's
  // default): row ids live in the hidden id column, so it no longer bounds the rows a sheet can sync.
  const sim = await startGoogleSheetsSimulator({ seed: { leads: 0 } });
  try {
    const connector = createGoogleSheetsConnector({
      spreadsheetId: sim.sales?.spreadsheetId as string,
      baseUrl: sim.url,
      driveBaseUrl: sim.url,
      oauthBaseUrl: sim.url,
      accessToken: sim.token,
    });
    const batch = connector.capabilities.batchSize;
    sim.requestLog.reset();
    const started = performance.now();
    for (let i = 0; i < rows; i += batch) {
      const requests = Array.from({ length: Math.min(batch, rows - i) }, (_, j) => ({
        kind: 'create' as const,
        idempotencyKey: `bench-${i + j}`,
        fields: { Name: `Bench ${i + j}`, Email: `bench${i + j}@example.com` } as Record<
          string,
          CanonicalValue
        >,
      }));
      const results = await connector.write('0', requests);
      if (results.some((r) => !r.ok)) throw new Error('a write failed');
    }
    const writeSeconds = (performance.now() - started) / 1000;
    const writeRequests = sim.requestLog.total;

    sim.requestLog.reset();
    const readStart = performance.now();
    let cursor: string | null = null;
    const ids = new Set<string>();
    let pages = 0;
    for (;;) {
      const page = await connector.read('0', cursor, { pageSize: 500 });
      pages += 1;
      for (const r of page.records) ids.add(r.id);
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    }
    const read = ids.size;
    if (read !== rows) throw new Error(`read ${read} distinct rows of ${rows}`);
    const readSeconds = (performance.now() - readStart) / 1000;
    const readRequests = sim.requestLog.total;
    const batches = Math.ceil(rows / batch);

    // Updates of every row, batch by batch (each batch tags its rows, checks them, writes through
    // the tags and untags: see the connector's header comment).
    sim.requestLog.reset();
    const updateStart = performance.now();
    const all = [...ids];
    for (let i = 0; i < all.length; i += batch) {
      const requests = all.slice(i, i + batch).map((id, j) => ({
        kind: 'update' as const,
        remoteId: id,
        idempotencyKey: `bench-u-${i + j}`,
        fields: { Name: `Renamed ${i + j}` } as Record<string, CanonicalValue>,
      }));
      const results = await connector.write('0', requests);
      if (results.some((r) => !r.ok)) throw new Error('an update failed');
    }
    const updateSeconds = (performance.now() - updateStart) / 1000;
    const updateRequests = sim.requestLog.total;
    return [
      {
        name: `Google Sheets writes, ${rows} rows: requests per row`,
        value: writeRequests / rows,
        unit: 'req/row',
        target: `<= ${(2.1 / batch).toFixed(4)} (2.1 / batch of ${batch}: the id column's read, then one batchUpdate)`,
        note: `${writeRequests} requests = ${(writeRequests / rows).toFixed(4)} req/row, ${(writeRequests / batches).toFixed(2)} per batch; ${sim.requestLog.count({ status: 429 })} answered 429, ${(rows / writeSeconds).toFixed(0)} rows/s`,
      },
      {
        name: `Google Sheets full read, ${read} rows: requests per row`,
        value: readRequests / read,
        unit: 'req/row',
        target: '<= 0.0022 (1.1 / page of 500)',
        note: `${readRequests} requests = ${(readRequests / read).toFixed(4)} req/row, ${(readRequests / pages).toFixed(2)} per page (${pages} pages); ${(read / readSeconds).toFixed(0)} rows/s`,
      },
      {
        name: `Google Sheets updates, ${all.length} rows: requests per row`,
        value: updateRequests / all.length,
        unit: 'req/row',
        target: `<= ${(5.1 / batch).toFixed(4)} (5.1 / batch of ${batch}: read, tag, check, write, untag)`,
        note: `${updateRequests} requests = ${(updateRequests / batches).toFixed(2)} per batch; ${sim.requestLog.count({ status: 429 })} answered 429, ${(all.length / updateSeconds).toFixed(0)} rows/s`,
      },
    ];
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
