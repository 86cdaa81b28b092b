import { createAttioConnector } from '@lockstep/connectors/attio';
import { startAttioSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/**
 * API efficiency against the Attio simulator with Attio's limits on (25 write and 100 read requests
 * per second, one record per write, 500 per query page): requests per record written (the issue's
 * target: <= 1.05) and read, and records per second against those ceilings.
 * LOCKSTEP_BENCH_SAAS_RECORDS sets the number of people written (default 500).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 500);
  const sim = await startAttioSimulator({ seed: false });
  try {
    const connector = createAttioConnector({ token: sim.token, baseUrl: sim.url });
    return await measureCrmEfficiency({
      app: 'Attio',
      connector,
      table: 'people',
      requestLog: sim.requestLog,
      records,
      create: (i) => ({ name: `Bench Person ${i}`, email_addresses: `bench${i}@example.com` }),
      edit: (i) => ({ job_title: `Engineer ${i}` }),
      targets: { write: 1.05, read: 0.01 },
      ceilings: { write: 25 },
      windowMs: 1_000,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
