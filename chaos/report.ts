import type pg from 'pg';
import type { Write } from './workload';

type Row = {
  id: string;
  email: string;
  name: string | null;
  score: number | null;
  note: string | null;
  updated: string;
};

/** Both tables, row by row, every column as text (timestamps with their microseconds). */
export async function readSide(c: pg.Client): Promise<Map<string, Row>> {
  const r = await c.query(
    'select id::text, email, name, score, note, updated::text as updated from contacts order by id',
  );
  return new Map((r.rows as Row[]).map((row) => [row.id, row]));
}

export function differingRows(a: Map<string, Row>, b: Map<string, Row>): string[] {
  const out: string[] = [];
  for (const id of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(id);
    const y = b.get(id);
    if (!x || !y) out.push(`${id}: only on ${x ? 'a' : 'b'}`);
    else
      for (const k of ['email', 'name', 'score', 'note', 'updated'] as const)
        if (String(x[k]) !== String(y[k])) {
          out.push(`${id}.${k}: a=${x[k]} b=${y[k]}`);
          break;
        }
  }
  return out;
}

/** Values Lockstep recorded as overwritten (the "before" of its update operations), by row and column. */
export async function overwrittenValues(lockstep: pg.Client, coreBaseId: string): Promise<Set<string>> {
  const r = await lockstep.query(
    `select e.remote_id, b.key, b.value #>> '{}' as value
       from sync_log_entry e, jsonb_each(coalesce(e.before, '{}'::jsonb)) b
      where e.core_base_id = $1 and e.operation = 'update'`,
    [coreBaseId],
  );
  return new Set(
    (r.rows as { remote_id: string; key: string; value: string }[]).map(
      (x) => `${x.remote_id}|${x.key}|${x.value}`,
    ),
  );
}

/** When Lockstep wrote each row on each side (its operations log), to tell what a side had seen. */
export async function lockstepWrites(
  lockstep: pg.Client,
  coreBaseId: string,
): Promise<Map<string, number[]>> {
  const r = await lockstep.query(
    `select remote_id, side, (extract(epoch from created_at) * 1000)::float8 as at from sync_log_entry
      where core_base_id = $1 and operation in ('update', 'create')`,
    [coreBaseId],
  );
  const out = new Map<string, number[]>();
  for (const x of r.rows as { remote_id: string; side: string; at: number }[]) {
    const key = `${x.side === 'left' ? 'a' : 'b'}|${x.remote_id}`;
    out.set(key, [...(out.get(key) ?? []), x.at]);
  }
  return out;
}

/** Lockstep's operations per row id (`side:operation@time`), to explain a row that differs. */
export async function lockstepOps(lockstep: pg.Client, coreBaseId: string): Promise<Map<string, string[]>> {
  const r = await lockstep.query(
    `select remote_id, side, operation, (extract(epoch from created_at) * 1000)::bigint % 100000 as at,
            before::text as before, after::text as after
       from sync_log_entry where core_base_id = $1 order by created_at`,
    [coreBaseId],
  );
  const out = new Map<string, string[]>();
  for (const x of r.rows as {
    remote_id: string;
    side: string;
    operation: string;
    at: string;
    before: string;
    after: string;
  }[])
    out.set(x.remote_id, [
      ...(out.get(x.remote_id) ?? []),
      `${x.side === 'left' ? 'a' : 'b'}:${x.operation}@${x.at} ${x.before ?? ''}->${x.after ?? ''}`,
    ]);
  return out;
}

export type Findings = {
  rowsDiffering: number;
  examples: string[];
  lostUpdates: number;
  lostExamples: string[];
  recordedConflictLosers: number;
  resurrectedDeletes: number;
  resurrectedExamples: string[];
  unpropagatedDeletes: number;
  deleteEditConflicts: number;
  duplicates: number;
  conflicts: { pairs: number; wonByA: number; wonByB: number; neither: number };
};

/**
 * The comparison against the log of every write:
 * - lost update: the last committed write to a row's column is on neither side, and Lockstep did not
 *   record it as overwritten (a conflict it resolved by the table pair's rule records the loser);
 * - a row whose last event is a delete must be gone from both sides: on both it is resurrected (unless
 *   the other side's last edit had not reached the deleting side yet: edit beats delete by rule, a
 *   conflict), on one it is an unpropagated delete;
 * - duplicates: an email twice on a side (each logical record has its own).
 */
