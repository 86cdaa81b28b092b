import { createAffinityConnector } from '@lockstep/connectors/affinity';
import { startAffinitySimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/** The connector paces itself under Affinity's per-user limit: 900 requests a minute. */
const PER_MINUTE = 900;

/**
 * API efficiency against the Affinity simulator with Affinity's limits on (900 requests a minute
 * per user, a monthly allowance; one person per v1 write; v2 pages of 100): requests per record
 * written and read, and records per second against the per-minute ceiling.
 * LOCKSTEP_BENCH_SAAS_RECORDS sets the number of persons written (default 300).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 300);
  const sim = await startAffinitySimulator({ seed: false });
  try {
    const connector = createAffinityConnector({ apiKey: sim.token, baseUrl: sim.url, perMinute: PER_MINUTE });
    return await measureCrmEfficiency({
      app: 'Affinity',
      connector,
      table: 'persons',
      requestLog: sim.requestLog,
      records,
      create: (i) => ({
        firstName: `Bench ${i}`,
        lastName: 'Person',
        primaryEmailAddress: `bench${i}@example.com`,
      }),
      edit: (i) => ({ firstName: `Edited ${i}` }),
      targets: { write: 1.05, read: 0.011 },
      ceilings: { write: PER_MINUTE / 60 },
      windowMs: 60_000,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
