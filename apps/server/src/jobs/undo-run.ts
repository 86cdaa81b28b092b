import type { TableConnector, WriteRequest } from '@lockstep/connectors';
import {
  type CanonicalValue,
  type FieldMapping,
  hashKey,
  type Link,
  normalizeValue,
  type RecordData,
  reconcile,
  type Shadow,
  valuesEqual,
} from '@lockstep/engine';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import type { UndoResult } from '../db/schema';
import { HttpError } from '../http/http-error';
import { loadSyncPlan, type MappingPlan } from '../sync/load-sync-plan';
import { relationResolver, relationTargets, storePendingRelations } from '../sync/relations';
import { readBothSides } from '../sync/retry-records';
import { addCounts, logOperations } from '../sync/run/bookkeeping';
import { type LinkRow, toLink } from '../sync/run/links';
import { recordNamer } from '../sync/run/record-names';
import { byId, type Counts, type Deps, type RunContext } from '../sync/run/run-context';
import { applyResult, settleFollowUps } from '../sync/run/write';
import { sideConnector } from '../sync/side-connector';
import type { FollowUp } from '../sync/write-follow-ups';

export const UNDO_RUN = 'undo-run';
export type UndoRunData = { undoLogId: string };

type Side = 'left' | 'right';
const other = (s: Side): Side => (s === 'left' ? 'right' : 'left');

const conflict = (message: string, userFacing: string) => new HttpError(409, message, userFacing, 'conflict');

/**
 * Starts "undo this run": checks it may be undone now, records the undo as a run of its own (its
 * sync log names the run it undoes; a unique index allows one undo per run) and queues it; returns
 * the undo run's id. The caller has checked the user owns the run.
 */
