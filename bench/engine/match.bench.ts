import { matchRecords, type RecordData } from '@lockstep/engine';
import { type BenchRow, median, runStandalone, timeIt } from '../harness';

const N = 100_000;

export async function run(): Promise<BenchRow[]> {
  const left: RecordData[] = [];
  const right: RecordData[] = [];
  for (let i = 0; i < N; i++) {
    left.push({ id: `L${i}`, fields: { email: `person${i}@example.com` } });
    // Half overlap, typed differently (case and spaces), as real data is.
    right.push({
      id: `R${i}`,
      fields: { email: i % 2 === 0 ? ` PERSON${i}@Example.com ` : `other${i}@example.com` },
    });
  }
  let pairs = 0;
  const ms = median(
    timeIt(() => {
      pairs = matchRecords({
        left,
        right,
        key: { leftFieldId: 'email', rightFieldId: 'email', type: 'email' },
      }).pairs.length;
    }, 5),
  );
  return [
    {
      name: `match ${N / 1000}k x ${N / 1000}k on email`,
      value: ms,
      unit: 'ms',
      target: '< 1,000 ms',
      note: `${pairs} pairs`,
    },
  ];
}

await runStandalone(import.meta.url, run);
