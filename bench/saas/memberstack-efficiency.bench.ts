import { createMemberstackConnector } from '@lockstep/connectors/memberstack';
import { startMemberstackSimulator } from '@lockstep/simulators';
import { type BenchRow, runStandalone } from '../harness';
import { measureCrmEfficiency } from './crm-efficiency';

/**
 * API efficiency against the Memberstack simulator with its limit on (25 requests per second per
 * key, one member per write, pages of 100): requests per member written and read, and members per
 * second against the ceiling. LOCKSTEP_BENCH_SAAS_RECORDS sets the number of members written
 * (default 300; the simulator's 50-member test-mode cap is lifted as in the sandbox).
 */
export async function run(): Promise<BenchRow[]> {
  const records = Number(process.env.LOCKSTEP_BENCH_SAAS_RECORDS ?? 300);
  const sim = await startMemberstackSimulator({ seed: false, sandboxMemberLimit: false });
  try {
    const connector = createMemberstackConnector({ secretKey: sim.token, baseUrl: sim.url });
    return await measureCrmEfficiency({
      app: 'Memberstack',
      connector,
      table: 'members',
      requestLog: sim.requestLog,
      records,
      create: (i) => ({ email: `bench${i}@example.com` }),
      edit: (i) => ({ 'metaData.note': `Edited ${i}` }),
      targets: { write: 1.05, read: 0.011 },
      ceilings: { write: 25 },
      windowMs: 1_000,
    });
  } finally {
    await sim.close();
  }
}

await runStandalone(import.meta.url, run);