export async function startUndo(
  db: Db,
  boss: PgBoss,
  run: { id: string; owner_id: string; core_base_id: string; status: string },
): Promise<string> {
  if (run.status === 'running')
    throw conflict('Run still running', 'This run is still running: undo it once it has finished.');
  const runs = await db
    .selectFrom('sync_log')
    .select(['id', 'status', 'undo_of'])
    .where('core_base_id', '=', run.core_base_id)
    .execute();
  if (runs.some((r) => r.undo_of === run.id))
    throw conflict('Already undone', 'This run has already been undone (or its undo is under way).');
  if (runs.some((r) => r.undo_of !== null && r.status === 'running'))
    throw conflict(
      'Another undo running',
      'Another undo of this sync is running: try again when it has finished.',
    );
  if (await firstSyncRunning(db, run.core_base_id, runs))
    throw conflict(
      'First sync running',
      'The first sync of this sync is still running: undo a run once it has finished.',
    );
  const total = await db
    .selectFrom('sync_log_entry')
    .select((eb) => eb.fn.sum<number>('record_count').as('n'))
    .where('sync_log_id', '=', run.id)
    .executeTakeFirst();
  let id: string;
  try {
    const row = await db
      .insertInto('sync_log')
      .values({
        owner_id: run.owner_id,
        core_base_id: run.core_base_id,
        trigger: 'undo',
        counts: '{}',
        undo_of: run.id,
        progress: JSON.stringify({ done: 0, total: Number(total?.n ?? 0) }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    id = row.id;
  } catch (error) {
    // Two requests at once: the unique index lets one through.
    if ((error as { code?: string }).code === '23505')
      throw conflict('Already undone', 'This run has already been undone (or its undo is under way).');
    throw error;
  }
  await boss.send(UNDO_RUN, { undoLogId: id } satisfies UndoRunData);
  return id;
}

/** A run of the sync is running and no run of it has finished yet, or a table pair is still staging its first sync. */
async function firstSyncRunning(
  db: Db,
  coreBaseId: string,
  runs: { status: string; undo_of: string | null }[],
): Promise<boolean> {
  const syncRuns = runs.filter((r) => r.undo_of === null);
  if (!syncRuns.some((r) => r.status === 'running')) return false;
  if (!syncRuns.some((r) => r.status === 'done')) return true;
  const staging = await db
    .selectFrom('first_sync_state')
    .innerJoin('table_mapping', 'table_mapping.id', 'first_sync_state.table_mapping_id')
    .select('first_sync_state.table_mapping_id')
    .where('table_mapping.core_base_id', '=', coreBaseId)
    .executeTakeFirst();
  return staging !== undefined;
}

/** Thrown while a sync run of the same sync is running: the queue tries the undo again shortly. */
class WaitForRun extends Error {}

/** One record of the undone run to put back. */
type Item = {
  entryId: string;
  operation: 'create' | 'update' | 'delete';
  side: Side;
  remoteId: string | null;
  linkId: string | null;
  /** An update: what the target held before (the fields written); a delete: the before-image. */
  before: Record<string, CanonicalValue> | null;
  /** An update: what the run wrote. */
  after: Record<string, CanonicalValue> | null;
};

/**
 * Runs an undo: for each operation of the undone run, in the app it wrote to, writes back what was
 * there before (an update's before-values, conditionally on the values the run wrote; a create's
 * record deleted, conditionally on its values; a delete's record created again from its
 * before-image). A record changed since the run (in either app) is not touched: it is held, with an
 * `undo_held` issue naming what differs. Then the engine carries the restored records to the other
 * app, as it carries any edit (read both sides by id, reconcile, write, with the usual bookkeeping,
 * logged under the undo run), so each pair ends in step at its values before the run.
 */
export async function handleUndoRun(deps: Deps, data: UndoRunData) {
  const { db } = deps;
  const log = await db.selectFrom('sync_log').selectAll().where('id', '=', data.undoLogId).executeTakeFirst();
  if (log?.status !== 'running' || !log.undo_of) return;
  const busy = await db
    .selectFrom('sync_log')
    .select('id')
    .where('core_base_id', '=', log.core_base_id)
    .where('status', '=', 'running')
    .where('undo_of', 'is', null)
    .executeTakeFirst();
  if (busy) throw new WaitForRun('A run of this sync is running: the undo starts after it.');
  const results: UndoResult[] = [];
  const counts: Counts = {};
  let error: string | null = null;
  try {
    const plan = await loadSyncPlan(db, log.core_base_id);
    if (!plan) throw new Error('The sync no longer exists.');
    const items = await itemsOf(db, log.undo_of);
    const total = items.reduce((n, g) => n + g.items.length, 0);
    let done = 0;
    const targets = relationTargets(plan.mappings);
    for (const group of items) {
      const m = plan.mappings.find((x) => x.tableMappingId === group.tableMappingId);
      if (!m) {
        for (const it of group.items)
          results.push(result(it, 'unsupported', 'Its table pair is no longer mapped in this sync.'));
      } else {
        const a: RunContext = {
          ownerId: log.owner_id,
          coreBaseId: log.core_base_id,
          syncLogId: log.id,
          m,
          connectors: {
            left: await sideConnector(deps, m.left, 'left'),
            right: await sideConnector(deps, m.right, 'right'),
          },
          counts,
        };
        results.push(...(await undoPair(deps, a, group.items, targets, log.undo_of)));
      }
      done += group.items.length;
      await db
        .updateTable('sync_log')
        .set({ progress: JSON.stringify({ done, total }) })
        .where('id', '=', log.id)
        .execute();
    }
  } catch (e) {
    if (e instanceof WaitForRun) throw e;
    error = `The undo stopped: ${(e as { userFacingMessage?: string }).userFacingMessage ?? (e instanceof Error ? e.message : String(e))}`;
  }
  for (const r of results) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
  await addCounts(db, log.id, counts);
  await db
    .updateTable('sync_log')
    .set({
      status: error ? 'failed' : 'done',
      error,
      finished_at: new Date(),
      undo_results: JSON.stringify(results),
    })
    .where('id', '=', log.id)
    .execute();
}

const result = (it: Item, outcome: UndoResult['outcome'], message: string): UndoResult => ({
  entryId: it.entryId,
  side: it.side,
  operation: it.operation,
  remoteId: it.remoteId,
  outcome,
  message,
});

/** The undone run's operations, one item per record (a batched create names its records), by table pair, latest first. */
async function itemsOf(db: Db, runId: string) {
  const entries = await db
    .selectFrom('sync_log_entry')
    .selectAll()
    .where('sync_log_id', '=', runId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  // Operations logged before they named their table pair: found through their link.
  const linkIds = entries.flatMap((e) => (e.core_meta_record_id ? [e.core_meta_record_id] : []));
  const links = linkIds.length
    ? await db
        .selectFrom('core_meta_record')
        .select(['id', 'table_mapping_id'])
        .where('id', 'in', linkIds)
        .execute()
    : [];
  const pairOfLink = new Map(links.map((l) => [l.id, l.table_mapping_id]));
  const groups = new Map<string, Item[]>();
  const add = (pair: string, it: Item) => groups.set(pair, [...(groups.get(pair) ?? []), it]);
  for (const e of entries) {
    const pair = e.table_mapping_id ?? (e.core_meta_record_id ? pairOfLink.get(e.core_meta_record_id) : null);
    const base = { entryId: e.id, operation: e.operation, side: e.side, before: null, after: null };
    if (e.records) {
      // A batched create: each record's link points at the entry.
      const batch = await db
        .selectFrom('core_meta_record')
        .select(['id', 'table_mapping_id', 'left_remote_id', 'right_remote_id'])
        .where('created_entry_id', '=', e.id)
        .execute();
      const bySide = new Map(batch.map((l) => [e.side === 'left' ? l.left_remote_id : l.right_remote_id, l]));
      for (const remote of e.records.remote) {
        const l = bySide.get(remote);
        add(l?.table_mapping_id ?? pair ?? '', { ...base, remoteId: remote, linkId: l?.id ?? null });
      }
      continue;
    }
    add(pair ?? '', {
      ...base,
      remoteId: e.remote_id,
      linkId: e.core_meta_record_id,
      before: (e.before as Record<string, CanonicalValue> | null) ?? null,
      after: (e.after as Record<string, CanonicalValue> | null) ?? null,
    });
  }
  return [...groups.entries()].map(([tableMappingId, items]) => ({ tableMappingId, items }));
}

const fieldOf = (fm: FieldMapping, side: Side) => (side === 'left' ? fm.left : fm.right);
const norm = (fm: FieldMapping, side: Side, v: unknown): CanonicalValue => {
  const spec = fieldOf(fm, side);
  const n = normalizeValue(spec.type, v ?? null, spec.options);
  return n.ok ? n.value : (v as CanonicalValue);
};

/** Fields of `record` (on `side`) that differ from `want` (keyed by the side's field ids): named, with both values. */
function differences(m: MappingPlan, side: Side, record: RecordData, want: Record<string, unknown>) {
  const out: { field: string; expected: CanonicalValue; now: CanonicalValue }[] = [];
  for (const fm of m.spec.fields) {
    const id = fieldOf(fm, side).id;
    if (!(id in want)) continue;
    const expected = norm(fm, side, want[id]);
    const now = norm(fm, side, record.fields[id]);
    if (!valuesEqual(expected, now)) out.push({ field: fieldOf(fm, side).name, expected, now });
  }
  return out;
}

/** A side's values as the shadow holds them, keyed by its field ids. */
function shadowSide(m: MappingPlan, side: Side, shadow: Shadow | null) {
  const out: Record<string, CanonicalValue> = {};
  for (const fm of m.spec.fields) {
    const sf = shadow?.[fm.id];
    if (sf) out[fieldOf(fm, side).id] = side === 'left' ? sf.l : sf.r;
  }
  return out;
}

/** Undoes one table pair's records, then lets the engine carry them to the other app. */
async function undoPair(
  deps: Deps,
  a: RunContext,
  items: Item[],
  targets: Map<string, string>,
  undoneRunId: string,
): Promise<UndoResult[]> {
  const { db } = deps;
  const { m, connectors } = a;
  const results: UndoResult[] = [];
  if (!connectors.left.readRecords || !connectors.right.readRecords) {
    for (const it of items)
      results.push(
        result(
          it,
          'unsupported',
          'One of these apps cannot read a record by its id, so Lockstep cannot check it is unchanged since the run: left as it is.',
        ),
      );
    return results;
  }
  const linkIds = [...new Set(items.flatMap((it) => (it.linkId ? [it.linkId] : [])))];
  const linkRows = linkIds.length
    ? ((await db
        .selectFrom('core_meta_record')
        .select(['id', 'left_remote_id', 'right_remote_id', 'shadow', 'shadow_version'])
        .where('id', 'in', linkIds)
        .execute()) as LinkRow[])
    : [];
  const links = new Map(linkRows.map((r) => [r.id, toLink(r)]));
  const ids = {
    left: linkRows.flatMap((r) => (r.left_remote_id ? [r.left_remote_id] : [])),
    right: linkRows.flatMap((r) => (r.right_remote_id ? [r.right_remote_id] : [])),
  };
  const now = await readBothSides(connectors, m, ids, [...links.values()]);
  const current = { left: byId(now.left.records), right: byId(now.right.records) };
  const held: { it: Item; link: Link | null; why: string; details: Record<string, unknown> }[] = [];
  const writes: Record<Side, { it: Item; request: WriteRequest; link: Link | null }[]> = {
    left: [],
    right: [],
  };
  const key = (it: Item, remote: string | null) =>
    hashKey(`undo|${a.syncLogId}|${it.entryId}|${remote ?? ''}`);

  for (const it of items) {
    if (it.operation === 'delete') {
      // Created again from its before-image, unlinked: the engine then creates its partner.
      if (!it.before || Object.keys(it.before).length === 0) {
        results.push(
          result(
            it,
            'unsupported',
            'This delete was logged without the record’s values (before this version of Lockstep), so it cannot be created again.',
          ),
        );
        continue;
      }
      writes[it.side].push({
        it,
        link: null,
        request: { kind: 'create', fields: it.before, idempotencyKey: key(it, it.remoteId) },
      });
      continue;
    }
    const link = it.linkId ? (links.get(it.linkId) ?? null) : null;
    const remoteId = link ? (it.side === 'left' ? link.leftId : link.rightId) : null;
    const record = remoteId ? current[it.side].get(remoteId) : undefined;
    if (!link || !remoteId || !record) {
      held.push({
        it,
        link,
        why: 'It was deleted or unlinked since the run.',
        details: { fields: [] },
      });
      continue;
    }
    // What the run left in the app it wrote to: an update's written values, a created record's values.
    const wrote = it.operation === 'update' ? (it.after ?? {}) : shadowSide(m, it.side, link.shadow);
    const changed = differences(m, it.side, record, wrote);
    // The partner in the other app, as it was when the pair was last in step.
    const partnerId = it.side === 'left' ? link.rightId : link.leftId;
    const partner = partnerId ? current[other(it.side)].get(partnerId) : undefined;
    const partnerChanged = partner
      ? differences(m, other(it.side), partner, shadowSide(m, other(it.side), link.shadow))
      : [];
    if (changed.length > 0 || partnerChanged.length > 0) {
      held.push({
        it,
        link,
        why:
          changed.length > 0
            ? `It changed since the run: ${changed.map((c) => c.field).join(', ')}.`
            : `Its partner in the other app changed since the run: ${partnerChanged.map((c) => c.field).join(', ')}.`,
        details: { fields: changed, partnerFields: partnerChanged },
      });
      continue;
    }
    // Conditional on the values the run wrote: a record changed between this read and the write is
    // refused by the app (version_conflict), or checked by the connector before it writes.
    const expected: Record<string, CanonicalValue> = {};
    for (const fm of m.spec.fields) {
      const id = fieldOf(fm, it.side).id;
      if (id in wrote) expected[id] = norm(fm, it.side, wrote[id]);
    }
    if (it.operation === 'update') {
      const fields: Record<string, CanonicalValue> = {};
      for (const k of Object.keys(it.after ?? {}))
        if (it.before && k in it.before) fields[k] = it.before[k] ?? null;
      if (Object.keys(fields).length === 0) {
        results.push(result(it, 'unsupported', 'The run logged no before-values for this update.'));
        continue;
      }
      writes[it.side].push({
        it,
        link,
        request: { kind: 'update', remoteId, fields, expected, idempotencyKey: key(it, remoteId) },
      });
    } else {
      writes[it.side].push({
        it,
        link,
        request: { kind: 'delete', remoteId, expected, idempotencyKey: key(it, remoteId) },
      });
    }
  }

  // The writes, conditional on what the run left there: a record changed in the meantime is refused
  // (version_conflict) and held.
  const restoredLinks: Link[] = [];
  const recreated: Record<Side, RecordData[]> = { left: [], right: [] };
  for (const side of ['left', 'right'] as const) {
    const mine = writes[side];
    if (mine.length === 0) continue;
    const table = side === 'left' ? m.left.tableRemoteId : m.right.tableRemoteId;
    const answers = await writeAll(
      connectors[side],
      table,
      mine.map((w) => w.request),
    );
    const logged: Parameters<typeof logOperations>[2] = [];
    for (const [i, w] of mine.entries()) {
      const r = answers[i];
      if (!r?.ok) {
        if (r?.error.code === 'version_conflict')
          held.push({
            it: w.it,
            link: w.link,
            why: 'It changed while the undo wrote it.',
            details: { fields: [] },
          });
        else
          results.push(
            result(w.it, 'failed', r?.error.userFacingMessage ?? 'The app did not answer for this record.'),
          );
        continue;
      }
      const req = w.request;
      logged.push({
        l: w.link?.id ?? null,
        s: side,
        o: req.kind,
        r: r.remoteId,
        b: req.kind === 'create' ? null : (req.expected ?? null),
        a: req.kind === 'delete' ? null : (r.postImage?.fields ?? req.fields),
      });
      results.push(
        result(
          w.it,
          'restored',
          req.kind === 'update'
            ? 'Its values before the run were written back.'
            : req.kind === 'delete'
              ? 'The record the run created was deleted.'
              : 'The record the run deleted was created again.',
        ),
      );
      if (w.link) restoredLinks.push(w.link);
      else
        recreated[side].push(
          r.postImage ?? { id: r.remoteId, fields: req.kind === 'create' ? req.fields : {} },
        );
    }
    await logOperations(db, a, logged);
  }
  await holdForUser(
    db,
    a,
    undoneRunId,
    held,
    recordNamer(m, { left: now.left.records, right: now.right.records }),
  );
  for (const h of held) results.push(result(h.it, 'held', h.why));

  // The engine carries what was restored to the other app: both sides read again by id (a record
  // the undo deleted is gone, so its partner is deleted), the records created again unlinked (so
  // their partners are created), reconciled and written like any edit, logged under this undo.
  if (restoredLinks.length === 0 && recreated.left.length === 0 && recreated.right.length === 0)
    return results;
  const again = await readBothSides(
    connectors,
    m,
    {
      left: restoredLinks.flatMap((l) => (l.leftId ? [l.leftId] : [])),
      right: restoredLinks.flatMap((l) => (l.rightId ? [l.rightId] : [])),
    },
    restoredLinks,
  );
  const pages = {
    left: { ...again.left, records: [...again.left.records, ...recreated.left] },
    right: { ...again.right, records: [...again.right.records, ...recreated.right] },
  };
  const resolveRelation = await relationResolver(db, m, targets, {
    left: pages.left.records,
    right: pages.right.records,
  });
  const reconciled = reconcile({
    mapping: m.spec,
    links: restoredLinks,
    left: pages.left,
    right: pages.right,
    // A handful of records read by id: their deletes are evidence each, never a mass delete.
    totalLinks: Number.MAX_SAFE_INTEGER,
    resolveRelation,
  });
  await storePendingRelations(db, a, reconciled.pendingRelations);
  const followUps: FollowUp[] = [];
  await applyResult(deps, {
    ...a,
    result: reconciled,
    shadows: new Map(restoredLinks.map((l) => [l.id, l.shadow])),
    openIssues: true,
    followUps,
  });
  await settleFollowUps(deps, a, followUps, {
    read: { left: byId(pages.left.records), right: byId(pages.right.records) },
    resolveRelation,
  });
  return results;
}

/** Writes in the connector's batch size. */
async function writeAll(c: TableConnector, table: string, requests: WriteRequest[]) {
  const out = [];
  for (let i = 0; i < requests.length; i += c.capabilities.batchSize)
    out.push(...(await c.write(table, requests.slice(i, i + c.capabilities.batchSize))));
  return out;
}

/** Records the undo left alone because they changed since the run: an `undo_held` issue each, for the user. */
async function holdForUser(
  db: Db,
  a: RunContext,
  undoneRunId: string,
  held: { it: Item; link: Link | null; why: string; details: Record<string, unknown> }[],
  nameOf: (side: Side, remoteId: string) => string | null,
) {
  if (held.length === 0) return;
  const connectionOf = (side: Side) => (side === 'left' ? a.m.left.connectionId : a.m.right.connectionId);
  await db
    .insertInto('sync_error')
    .values(
      held.map((h) => ({
        owner_id: a.ownerId,
        core_base_id: a.coreBaseId,
        core_meta_record_id: h.link?.id ?? null,
        external_connection_id: connectionOf(h.it.side) ?? null,
        side: h.it.side,
        remote_id: h.it.remoteId,
        code: 'undo_held',
        message: `Undo of run ${undoneRunId} held this record: ${h.why}`,
        user_facing_message: `Not undone: ${h.why} Lockstep never overwrites a later edit; change it by hand if you still want its values from before the run.`,
        details: JSON.stringify({
          undoRunId: a.syncLogId,
          undoneRunId,
          operation: h.it.operation,
          recordName: h.it.remoteId ? nameOf(h.it.side, h.it.remoteId) : null,
          ...h.details,
        }),
      })),
    )
    .execute();
}

const UNDO_RETRY_LIMIT = 120;

export async function registerUndoRun(boss: PgBoss, deps: Deps, runWorkers: boolean) {
  await boss.createQueue(UNDO_RUN, {
    // Waits for a sync run of the same sync to end: tried again every 5 s, for about 10 minutes.
    retryLimit: UNDO_RETRY_LIMIT,
    retryDelay: 5,
    expireInSeconds: 60 * 60,
    notify: true,
  });
  if (!runWorkers) return;
  await boss.work<UndoRunData>(UNDO_RUN, { batchSize: 1, notifyPollingIntervalSeconds: 2 }, async (jobs) => {
    for (const job of jobs) {
      try {
        await handleUndoRun(deps, job.data);
      } catch (error) {
        // The last attempt ends the undo, so it does not stay `running` (and hold the sync's runs).
        if (job.retryCount >= UNDO_RETRY_LIMIT)
          await deps.db
            .updateTable('sync_log')
            .set({
              status: 'failed',
              finished_at: new Date(),
              error: `The undo did not start: ${error instanceof Error ? error.message : String(error)}`,
            })
            .where('id', '=', job.data.undoLogId)
            .where('status', '=', 'running')
            .execute();
        throw error;
      }
    }
  });
}
