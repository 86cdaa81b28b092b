import { type BenchRow, machine, printTable } from './harness';

// `npm run bench`: every benchmark the landed code allows, one table. Figures never fail CI.
const modules = [
  './engine/reconcile.bench.ts',
  './engine/match.bench.ts',
  './engine/link-memory.bench.ts',
  './runtime/pg-first-sync.bench.ts',
  './runtime/pg-propagation-latency.bench.ts',
  './runtime/pg-bulk-propagation.bench.ts',
  './runtime/pg-capture-cost.bench.ts',
  './runtime/pg-scale-out.bench.ts',
  './runtime/bucardo-side-by-side.bench.ts',
  './saas/airtable-efficiency.bench.ts',
  './saas/notion-efficiency.bench.ts',
  './saas/google-sheets-efficiency.bench.ts',
  './saas/hubspot-efficiency.bench.ts',
  './saas/pipedrive-efficiency.bench.ts',
  './saas/attio-efficiency.bench.ts',
  './saas/salesforce-efficiency.bench.ts',
  './saas/affinity-efficiency.bench.ts',
  './saas/stripe-efficiency.bench.ts',
  './saas/memberstack-efficiency.bench.ts',
];

console.log(`Machine: ${machine()}\n`);
const rows: BenchRow[] = [];
for (const m of modules) {
  const mod = (await import(m)) as { run: () => Promise<BenchRow[]>; skipReason?: () => string | null };
  // A bench that needs software the machine may lack (Bucardo) says so and is left out.
  const skip = mod.skipReason?.();
  if (skip) {
    console.log(`${m} skipped: ${skip}`);
    continue;
  }
  rows.push(...(await mod.run()));
}
printTable(rows);
