import { convertValue } from '../compatibility';
import {
  type ChangeSet,
  type Link,
  type ReconcileResult,
  reconcile,
  shadowAfterWrite,
  type TableMappingSpec,
  type WriteOp,
} from '../reconcile';
import type { CanonicalValue, RecordData, Side } from '../types';
import { normalizeValue, valuesEqual } from '../values';
import { planWrites } from '../write-plan';
import type { MemoryApp } from './memory-app';

export type RunOptions = {
  /** Full scans of both sides instead of incremental reads. */
  fullScan?: boolean;
  /** Lose every n-th record of a full scan (a page lost mid-scan). */
  losePageEvery?: number;
  /** Crash after this many writes, before their shadows and the cursors are stored. */
  crashAfterWrites?: number;
  /** Read from the previous cursors again (a replayed page or webhook). */
  replay?: boolean;
  /**
   * A user edit that lands on a side after the run read it and right before its first update
   * there, on that update's record (a stale read).
   */
  interleave?: { side: Side; fields: Record<string, CanonicalValue> };
};

/**
 * The runtime's loop in miniature, over two MemoryApps: read, reconcile, write in batches, store
 * post-images as shadows, then cursors — in that order, so a crash anywhere is recoverable.
 */
export class SyncSimulation {
  readonly links = new Map<string, Link>();
  private cursors: { left: number | null; right: number | null } = { left: null, right: null };
  private previous: { left: number | null; right: number | null } = { left: null, right: null };
  private linkSeq = 0;
  /** Writes recorded before calling the app; a crash leaves them here for the next run to finish first. */
  private pending = new Map<string, WriteOp>();
  last: ReconcileResult | null = null;
  /** Conflicts resolved by every run so far (rounds included), as the runtime records them. */
  readonly resolved: ReconcileResult['resolvedConflicts'] = [];

  constructor(
    readonly mapping: TableMappingSpec,
    readonly apps: { left: MemoryApp; right: MemoryApp },
    readonly batchSize = 3,
  ) {}

  /** Finishes creates a crash interrupted, with their idempotency keys, so their records get linked. */
  private recoverPending() {
    for (const op of this.pending.values()) {
      if (op.kind === 'create') this.applyWrite(op, true);
    }
    this.pending.clear();
  }

  /**
   * `recovering`: the replayed create returns the record as it is now, which may hold later user
   * edits; the shadow then takes what we wrote (intended), so those edits still count as changes.
   */
  private applyWrite(op: WriteOp, recovering = false) {
    const app = this.apps[op.side];
    if (op.kind === 'delete') {
      app.delete(op.remoteId);
      this.links.delete(op.linkId);
      return;
    }
    const post =
      op.kind === 'create' ? app.create(op.fields, op.idempotencyKey) : app.update(op.remoteId, op.fields);
    if (!post) return;
    const shadow = recovering ? op.intended : shadowAfterWrite(this.mapping, op, post);
    if (op.kind === 'create') {
      const existing = op.linkId ? this.links.get(op.linkId) : undefined;
      const link: Link = existing
        ? {
            ...existing,
            [op.side === 'left' ? 'leftId' : 'rightId']: post.id,
            shadow,
            version: existing.version + 1,
          }
        : {
            id: `link${++this.linkSeq}`,
            leftId: op.side === 'left' ? post.id : op.sourceId,
            rightId: op.side === 'right' ? post.id : op.sourceId,
            shadow,
            version: 1,
          };
      this.links.set(link.id, link);
    } else {
      const link = this.links.get(op.linkId);
      if (link) this.links.set(link.id, { ...link, shadow, version: link.version + 1 });
    }
  }

  run(options: RunOptions = {}): {
    crashed: boolean;
    result: ReconcileResult;
    reads: { left: ChangeSet; right: ChangeSet };
  } {
    this.recoverPending();
    const from = options.replay ? this.previous : this.cursors;
    const readAt = (side: Side) => (options.fullScan || from[side] === null ? null : from[side]);
    const endCursor = { left: this.apps.left.cursor, right: this.apps.right.cursor };
    const left = this.apps.left.read(readAt('left'), { dropEvery: options.losePageEvery });
    const right = this.apps.right.read(readAt('right'), { dropEvery: options.losePageEvery });
    const result = reconcile({
      mapping: this.mapping,
      links: [...this.links.values()],
      left,
      right,
      totalLinks: this.links.size,
    });
    this.last = result;
    let interleave = options.interleave ?? null;
    let writes = 0;
    let plan = result;
    // Rounds: updates refused because their record changed since it was read are reconciled again
    // with the record as it is now (the runtime's follow-ups), up to three times.
    for (let round = 0; round < 4; round++) {
      const stale: Extract<WriteOp, { kind: 'update' }>[] = [];
      this.resolved.push(...plan.resolvedConflicts);
      for (const batch of planWrites(plan.operations, { left: this.batchSize, right: this.batchSize })) {
        for (const op of batch.operations) {
          if (interleave && op.kind === 'update' && op.side === interleave.side) {
            this.apps[op.side].userUpdate(op.remoteId, interleave.fields);
            this.interleaved = { side: op.side, id: op.remoteId, fields: interleave.fields };
            interleave = null;
          }
          if (options.crashAfterWrites !== undefined && writes >= options.crashAfterWrites) {
            // The crash came after the app took the write: it is still pending for the next run.
            this.pending.set(op.idempotencyKey, op);
            const app = this.apps[op.side];
            if (op.kind === 'create') app.create(op.fields, op.idempotencyKey);
            else if (op.kind === 'update') app.update(op.remoteId, op.fields);
            else app.delete(op.remoteId);
            return { crashed: true, result, reads: { left, right } };
          }
          writes++;
          if (op.kind === 'update' && round < 3 && !this.stillAsRead(op)) {
            stale.push(op);
            continue;
          }
          this.applyWrite(op);
        }
      }
      for (const u of plan.shadowUpdates) {
        const link = this.links.get(u.linkId);
        if (link) this.links.set(link.id, { ...link, shadow: u.shadow, version: link.version + 1 });
      }
      for (const id of plan.unlinked) this.links.delete(id);
      if (stale.length === 0) break;
      plan = this.reconcileAgain(stale, { left, right });
    }
    // Cursors last: only after everything they cover is applied.
    this.previous = this.cursors;
    this.cursors = endCursor;
    return { crashed: false, result, reads: { left, right } };
  }

