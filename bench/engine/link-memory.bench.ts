import type { Link } from '@lockstep/engine';
import { type BenchRow, runStandalone } from '../harness';

/** Heap held by one million links with a 10-field shadow, as the runtime holds a run's links. */
export async function run(): Promise<BenchRow[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc)
    return [
      { name: 'memory per million links', value: Number.NaN, unit: 'MiB', note: 'run with node --expose-gc' },
    ];
  gc();
  const before = process.memoryUsage().heapUsed;
  const links: Link[] = [];
  for (let n = 0; n < 1_000_000; n++) {
    const shadow: Link['shadow'] = {};
    for (let i = 0; i < 10; i++) {
      const v = i % 2 ? `v${n % 1000}` : String(n % 997);
      shadow[`m${i}`] = { l: v, r: v };
    }
    links.push({ id: `k${n}`, leftId: `L${n}`, rightId: `R${n}`, shadow, version: 1 });
  }
  gc();
  const mib = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  return [
    {
      name: 'memory per million links (10-field shadow)',
      value: mib,
      unit: 'MiB',
      note: `${links.length} links in memory`,
    },
  ];
}

await runStandalone(import.meta.url, run);
