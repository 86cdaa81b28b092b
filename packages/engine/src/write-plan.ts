import type { WriteOp } from './reconcile';
import type { Side } from './types';

export type WriteBatch = { side: Side; kind: WriteOp['kind']; operations: WriteOp[] };

/**
 * Cuts a run's writes into batches of the connector's size, per side and kind: creates first (so
 * linked records exist before the records pointing at them are updated), then updates, then deletes.
 * Every operation keeps its idempotency key, so a retried batch never duplicates.
 */
export function planWrites(operations: WriteOp[], batchSize: { left: number; right: number }): WriteBatch[] {
  const batches: WriteBatch[] = [];
  for (const kind of ['create', 'update', 'delete'] as const) {
    for (const side of ['left', 'right'] as const) {
      const ops = operations.filter((o) => o.kind === kind && o.side === side);
      const size = Math.max(1, batchSize[side]);
      for (let i = 0; i < ops.length; i += size)
        batches.push({ side, kind, operations: ops.slice(i, i + size) });
    }
  }
  return batches;
}
