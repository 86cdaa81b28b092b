import { createWebflowConnector } from '@lockstep/connectors/webflow';
import { startWebflowSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/** Webflow's default limit: 60 requests a minute per token (CMS and Business plans: 120). */
const PER_MINUTE = 60;

/**
 * API efficiency against the Webflow simulator with Webflow's limit on (60 requests a minute, bulk
 * writes of up to 100 items, pages of 100): requests per CMS item written and read. A minute's
 * window is a burst for a run this size, so only the cost per item is reported.
 * LOCKSTEP_BENCH_SAAS_RECORDS sets the number of contacts written (default 500).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 500);
  const sim = await startWebflowSimulator({ seed: { companies: 1, contacts: 0, deals: 0 } });
  try {
    const connector = createWebflowConnector({ token: sim.token, baseUrl: sim.url, perMinute: PER_MINUTE });
    return await measureCrmEfficiency({
      app: 'Webflow',
      connector,
      table: sim.crm?.collections.contacts as string,
      requestLog: sim.requestLog,
      records,
      create: (i) => ({ name: `Bench Contact ${i}`, email: `bench${i}@example.com` }),
      edit: (i) => ({ 'job-title': `Engineer ${i}` }),
      targets: { write: 0.011, read: 0.011 },
      ceilings: { write: (PER_MINUTE / 60) * 100 },
      windowMs: 60_000,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
