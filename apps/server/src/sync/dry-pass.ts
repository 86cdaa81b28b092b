import type { Shadow, WriteOp } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { DryRunConflict, DryRunField, Side } from '../db/schema';
import { loadSyncPlan } from './load-sync-plan';
import { orderByLinks, relationTargets } from './relations';
import { nameFieldOf } from './run/record-names';
import type { ApplyInput, Counts, Deps, DryRun } from './run/run-context';
import { rowsDoc } from './run/run-context';
import { FirstSyncNotDone, runMapping } from './run/run-mapping';

/** Pages one table pair is read for at most in one pass (a pass reads to the end of what waits). */
const MAX_PAGES_PER_PAIR = 10_000;

export type DryPassProgress = { pairs: number; pairsDone: number; pages: number };

/**
 * One dry pass of a sync: every table pair is read from its stored cursors to the end, as runs
 * would read it, and reconciled as usual (run/run-mapping.ts with `dryRun`); what the runs would
 * write is stored as the pass's plan (dry_run_write), one row per record and side. Nothing is written
 * to the apps, and nothing of the runtime moves in Lockstep's database: the cursors advance in
 * memory only, so a live run meanwhile reads the same changes and a later run writes them.
 *
 * Returns the pairs it could not plan (their first sync is not done), with why.
 */
export async function runDryPass(
  deps: Deps,
  dryRunId: string,
  coreBaseId: string,
  progress: (p: DryPassProgress) => Promise<void> = async () => {},
): Promise<{ skipped: { tableMappingId: string; reason: string }[] }> {
  const plan = await loadSyncPlan(deps.db, coreBaseId);
  if (!plan) return { skipped: [] };
  const dry: DryRun = {
    cursors: new Map(),
    plan: (a, operations) => storePlannedWrites(deps.db, dryRunId, a, operations),
  };
  const dryDeps: Deps = { ...deps, dryRun: dry };
  const targets = relationTargets(plan.mappings);
  const skipped: { tableMappingId: string; reason: string }[] = [];
  const state: DryPassProgress = { pairs: plan.mappings.length, pairsDone: 0, pages: 0 };
  await progress(state);
  for (const m of orderByLinks(plan.mappings)) {
    const counts: Counts = {};
    try {
      for (let page = 0; page < MAX_PAGES_PER_PAIR; page++) {
        const more = await runMapping(dryDeps, plan.ownerId, coreBaseId, dryRunId, m, counts, targets, {
          any: false,
        });
        state.pages += 1;
        await progress(state);
        if (!more) break;
      }
    } catch (error) {
      if (!(error instanceof FirstSyncNotDone)) throw error;
      skipped.push({ tableMappingId: m.tableMappingId, reason: error.message });
    }
    state.pairsDone += 1;
    await progress(state);
  }
  return { skipped };
}

/** The values a shadow holds for one side, by field mapping id. */
const sideOf = (shadow: Shadow | null | undefined, side: Side, fieldMappingId: string) => {
  const entry = shadow?.[fieldMappingId];
  return entry ? (side === 'left' ? entry.l : entry.r) : null;
};

/** A planned write per record and side: its fields before (the shadow's) and after, its conflicts. */
async function storePlannedWrites(db: Db, dryRunId: string, a: ApplyInput, operations: WriteOp[]) {
  if (operations.length === 0) return;
  const { m, result } = a;
  const nameField = nameFieldOf(m);
  const rows = operations.map((op) => {
    const other: Side = op.side === 'left' ? 'right' : 'left';
    const shadow = op.linkId ? a.shadows.get(op.linkId) : null;
    // The record's name: the written record as read, else its source as read, else the shadow's.
    const name =
      (op.kind === 'create'
        ? a.recordName?.(other, op.sourceId)
        : (a.recordName?.(op.side, op.remoteId) ?? null)) ??
      (nameField
        ? nameOf(sideOf(shadow, op.side, nameField.id) ?? sideOf(shadow, other, nameField.id))
        : null);
    const fields: DryRunField[] = [];
    for (const fm of m.spec.fields) {
      const target = op.side === 'left' ? fm.left : fm.right;
      if (op.kind === 'delete') {
        const before = sideOf(shadow, op.side, fm.id);
        if (shadow?.[fm.id]) fields.push({ fieldId: target.id, field: target.name, before, after: null });
        continue;
      }
      if (!(target.id in op.fields)) continue;
      const before =
        op.kind === 'create'
          ? null
          : shadow?.[fm.id]
            ? sideOf(shadow, op.side, fm.id)
            : (op.expected[target.id] ?? null);
      fields.push({ fieldId: target.id, field: target.name, before, after: op.fields[target.id] ?? null });
    }
    const fieldName = (id: string) => m.spec.fields.find((f) => f.id === id)?.[op.side].name ?? id;
    const conflicts: DryRunConflict[] = op.linkId
      ? [
          ...result.resolvedConflicts
            .filter((c) => c.linkId === op.linkId)
            .map((c) => ({
              field: fieldName(c.fieldMappingId),
              left: c.left,
              right: c.right,
              winner: c.winner,
            })),
          ...result.heldConflicts
            .filter((c) => c.linkId === op.linkId)
            .map((c) => ({ field: fieldName(c.fieldMappingId), left: c.left, right: c.right, winner: null })),
        ]
      : [];
    return {
      t: m.tableMappingId,
      s: op.side,
      o: op.kind,
      k: op.kind === 'create' ? `create:${op.sourceId}` : op.remoteId,
      l: op.linkId,
      r: op.kind === 'create' ? null : op.remoteId,
      src: op.kind === 'create' ? op.sourceId : null,
      n: name,
      f: fields,
      c: conflicts,
    };
  });
  // A record read twice in one pass (on two pages) is planned once: the later plan wins.
  await sql`insert into dry_run_write (dry_run_id, table_mapping_id, side, operation, record_key, link_id, remote_id, source_id, name, fields, conflicts)
    select ${dryRunId}::uuid, u.t, u.s, u.o, u.k, u.l, u.r, u.src, u.n, u.f, u.c
      from json_to_recordset(${rowsDoc(rows)}::json)
        as u(t uuid, s text, o text, k text, l uuid, r text, src text, n text, f jsonb, c jsonb)
    on conflict (dry_run_id, table_mapping_id, side, record_key) do update
      set operation = excluded.operation, link_id = excluded.link_id, remote_id = excluded.remote_id,
          source_id = excluded.source_id, name = excluded.name, fields = excluded.fields,
          conflicts = excluded.conflicts`.execute(db);
}

const nameOf = (v: unknown): string | null => {
  const text = Array.isArray(v) ? v.join(', ') : v === null || v === undefined ? '' : String(v);
  if (text.trim() === '') return null;
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

/** Planned writes of a pass by `${tableMappingId}:${kind}`, with `total`. */
export async function countPlannedWrites(db: Db, dryRunId: string): Promise<Counts> {
  const rows = await db
    .selectFrom('dry_run_write')
    .select((eb) => ['table_mapping_id', 'operation', eb.fn.countAll<string>().as('n')])
    .where('dry_run_id', '=', dryRunId)
    .groupBy(['table_mapping_id', 'operation'])
    .execute();
  const counts: Counts = { total: 0 };
  for (const r of rows) {
    counts[`${r.table_mapping_id}:${r.operation}`] = Number(r.n);
    counts.total = (counts.total ?? 0) + Number(r.n);
  }
  return counts;
}