export function compare(
  log: Write[],
  a: Map<string, Row>,
  b: Map<string, Row>,
  overwritten: Set<string>,
  /** Lockstep's writes by `side|id`: when each reached that side. */
  written: Map<string, number[]>,
  /** Lockstep's operations by row id, for the examples. */
  ops: Map<string, string[]> = new Map(),
): Findings {
  const byRow = new Map<number, Write[]>();
  for (const w of log) {
    const list = byRow.get(w.id) ?? [];
    list.push(w);
    byRow.set(w.id, list);
  }
  const examples = differingRows(a, b);
  const f: Findings = {
    rowsDiffering: examples.length,
    examples: examples.slice(0, 10).map((e) => {
      const id = Number(e.split(/[.:]/)[0]);
      const hist = (byRow.get(id) ?? [])
        .map(
          (w) =>
            `${w.side}:${w.op}${w.column ? `.${w.column}` : ''}${w.late ? '(late)' : ''}=${w.value ?? ''}@${w.committedAt % 100000}`,
        )
        .join(' ');
      return `${e}; writes ${hist}; lockstep ${(ops.get(String(id)) ?? []).join(' ')}`;
    }),
    lostUpdates: 0,
    lostExamples: [],
    recordedConflictLosers: 0,
    resurrectedDeletes: 0,
    resurrectedExamples: [],
    unpropagatedDeletes: 0,
    deleteEditConflicts: 0,
    duplicates: 0,
    conflicts: { pairs: 0, wonByA: 0, wonByB: 0, neither: 0 },
  };
  for (const [id, writes] of byRow) {
    writes.sort((x, y) => x.committedAt - y.committedAt || x.seq - y.seq);
    const key = String(id);
    const last = writes.at(-1) as Write;
    if (last.op === 'delete') {
      const other = last.side === 'a' ? 'b' : 'a';
      // Edit beats delete by rule when the deleting side had not seen the other side's last edit
      // (Lockstep had not written it there before the delete): a conflict, not a resurrection.
      const edit = writes
        .filter((w) => w.side === other && w.op !== 'delete' && w.committedAt < last.committedAt)
        .at(-1);
      const seen =
        edit !== undefined &&
        (written.get(`${last.side}|${key}`) ?? []).some(
          (at) => at >= edit.committedAt - 5 && at <= last.committedAt,
        );
      const editedBefore = edit !== undefined && !seen;
      const onA = a.has(key);
      const onB = b.has(key);
      if (onA && onB) {
        if (editedBefore) f.deleteEditConflicts++;
        else {
          f.resurrectedDeletes++;
          if (f.resurrectedExamples.length < 10)
            f.resurrectedExamples.push(
              `${key}: ${writes.map((w) => `${w.side}:${w.op}${w.column ? `.${w.column}` : ''}${w.late ? '(late)' : ''}@${w.committedAt % 100000}`).join(' ')}`,
            );
        }
      } else if (onA || onB) f.unpropagatedDeletes++;
      continue;
    }
    for (const column of ['name', 'score', 'note'] as const) {
      const lastWrite = writes.filter((w) => w.op === 'update' && w.column === column).at(-1);
      if (!lastWrite) continue;
      // Deleted afterwards on its own side: superseded by that delete (the row may have come back
      // from the other side's edit, by rule, with that side's values). An update logged on a side
      // found its row, so a delete of that row there within a second came after it, whatever
      // order the two commits' callbacks ran in (a late transaction holds the row the delete waits on).
      if (
        writes.some(
          (w) =>
            w.op === 'delete' && w.side === lastWrite.side && w.committedAt > lastWrite.committedAt - 1000,
        )
      )
        continue;
      const v = String(lastWrite.value);
      const held = [a.get(key), b.get(key)].some((r) => r && String(r[column]) === v);
      if (held) continue;
      if (overwritten.has(`${key}|${column}|${v}`)) f.recordedConflictLosers++;
      else {
        f.lostUpdates++;
        if (f.lostExamples.length < 10)
          f.lostExamples.push(
            `${key}.${column}=${v} (${lastWrite.side}${lastWrite.late ? ', late commit' : ''}); now a=${a.get(key)?.[column]} b=${b.get(key)?.[column]}; history ${writes
              .filter((w) => w.column === column || w.op !== 'update')
              .map(
                (w) =>
                  `${w.side}:${w.op}${w.late ? '(late)' : ''}=${w.value ?? ''}@${w.committedAt % 100000}`,
              )
              .join(
                ' ',
              )}; lockstep a@${(written.get(`a|${key}`) ?? []).map((t) => Math.round(t) % 100000).join(',')} b@${(written.get(`b|${key}`) ?? []).map((t) => Math.round(t) % 100000).join(',')}`,
          );
      }
    }
  }
  const pairs = new Map<number, Write[]>();
  for (const w of log) if (w.conflict) pairs.set(w.conflict, [...(pairs.get(w.conflict) ?? []), w]);
  for (const pair of pairs.values()) {
    if (pair.length !== 2) continue;
    f.conflicts.pairs++;
    const [x] = pair as [Write, Write];
    const row = a.get(String(x.id));
    const col = x.column as 'name' | 'score' | 'note';
    const winner = pair.find((w) => row && String(row[col]) === String(w.value));
    if (winner?.side === 'a') f.conflicts.wonByA++;
    else if (winner?.side === 'b') f.conflicts.wonByB++;
    else f.conflicts.neither++;
  }
  for (const side of [a, b]) {
    const emails = [...side.values()].map((r) => r.email);
    f.duplicates += emails.length - new Set(emails).size;
  }
  return f;
}
