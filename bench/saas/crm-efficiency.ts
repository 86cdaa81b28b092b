import type { TableConnector } from '@lockstep/connectors';
import type { CanonicalValue } from '@lockstep/engine';
import type { BenchRow } from '../harness';

/** What a simulator's request log tells a bench. */
type RequestLog = { total: number; reset(): void; count(filter: { status?: number }): number };

export type CrmEfficiencyInput = {
  app: string;
  connector: TableConnector;
  table: string;
  requestLog: RequestLog;
  records: number;
  /** The fields of the i-th record, and of its edit. */
  create: (i: number) => Record<string, CanonicalValue>;
  edit: (i: number) => Record<string, CanonicalValue>;
  /** Requests per record the write and read paths may spend (the issue's targets). */
  targets: { write: number; read: number };
  /**
   * Records per second the app's limits allow (the ceiling the connector paces under); a read
   * without one is too few requests to meet any limit, so only its cost is reported.
   */
  ceilings: { write: number; read?: number };
  /** The app's longest rate window: each phase starts with it empty, so none pays for the last. */
  windowMs: number;
  /** Extra per-phase notes (a token budget spent). */
  spent?: () => string;
};

/**
 * Creates, then edits (with `expected`, so check-before-write runs), then reads back whole, in
 * the batches the runtime hands the connector; counts requests per record and records per second
 * against the app's own ceiling, and 429s (none are injected, so any is the connector's fault).
 */
export async function measureCrmEfficiency(input: CrmEfficiencyInput): Promise<BenchRow[]> {
  const { app, connector, table, requestLog, records } = input;
  const batch = connector.capabilities.batchSize;
  // Discovery once, as a run does before its first write (not counted).
  await connector.read(table, null, { pageSize: 1 });

  const phase = async (run: () => Promise<number>) => {
    await new Promise((r) => setTimeout(r, input.windowMs));
    requestLog.reset();
    const spentBefore = input.spent?.() ?? '';
    const started = performance.now();
    const count = await run();
    const seconds = (performance.now() - started) / 1000;
    return {
      count,
      seconds,
      requests: requestLog.total,
      refused: requestLog.count({ status: 429 }),
      spent: input.spent ? `${spentBefore} -> ${input.spent()}` : '',
    };
  };

  const ids: string[] = [];
  const created = await phase(async () => {
    for (let i = 0; i < records; i += batch) {
      const n = Math.min(batch, records - i);
      const results = await connector.write(
        table,
        Array.from({ length: n }, (_, j) => ({
          kind: 'create' as const,
          idempotencyKey: `bench-create-${i + j}`,
          fields: input.create(i + j),
        })),
      );
      for (const r of results) {
        if (!r.ok) throw new Error(`${app}: a create failed: ${r.error.message}`);
        ids.push(r.remoteId);
      }
    }
    return records;
  });
  const updated = await phase(async () => {
    for (let i = 0; i < records; i += batch) {
      const n = Math.min(batch, records - i);
      const results = await connector.write(
        table,
        Array.from({ length: n }, (_, j) => ({
          kind: 'update' as const,
          remoteId: ids[i + j] as string,
          idempotencyKey: `bench-update-${i + j}`,
          fields: input.edit(i + j),
          expected: input.create(i + j),
        })),
      );
      if (results.some((r) => !r.ok)) throw new Error(`${app}: an update failed`);
    }
    return records;
  });
  const read = await phase(async () => {
    let cursor: string | null = null;
    let n = 0;
    for (;;) {
      const page = await connector.read(table, cursor, { pageSize: 500 });
      n += page.records.length;
      cursor = page.nextCursor;
      if (!page.hasMore || page.scanComplete) break;
    }
    return n;
  });

  const rows: BenchRow[] = [];
  const add = (label: string, p: Awaited<ReturnType<typeof phase>>, target: number, ceiling?: number) => {
    const rate = p.count / p.seconds;
    rows.push({
      name: `${app} ${label}, ${p.count} records: requests per record`,
      value: p.requests / p.count,
      unit: 'req/record',
      target: `<= ${target}`,
      note: `${p.requests} requests, ${p.refused} answered 429, ${p.seconds.toFixed(1)} s${p.spent ? `; ${p.spent}` : ''}`,
    });
    if (ceiling !== undefined)
      rows.push({
        name: `${app} ${label}, ${p.count} records: throughput`,
        value: rate,
        unit: 'records/s',
        target: `>= ${(0.9 * ceiling).toFixed(0)} (90% of ${ceiling})`,
        note: `${((rate / ceiling) * 100).toFixed(0)}% of the ceiling`,
      });
  };
  add('creates', created, input.targets.write, input.ceilings.write);
  add('updates (checked before write)', updated, input.targets.write, input.ceilings.write);
  add('full read', read, input.targets.read, input.ceilings.read);
  return rows;
}
