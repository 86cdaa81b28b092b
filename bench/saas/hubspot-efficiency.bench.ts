import { createHubSpotConnector, HUBSPOT_PER_TEN_SECONDS } from '@lockstep/connectors/hubspot';
import { startHubSpotSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/**
 * API efficiency against the HubSpot simulator with HubSpot's limits on (100 requests per 10 s per
 * private app token, 100 inputs per batch, 100 records per list page): requests per record written
 * and read, and records per second against that ceiling. LOCKSTEP_BENCH_SAAS_RECORDS sets the
 * number of contacts written (default 40,000: 400 requests, four 10-second windows, so the first window's burst does not make the rate).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 40_000);
  const sim = await startHubSpotSimulator({ seed: false });
  try {
    const connector = createHubSpotConnector({ token: sim.token, baseUrl: sim.url });
    const perSecond = HUBSPOT_PER_TEN_SECONDS / 10;
    return await measureCrmEfficiency({
      app: 'HubSpot',
      connector,
      table: 'contacts',
      requestLog: sim.requestLog,
      records,
      create: (i) => ({ email: `bench${i}@example.com`, firstname: `Bench ${i}`, lastname: 'Contact' }),
      edit: (i) => ({ firstname: `Edited ${i}` }),
      // Batches of 100: one request per 100 records, plus the read each update batch makes first.
      targets: { write: 0.011, read: 0.011 },
      ceilings: { write: perSecond * 100, read: perSecond * 100 },
      windowMs: 10_000,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