  /** The last interleaved user edit (see RunOptions.interleave). */
  interleaved: { side: Side; id: string; fields: Record<string, CanonicalValue> } | null = null;

  /** Compare-and-set, as a connector does it: the target still holds what the plan read of it. */
  private stillAsRead(op: Extract<WriteOp, { kind: 'update' }>): boolean {
    const now = this.apps[op.side].records.get(op.remoteId);
    if (!now) return false;
    for (const fm of this.mapping.fields) {
      const spec = op.side === 'left' ? fm.left : fm.right;
      if (!(spec.id in op.expected)) continue;
      const n = normalizeValue(spec.type, now.fields[spec.id] ?? null);
      if (!n.ok || !valuesEqual(n.value, op.expected[spec.id] ?? null)) return false;
    }
    return true;
  }

  /** The pairs of refused updates, reconciled again: source as read, target as it is now. */
  private reconcileAgain(
    stale: Extract<WriteOp, { kind: 'update' }>[],
    reads: { left: ChangeSet; right: ChangeSet },
  ): ReconcileResult {
    const links = stale.flatMap((op) => {
      const l = this.links.get(op.linkId);
      return l ? [l] : [];
    });
    const pick = (side: Side, read: ChangeSet): ChangeSet => {
      const records: RecordData[] = [];
      const deletedIds: string[] = [];
      for (const l of links) {
        const id = side === 'left' ? l.leftId : l.rightId;
        if (!id) continue;
        const target = stale.some((op) => op.linkId === l.id && op.side === side);
        const rec = target ? this.apps[side].records.get(id) : read.records.find((r) => r.id === id);
        if (rec) records.push({ id, fields: { ...rec.fields } });
        else if (target) deletedIds.push(id);
      }
      return { records, deletedIds, scanComplete: false };
    };
    return reconcile({
      mapping: this.mapping,
      links,
      left: pick('left', reads.left),
      right: pick('right', reads.right),
      totalLinks: Number.MAX_SAFE_INTEGER,
    });
  }

  /** Whether every linked pair holds the same values on both sides and in the shadow. */
  converged(): { ok: boolean; why: string[] } {
    const why: string[] = [];
    for (const link of this.links.values()) {
      const L = link.leftId ? this.apps.left.records.get(link.leftId) : undefined;
      const R = link.rightId ? this.apps.right.records.get(link.rightId) : undefined;
      if (!L || !R) {
        why.push(`${link.id}: a side is missing`);
        continue;
      }
      for (const fm of this.mapping.fields) {
        const lv = normalizeValue(fm.left.type, L.fields[fm.left.id] ?? null);
        const rv = normalizeValue(fm.right.type, R.fields[fm.right.id] ?? null);
        if (!lv.ok || !rv.ok) continue;
        const asRight = convertValue(lv.value, fm.left, fm.right);
        if (!asRight.ok || !valuesEqual(asRight.value, rv.value))
          why.push(`${link.id}.${fm.id}: ${JSON.stringify(lv.value)} vs ${JSON.stringify(rv.value)}`);
        const sf = link.shadow?.[fm.id];
        if (!sf || !valuesEqual(sf.l, lv.value) || !valuesEqual(sf.r, rv.value))
          why.push(`${link.id}.${fm.id}: shadow behind`);
      }
    }
    const linkedLeft = new Set([...this.links.values()].map((l) => l.leftId));
    const linkedRight = new Set([...this.links.values()].map((l) => l.rightId));
    for (const id of this.apps.left.records.keys())
      if (!linkedLeft.has(id)) why.push(`left ${id} not linked`);
    for (const id of this.apps.right.records.keys())
      if (!linkedRight.has(id)) why.push(`right ${id} not linked`);
    return { ok: why.length === 0, why };
  }
}
