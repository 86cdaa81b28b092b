import os from 'node:os';

export type BenchRow = { name: string; value: number; unit: string; target?: string; note?: string };

/** Median of several runs: machines here are shared and noisy, so one run proves little. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function timeIt(fn: () => void, repetitions = 5): number[] {
  const times: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times;
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} cores, ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

export function printTable(rows: BenchRow[]) {
  const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2));
  const lines = rows.map((r) => [r.name, `${fmt(r.value)} ${r.unit}`, r.target ?? '', r.note ?? '']);
  const widths = [0, 1, 2, 3].map((i) =>
    Math.max(...[['benchmark', 'result', 'target', 'note'], ...lines].map((l) => (l[i] as string).length)),
  );
  const row = (l: string[]) => `| ${l.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  console.log(row(['benchmark', 'result', 'target', 'note']));
  console.log(row(widths.map((w) => '-'.repeat(w))));
  for (const l of lines) console.log(row(l));
}

/** Runs a bench module's `run` when the file is executed directly. */
export async function runStandalone(url: string, run: () => Promise<BenchRow[]>) {
  if (process.argv[1] && url.endsWith(process.argv[1].split('/').pop() as string)) {
    console.log(machine());
    printTable(await run());
  }
}
