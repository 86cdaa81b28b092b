import { createStripeConnector } from '@lockstep/connectors/stripe';
import { startStripeSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/**
 * API efficiency against the Stripe simulator with Stripe's test-mode limits on (25 read and 25
 * write requests per second, one object per write, lists of 100): requests per customer written
 * and read, and customers per second against the write ceiling. LOCKSTEP_BENCH_SAAS_RECORDS sets
 * the number of customers written (default 300).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 300);
  const sim = await startStripeSimulator({ seed: false });
  try {
    const connector = createStripeConnector({ apiKey: sim.token, baseUrl: sim.url });
    return await measureCrmEfficiency({
      app: 'Stripe',
      connector,
      table: 'customers',
      requestLog: sim.requestLog,
      records,
      create: (i) => ({ email: `bench${i}@example.com`, name: `Bench Customer ${i}` }),
      edit: (i) => ({ name: `Edited Customer ${i}` }),
      targets: { write: 1.05, read: 0.011 },
      ceilings: { write: 25 },
      windowMs: 1_000,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
