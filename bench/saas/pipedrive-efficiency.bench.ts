import { createPipedriveConnector } from '@lockstep/connectors/pipedrive';
import { startPipedriveSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/** The connector paces itself for Pipedrive's smallest plan: 20 requests per rolling 2 s per token. */
const BURST = 20;

/**
 * API efficiency against the Pipedrive simulator with Pipedrive's limits on (a burst of 20 requests
 * per 2 s, as on the smallest plan; a daily token budget spent by endpoint weight; one person per
 * write; 500 per v2 list page): requests per record written and read, records per second against
 * the burst ceiling, and the daily tokens spent. LOCKSTEP_BENCH_SAAS_RECORDS sets the number of
 * persons written (default 200).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 200);
  const sim = await startPipedriveSimulator({ seed: false, rateLimit: { burst: BURST } });
  try {
    const connector = createPipedriveConnector({
      apiToken: sim.token,
      baseUrl: sim.url,
      perTwoSeconds: BURST,
    });
    const perSecond = BURST / 2;
    return await measureCrmEfficiency({
      app: 'Pipedrive',
      connector,
      table: 'persons',
      requestLog: sim.requestLog,
      records,
      create: (i) => ({ name: `Bench Person ${i}`, email: `bench${i}@example.com` }),
      edit: (i) => ({ name: `Edited Person ${i}` }),
      // One entity per write; the read before an update batch covers 100 ids.
      targets: { write: 1.05, read: 0.01 },
      ceilings: { write: perSecond },
      windowMs: 2_000,
      spent: () => `${sim.limiter.dailyLeft} daily tokens left`,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
