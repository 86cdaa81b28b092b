import {
  type ChangeSet,
  DEFAULT_MASS_DELETE,
  type FieldSpec,
  type Link,
  type RecordData,
  reconcile,
  type TableMappingSpec,
} from '@lockstep/engine';
import { type BenchRow, median, runStandalone, timeIt } from '../harness';

const FIELDS = 10;
const PAIRS = 200_000;

const spec = (side: string, i: number): FieldSpec => ({
  id: `${side}${i}`,
  name: `f${i}`,
  type: i % 3 === 0 ? 'number' : i % 3 === 1 ? 'text' : 'email',
});
const value = (i: number, n: number, changed: boolean) =>
  i % 3 === 0
    ? String(n * 7 + (changed ? 1 : 0))
    : i % 3 === 1
      ? `text ${n}${changed ? ' edited' : ''}`
      : `user${n}${changed ? 'x' : ''}@example.com`;

function setup(changedFraction: number, fullScan: boolean) {
  const mapping: TableMappingSpec = {
    id: 'bench',
    direction: 'both',
    fields: Array.from({ length: FIELDS }, (_, i) => ({
      id: `m${i}`,
      left: spec('l', i),
      right: spec('r', i),
      direction: 'both' as const,
    })),
    policy: {
      conflictWinner: 'left',
      conflictReview: false,
      deleteProtection: false,
      massDelete: DEFAULT_MASS_DELETE,
    },
  };
  const links: Link[] = [];
  const left: RecordData[] = [];
  const right: RecordData[] = [];
  const every = Math.max(1, Math.round(1 / changedFraction));
  for (let n = 0; n < PAIRS; n++) {
    const shadow: Link['shadow'] = {};
    const lf: Record<string, string> = {};
    const rf: Record<string, string> = {};
    const changed = n % every === 0;
    for (let i = 0; i < FIELDS; i++) {
      const v = value(i, n, false);
      shadow[`m${i}`] = { l: v, r: v };
      lf[`l${i}`] = value(i, n, changed && i === 1);
      rf[`r${i}`] = v;
    }
    links.push({ id: `k${n}`, leftId: `L${n}`, rightId: `R${n}`, shadow, version: 1 });
    if (fullScan || changed) left.push({ id: `L${n}`, fields: lf });
    if (fullScan) right.push({ id: `R${n}`, fields: rf });
  }
  const l: ChangeSet = { records: left, deletedIds: [], scanComplete: fullScan };
  const r: ChangeSet = { records: right, deletedIds: [], scanComplete: fullScan };
  return { mapping, links, l, r };
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const inc = setup(0.01, false);
  const ms = median(
    timeIt(() => reconcile({ mapping: inc.mapping, links: inc.links, left: inc.l, right: inc.r }), 5),
  );
  rows.push({
    name: `reconcile incremental, ${inc.l.records.length} changed of ${PAIRS / 1000}k links`,
    value: inc.l.records.length / (ms / 1000),
    unit: 'changed records/s',
    note: `${ms.toFixed(1)} ms`,
  });
  for (const fraction of [0.01, 0.1, 1]) {
    const s = setup(fraction, true);
    let ops = 0;
    const ms = median(
      timeIt(() => {
        ops = reconcile({ mapping: s.mapping, links: s.links, left: s.l, right: s.r }).operations.length;
      }, 5),
    );
    rows.push({
      name: `reconcile full scan, ${PAIRS / 1000}k pairs x ${FIELDS} fields, ${fraction * 100}% changed`,
      value: PAIRS / (ms / 1000),
      unit: 'pairs/s',
      target: '>= 200,000 pairs/s',
      note: `${ms.toFixed(0)} ms, ${ops} writes`,
    });
  }
  return rows;
}

await runStandalone(import.meta.url, run);
