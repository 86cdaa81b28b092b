import { ConnectorError, isRetryable, type TableConnector, type WriteRequest } from '@lockstep/connectors';
import {
  type Link,
  matchRecords,
  planWrites,
  type ReconcileResult,
  type RecordData,
  reconcile,
  type Shadow,
  shadowAfterWrite,
  type WriteOp,
} from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { Side } from '../db/schema';
import type { SyncRunner } from '../jobs/sync-run';
import type { SecretBox } from '../services/secret-box';
import { stopwatch } from './chunk-timings';
import { firstSyncStep, storeFirstSyncPosition } from './first-sync';
import { loadSyncPlan, type MappingPlan } from './load-sync-plan';
import { pageSizeOf } from './page-size';
import { holdCreatesOverLimit, releaseHeldCreates } from './record-limit';
import {
  orderByLinks,
  relationResolver,
  relationTargets,
  storePendingRelations,
  writePendingRelations,
} from './relations';
import {
  type RetriedIssue,
  readBothSides,
  retriedIssues,
  retriedRecords,
  settleRetriedIssues,
} from './retry-records';
import type { RuntimeConnectors } from './runtime-connectors';
import { RunStop, sideConnector } from './side-connector';
import {
  assertMappedFieldsPresent,
  failedSideOf,
  raiseTableIssue,
  resolveTableIssues,
} from './table-problems';
import { FOLLOW_UP_ROUNDS, type FollowUp, followUpOf, reconcileFollowUps } from './write-follow-ups';

/** Write batches of at most this many, so a page's batches can be pipelined (see applyResult). */
const PIPELINED_BATCH = 1000;

type Deps = {
  db: Db;
  secretBox: SecretBox;
  connectors: RuntimeConnectors;
  /** A user without a plan works on the dev plan's limits (a local server). */
  localDevPlan?: boolean;
};
type Counts = Record<string, number>;

type LinkRow = {
  id: string;
  left_remote_id: string | null;
  right_remote_id: string | null;
  shadow: Shadow | Record<string, never>;
  shadow_version: number;
};
const toLink = (r: LinkRow): Link => ({
  id: r.id,
  leftId: r.left_remote_id,
  rightId: r.right_remote_id,
  shadow: Object.keys(r.shadow).length === 0 ? null : (r.shadow as Shadow),
  version: r.shadow_version,
});

/**
 * The engine-backed runner: for each table mapping, read a page of each side from its cursor,
 * match on the first sync, reconcile, write in the connectors' batch sizes with pending writes
 * recorded first, store post-images as shadows with history and operations in one transaction per
 * item, turn per-record failures into issues, and store the cursors last.
 */
export function createSyncRunner(deps: Deps): SyncRunner {
  return {
    async runChunk({ coreBaseId, syncLogId }) {
      const plan = await loadSyncPlan(deps.db, coreBaseId);
      if (!plan) return { result: 'done' };
      const counts: Counts = {};
      let more = false;
      // A side whose committed changes wait behind a running transaction: read again shortly.
      const waiting = { any: false };
      // Linked tables first, so most relations find their partner in the same run.
      const targets = relationTargets(plan.mappings);
      const problems: string[] = [];
      try {
        for (const m of orderByLinks(plan.mappings)) {
          try {
            more =
              (await runMapping(deps, plan.ownerId, coreBaseId, syncLogId, m, counts, targets, waiting)) ||
              more;
            await resolveTableIssues(deps.db, coreBaseId, m.tableMappingId);
          } catch (error) {
            // A problem of this table pair (a table or column gone, a grant revoked): one issue, and
            // the other pairs go on. Refused credentials and transient failures stop the run below.
            if (
              !(error instanceof ConnectorError) ||
              isRetryable(error.code) ||
              error.code === 'auth_invalid'
            )
              throw error;
            problems.push(await raiseTableIssue(deps.db, plan.ownerId, coreBaseId, m, error));
          }
        }
        // Relations that waited for a record another mapping (or a later page) has now synced.
        for (const m of plan.mappings) {
          await writeWaitingRelations(
            deps,
            { ownerId: plan.ownerId, coreBaseId, syncLogId, m, counts },
            targets,
          );
        }
      } catch (error) {
        if (error instanceof RunStop) return { result: 'failed', error: error.message };
        if (error instanceof ConnectorError && !isRetryable(error.code)) {
          if (error.code === 'auth_invalid') {
            const where = failedSideOf(error);
            await pauseForBrokenConnection(deps.db, coreBaseId, error.userFacingMessage, where);
          }
          return { result: 'failed', error: error.userFacingMessage };
        }
        throw error; // transient: pg-boss retries the chunk with backoff
      } finally {
        await addCounts(deps.db, syncLogId, counts);
      }
      if (more) return { result: 'more_work' };
      const recheckSoon = waiting.any || undefined;
      return problems.length
        ? { result: 'failed', error: problems.join(' '), recheckSoon }
        : { result: 'done', recheckSoon };
    },
  };
}

/** Trace events of a run (trace id = the sync log id), searchable on the trace-logs page. */
async function trace(
  db: Db,
  ownerId: string,
  coreBaseId: string,
  traceId: string,
  event: string,
  data: Record<string, unknown>,
) {
  await db
    .insertInto('trace_log')
    .values({
      owner_id: ownerId,
      core_base_id: coreBaseId,
      trace_id: traceId,
      event,
      data: JSON.stringify(data),
    })
    .execute();
}

async function addCounts(db: Db, syncLogId: string, counts: Counts) {
  if (Object.keys(counts).length === 0) return;
  const log = await db.selectFrom('sync_log').select('counts').where('id', '=', syncLogId).executeTakeFirst();
  const merged: Counts = { ...(log?.counts ?? {}) };
  for (const [k, v] of Object.entries(counts)) merged[k] = (merged[k] ?? 0) + v;
  await db
    .updateTable('sync_log')
    .set({ counts: JSON.stringify(merged) })
    .where('id', '=', syncLogId)
    .execute();
}

/**
 * A connection whose credentials fail: marked broken (only the side that failed, when known), the
 * sync paused, the user told (an issue on that connection).
 */
async function pauseForBrokenConnection(
  db: Db,
  coreBaseId: string,
  message: string,
  where?: { side: Side; connectionId: string | null },
) {
  const bases = await db
    .selectFrom('external_base')
    .select(['external_connection_id', 'owner_id'])
    .where('core_base_id', '=', coreBaseId)
    .execute();
  for (const b of bases) {
    if (!b.external_connection_id) continue;
    if (where?.connectionId && b.external_connection_id !== where.connectionId) continue;
    await db
      .updateTable('external_connection')
      .set({ status: 'broken', broken_reason: message, updated_at: new Date() })
      .where('id', '=', b.external_connection_id)
      .execute();
  }
  await db
    .updateTable('core_base')
    .set({ sync_state: 'off', sync_state_changed_at: new Date() })
    .where('id', '=', coreBaseId)
    .execute();
  const owner = bases[0]?.owner_id;
  if (owner) {
    await db
      .insertInto('sync_error')
      .values({
        owner_id: owner,
        core_base_id: coreBaseId,
        code: 'auth_invalid',
        external_connection_id: where?.connectionId ?? null,
        side: where?.side ?? null,
        message,
        user_facing_message: `${message} The sync is paused until you reconnect.`,
        details: '{}',
      })
      .execute();
  }
}

/** A table's cursor and the version of its row (`xmin`; null: no row yet), to store it back by. */
type StoredCursor = { cursor: string | null; version: string | null };

async function readCursor(db: Db, tableId: string): Promise<StoredCursor> {
  const row = (
    await sql<{
      cursor: string | null;
      version: string;
    }>`select cursor, xmin::text as version from sync_cursor
      where external_table_id = ${tableId}`.execute(db)
  ).rows[0];
  return { cursor: row?.cursor ?? null, version: row?.version ?? null };
}

/**
 * Stores a cursor only if nobody changed it since this run read it (compare-and-set on the row's
 * version): a rescan requested meanwhile (a review decision, a changed mapping) is not overwritten.
 */
async function storeCursor(
  db: Db,
  ownerId: string,
  tableId: string,
  read: StoredCursor,
  page: { nextCursor: string; scanComplete: boolean },
) {
  if (read.version === null)
    await db
      .insertInto('sync_cursor')
      .values({
        external_table_id: tableId,
        owner_id: ownerId,
        cursor: page.nextCursor,
        full_scan_complete: page.scanComplete,
      })
      .onConflict((oc) => oc.column('external_table_id').doNothing())
      .execute();
  else
    await sql`update sync_cursor set cursor = ${page.nextCursor}, updated_at = now()
      where external_table_id = ${tableId} and xmin::text = ${read.version}`.execute(db);
}

/**
 * The links of what a page read: one index lookup per side (an OR of both sides was planned as a
 * scan of the table pair's links, whose cost grew with the table), none for a side that read
 * nothing. A complete scan needs every link (absence is evidence).
 */
async function loadLinks(
  db: Db,
  tableMappingId: string,
  ids: { left: string[]; right: string[] },
  everyLink: boolean,
): Promise<LinkRow[]> {
  const base = () =>
    db
      .selectFrom('core_meta_record')
      .select(['id', 'left_remote_id', 'right_remote_id', 'shadow', 'shadow_version'])
      .where('table_mapping_id', '=', tableMappingId);
  if (everyLink) return (await base().execute()) as LinkRow[];
  const byId = new Map<string, LinkRow>();
  for (const side of ['left', 'right'] as const) {
    if (ids[side].length === 0) continue;
    // One array parameter (not one bind parameter per id): pages are thousands of ids.
    const rows = await base()
      .where(sql<boolean>`${sql.ref(`${side}_remote_id`)} = any(${ids[side]}::text[])`)
      .execute();
    for (const r of rows) byId.set(r.id, r as LinkRow);
  }
  return [...byId.values()];
}

async function runMapping(
  deps: Deps,
  ownerId: string,
  coreBaseId: string,
  syncLogId: string,
  m: MappingPlan,
  counts: Counts,
  targets: Map<string, string>,
  waiting: { any: boolean },
): Promise<boolean> {
  const lap = stopwatch();
  const { db } = deps;
  const [left, right] = await Promise.all([
    sideConnector(deps, m.left, 'left'),
    sideConnector(deps, m.right, 'right'),
  ]);
  const context = { ownerId, coreBaseId, syncLogId, m, connectors: { left, right }, counts };
  await recoverPendingCreates(deps, context);
  await executeApprovedDeletes(deps, context);
  lap('recover pending writes');
  // Issues being retried: where both apps read records by id, those records are read again on both
  // sides and reconciled now; otherwise this pair's tables are read in full again.
  const limits = { ownerId, coreBaseId, m, localDevPlan: deps.localDevPlan ?? false };
  // Creates held back by the record limit are looked for again once the plan has room.
  await releaseHeldCreates(db, limits);
  const retried = await retriedIssues(db, coreBaseId, m.tableMappingId);
  lap('held creates, retries');
  const byIds = retried.length > 0 && left.readRecords !== undefined && right.readRecords !== undefined;
  if (byIds) await retryRecords(deps, context, retried, targets);
  const retrying = retried.length > 0 && !byIds;
  const stored = await Promise.all([readCursor(db, m.left.tableId), readCursor(db, m.right.tableId)]);
  const [cursorL, cursorR] = retrying ? [null, null] : stored.map((c) => c.cursor);
  const cursor = { left: cursorL ?? null, right: cursorR ?? null };
  const firstSync = cursor.left === null && cursor.right === null && !(await hasLinks(db, m.tableMappingId));
  // A first sync with a match field reads both sides whole before writing (see first-sync.ts).
  const staged = retrying
    ? ({ kind: 'not_first_sync' } as const)
    : await firstSyncStep(
        db,
        ownerId,
        m,
        { left, right },
        { startsFirstSync: firstSync, pageSize: pageSizeOf },
      );
  lap('first sync staging');
  // Still downloading, or just finished: the next chunk goes on (from the cursors the scans ended on).
  if (staged.kind === 'downloading' || staged.kind === 'finished') return true;
  const [pageL, pageR] =
    staged.kind === 'pages'
      ? [staged.left, staged.right]
      : await Promise.all([
          left.read(m.left.tableRemoteId, cursor.left, { pageSize: pageSizeOf(left) }),
          right.read(m.right.tableRemoteId, cursor.right, { pageSize: pageSizeOf(right) }),
        ]);
  lap('read');

  // A mapped column renamed or dropped under a live sync stops this pair before anything is written.
  assertMappedFieldsPresent(m, 'left', left, pageL, m.left.connectionId);
  assertMappedFieldsPresent(m, 'right', right, pageR, m.right.connectionId);
  await trace(db, ownerId, coreBaseId, syncLogId, 'read', {
    tableMappingId: m.tableMappingId,
    left: {
      table: m.left.tableRemoteId,
      records: pageL.records.length,
      deleted: pageL.deletedIds.length,
      full: cursor.left === null,
    },
    right: {
      table: m.right.tableRemoteId,
      records: pageR.records.length,
      deleted: pageR.deletedIds.length,
      full: cursor.right === null,
    },
  });
  if (firstSync && m.matchOn.primary)
    await linkMatches(db, ownerId, coreBaseId, m, pageL.records, pageR.records);

  const ids = {
    left: [...pageL.records.map((r) => r.id), ...pageL.deletedIds],
    right: [...pageR.records.map((r) => r.id), ...pageR.deletedIds],
  };
  const links = (await loadLinks(db, m.tableMappingId, ids, pageL.scanComplete || pageR.scanComplete)).map(
    (r) => toLink(r),
  );
  lap('load links');
  // The link count only weighs deletions (the mass-delete breaker); a complete scan loaded every link.
  const total =
    (pageL.deletedIds.length || pageR.deletedIds.length) && !pageL.scanComplete && !pageR.scanComplete
      ? await db
          .selectFrom('core_meta_record')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('table_mapping_id', '=', m.tableMappingId)
          .executeTakeFirstOrThrow()
      : { n: links.length };
  const resolveRelation = await relationResolver(db, m, targets, {
    left: pageL.records,
    right: pageR.records,
  });
  const result = reconcile({
    mapping: m.spec,
    links,
    left: {
      records: pageL.records,
      deletedIds: pageL.deletedIds,
      scanComplete: pageL.scanComplete,
      largestDeleteBatch: pageL.largestDeleteBatch,
    },
    right: {
      records: pageR.records,
      deletedIds: pageR.deletedIds,
      scanComplete: pageR.scanComplete,
      largestDeleteBatch: pageR.largestDeleteBatch,
    },
    totalLinks: Number(total.n),
    resolveRelation,
  });
  lap('reconcile');
  result.operations = await holdCreatesOverLimit(db, limits, result.operations);
  // Before the writes: a crash after them still leaves the relations to write later.
  await storePendingRelations(db, context, result.pendingRelations);
  await trace(db, ownerId, coreBaseId, syncLogId, 'reconcile', {
    tableMappingId: m.tableMappingId,
    ...result.stats,
    problems: result.problems.length,
    circuitBreakers: result.circuitBreakers,
  });
  lap('pending relations, limits, trace');
  const shadows = new Map(links.map((l) => [l.id, l.shadow]));
  const followUps: FollowUp[] = [];
  await applyResult(deps, {
    ...context,
    result,
    shadows,
    openIssues: await hasOpenIssues(db, coreBaseId),
    stagedChunk: staged.kind === 'pages',
    followUps,
  });
  lap('write and record');
  // Writes refused because the target changed under them or already held the record: reconciled
  // again now, with the source as read and the target as it is (before the cursors move past them).
  await settleFollowUps(deps, context, followUps, {
    read: { left: byId(pageL.records), right: byId(pageR.records) },
    resolveRelation,
  });
  lap('follow-ups');

  // Cursors last: only after everything they cover is applied. A staged first sync keeps its own
  // position and sets the cursors when it ends.
  if (staged.kind === 'pages') await storeFirstSyncPosition(db, staged.position);
  for (const [side, page] of staged.kind === 'pages'
    ? []
    : ([
        ['left', pageL],
        ['right', pageR],
      ] as const)) {
    const tableId = side === 'left' ? m.left.tableId : m.right.tableId;
    await storeCursor(db, ownerId, tableId, stored[side === 'left' ? 0 : 1] as StoredCursor, page);
  }
  if (pageL.waiting || pageR.waiting) waiting.any = true;
  if (retrying)
    // What still fails was reopened by its write; the others resolve only if seen in step.
    await settleRetriedIssues(db, m, retried, {
      left: pageL.records,
      right: pageR.records,
      absenceIsEvidence: pageL.scanComplete && pageR.scanComplete,
    });
  // This run's deletes may have made room for creates held back earlier: read again at once.
  lap('cursors, settle');
  if (await releaseHeldCreates(db, limits)) return true;
  return pageL.hasMore || pageR.hasMore;
}

/**
 * A retry by id: the retried records are read again on both sides (a record gone is a delete),
 * reconciled and written like any change, then each retried issue is resolved only if its record is
 * now in step on both sides (see settleRetriedIssues).
 */
async function retryRecords(
  deps: Deps,
  a: RunContext,
  retried: RetriedIssue[],
  targets: Map<string, string>,
) {
  const { db } = deps;
  const { links, ids } = await retriedRecords(db, a.m, retried);
  const pages = await readBothSides(a.connectors, a.m, ids, links);
  const resolveRelation = await relationResolver(db, a.m, targets, {
    left: pages.left.records,
    right: pages.right.records,
  });
  const result = reconcile({
    mapping: a.m.spec,
    links,
    left: pages.left,
    right: pages.right,
    // A handful of records read by id: their deletes are evidence each, never a mass delete.
    totalLinks: Number.MAX_SAFE_INTEGER,
    resolveRelation,
  });
  await storePendingRelations(db, a, result.pendingRelations);
  const followUps: FollowUp[] = [];
  await applyResult(deps, {
    ...a,
    result,
    shadows: new Map(links.map((l) => [l.id, l.shadow])),
    openIssues: true,
    followUps,
  });
  await settleFollowUps(deps, a, followUps, {
    read: { left: byId(pages.left.records), right: byId(pages.right.records) },
    resolveRelation,
  });
  // Read again after the writes: only what is now in step on both sides is resolved.
  const after = await retriedRecords(db, a.m, retried);
  const live = await readBothSides(a.connectors, a.m, after.ids, after.links);
  await settleRetriedIssues(db, a.m, retried, {
    left: live.left.records,
    right: live.right.records,
    absenceIsEvidence: true,
  });
}

/** Writes the relations of one mapping that were waiting for their linked records to sync. */
async function writeWaitingRelations(
  deps: Deps,
  a: Omit<RunContext, 'connectors'>,
  targets: Map<string, string>,
) {
  const any = await deps.db
    .selectFrom('pending_relation')
    .select('id')
    .where('table_mapping_id', '=', a.m.tableMappingId)
    .limit(1)
    .executeTakeFirst();
  if (!any) return;
  const [left, right] = await Promise.all([
    sideConnector(deps, a.m.left, 'left'),
    sideConnector(deps, a.m.right, 'right'),
  ]);
  const ctx: RunContext = { ...a, connectors: { left, right } };
  await writePendingRelations({
    db: deps.db,
    ownerId: a.ownerId,
    coreBaseId: a.coreBaseId,
    syncLogId: a.syncLogId,
    m: a.m,
    targets,
    connectors: { left, right },
    logUpdates: async (entries) => {
      for (const e of entries) bump(a.counts, `updated_${e.side}`);
      await logOperations(
        deps.db,
        ctx,
        entries.map((e) => ({
          l: e.linkId,
          s: e.side,
          o: 'update' as const,
          r: e.remoteId,
          b: e.before,
          a: e.after,
        })),
      );
    },
    recordIssue: (side, remoteId, error, linkId) =>
      recordIssue(deps.db, ctx, null, error, side, remoteId).then(async () => {
        if (linkId)
          await deps.db
            .updateTable('sync_error')
            .set({ core_meta_record_id: linkId })
            .where('core_base_id', '=', a.coreBaseId)
            .where('remote_id', '=', remoteId)
            .where('code', '=', error.code)
            .where('status', '=', 'open')
            .execute();
      }),
  });
}

/**
 * Creates a crash interrupted (recorded as pending, never confirmed) are sent again with their
 * idempotency keys before anything is read, so the record the app already made gets linked instead
 * of being read as new and copied back.
 */
async function recoverPendingCreates(deps: Deps, a: RunContext) {
  const rows = await deps.db
    .selectFrom('pending_write')
    .select(['idempotency_key', 'payload', 'side'])
    .where('core_base_id', '=', a.coreBaseId)
    .where('operation', '=', 'create')
    .execute();
  await recoverPendingUpdates(deps, a);
  // Sent again in the connector's batch sizes (a crash can leave a whole batch pending); the app
  // recognises each key, so a create it already made is returned, not made twice.
  const pending = rows
    .map((row) => ({ key: row.idempotency_key, ...(row.payload as { tableMappingId: string; op: WriteOp }) }))
    .filter((p) => p.tableMappingId === a.m.tableMappingId && p.op.kind === 'create');
  for (const side of ['left', 'right'] as const) {
    const mine = pending.filter((p) => p.op.side === side);
    const table = side === 'left' ? a.m.left.tableRemoteId : a.m.right.tableRemoteId;
    const size = Math.max(1, a.connectors[side].capabilities.batchSize);
    for (let i = 0; i < mine.length; i += size) {
      const batch = mine.slice(i, i + size);
      const results = await a.connectors[side].write(
        table,
        batch.map((p) => ({
          kind: 'create' as const,
          fields: (p.op as Extract<WriteOp, { kind: 'create' }>).fields,
          idempotencyKey: p.op.idempotencyKey,
        })),
      );
      await deps.db.transaction().execute(async (trx) => {
        for (const [j, p] of batch.entries()) {
          const r = results[j];
          if (r?.ok) await applySuccess(trx, a, p.op, r.remoteId, r.postImage, true);
        }
        await trx
          .deleteFrom('pending_write')
          .where(
            'idempotency_key',
            'in',
            batch.map((p) => p.key),
          )
          .execute();
      });
    }
  }
}

/**
 * Updates a crash interrupted (recorded as pending, never confirmed) are sent again with their keys
 * and their expected values: one that had landed (the app knows its key) or lands now moves the
 * shadow to what it wrote, so an edit made on that record since is read as the later edit it is,
 * not as a conflict with an earlier value. One refused (the record changed and it never landed) is
 * dropped: the next read finds both edits and the table pair's rule decides, as for any conflict.
 */
async function recoverPendingUpdates(deps: Deps, a: RunContext) {
  const rows = await deps.db
    .selectFrom('pending_write')
    .select(['idempotency_key', 'payload'])
    .where('core_base_id', '=', a.coreBaseId)
    .where('operation', '=', 'update')
    .execute();
  const pending = rows
    .map((row) => ({ key: row.idempotency_key, ...(row.payload as { tableMappingId: string; op: WriteOp }) }))
    .filter((p) => p.tableMappingId === a.m.tableMappingId && p.op.kind === 'update');
  for (const side of ['left', 'right'] as const) {
    const mine = pending.filter((p) => p.op.side === side);
    const table = side === 'left' ? a.m.left.tableRemoteId : a.m.right.tableRemoteId;
    const size = Math.max(1, a.connectors[side].capabilities.batchSize);
    for (let i = 0; i < mine.length; i += size) {
      const batch = mine.slice(i, i + size);
      const results = await a.connectors[side].write(
        table,
        batch.map((p) => {
          const op = p.op as Extract<WriteOp, { kind: 'update' }>;
          return {
            kind: 'update' as const,
            remoteId: op.remoteId,
            fields: op.fields,
            idempotencyKey: op.idempotencyKey,
            expected: op.expected,
          };
        }),
      );
      await deps.db.transaction().execute(async (trx) => {
        for (const [j, p] of batch.entries()) {
          const r = results[j];
          if (r?.ok) await applySuccess(trx, a, p.op, r.remoteId, r.postImage, true);
        }
        await trx
          .deleteFrom('pending_write')
          .where(
            'idempotency_key',
            'in',
            batch.map((p) => p.key),
          )
          .execute();
      });
    }
  }
}

/** Deletes the user approved in the delete approval queue: written now, with the operation logged. */
async function executeApprovedDeletes(deps: Deps, a: RunContext) {
  const approved = await deps.db
    .selectFrom('delete_approval')
    .innerJoin('core_meta_record', 'core_meta_record.id', 'delete_approval.core_meta_record_id')
    .select([
      'delete_approval.side',
      'core_meta_record.id as link_id',
      'core_meta_record.left_remote_id',
      'core_meta_record.right_remote_id',
    ])
    .where('delete_approval.status', '=', 'approved')
    .where('core_meta_record.table_mapping_id', '=', a.m.tableMappingId)
    .execute();
  for (const row of approved) {
    const side = row.side === 'left' ? ('left' as const) : ('right' as const);
    const remoteId = side === 'left' ? row.left_remote_id : row.right_remote_id;
    if (!remoteId) continue;
    const table = side === 'left' ? a.m.left.tableRemoteId : a.m.right.tableRemoteId;
    const op: WriteOp = {
      kind: 'delete',
      side,
      linkId: row.link_id,
      remoteId,
      idempotencyKey: `approved-delete:${row.link_id}`,
    };
    const [r] = await a.connectors[side].write(table, [
      { kind: 'delete', remoteId, idempotencyKey: op.idempotencyKey },
    ]);
    await deps.db.transaction().execute(async (trx) => {
      if (r?.ok) await applySuccess(trx, a, op, remoteId, null);
      else {
        const error =
          r && !r.ok
            ? r.error
            : {
                code: 'transient' as const,
                message: 'no result',
                userFacingMessage: 'The app did not answer.',
              };
        await recordIssue(trx, a, op, error);
      }
    });
  }
}

async function hasLinks(db: Db, tableMappingId: string) {
  return (
    (await db
      .selectFrom('core_meta_record')
      .select('id')
      .where('table_mapping_id', '=', tableMappingId)
      .limit(1)
      .executeTakeFirst()) !== undefined
  );
}

/** First sync: pair records on the match field(s); a pair is linked with no shadow, so reconcile settles it (blanks filled, differences by the winner side). */
async function linkMatches(
  db: Db,
  ownerId: string,
  coreBaseId: string,
  m: MappingPlan,
  left: MappingPlan['spec']['fields'] extends unknown ? Parameters<typeof matchRecords>[0]['left'] : never,
  right: Parameters<typeof matchRecords>[0]['right'],
) {
  const primary = m.spec.fields.find((f) => f.id === m.matchOn.primary);
  if (!primary) return;
  const secondary = m.spec.fields.find((f) => f.id === m.matchOn.secondary);
  const matched = matchRecords({
    left,
    right,
    key: { leftFieldId: primary.left.id, rightFieldId: primary.right.id, type: primary.left.type },
    ...(secondary
      ? {
          secondary: {
            leftFieldId: secondary.left.id,
            rightFieldId: secondary.right.id,
            type: secondary.left.type,
          },
        }
      : {}),
  });
  if (matched.pairs.length > 0) {
    await db
      .insertInto('core_meta_record')
      .values(
        matched.pairs.map((p) => ({
          owner_id: ownerId,
          core_base_id: coreBaseId,
          table_mapping_id: m.tableMappingId,
          left_remote_id: p.leftId,
          right_remote_id: p.rightId,
          shadow: '{}',
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

type ApplyInput = {
  ownerId: string;
  coreBaseId: string;
  syncLogId: string;
  m: MappingPlan;
  result: ReconcileResult;
  connectors: { left: TableConnector; right: TableConnector };
  counts: Counts;
  /** The shadows of the links this chunk loaded, by link id: the before values of updates. */
  shadows: Map<string, Shadow | null>;
  /** Whether the sync has issues not resolved yet; if not, a success has nothing to resolve. */
  openIssues: boolean;
  /** Refused writes to reconcile again (collected here, see write-follow-ups.ts). */
  followUps: FollowUp[];
  /**
   * A chunk of a staged first sync: its creates are not recorded as pending. Its position moves
   * only after its writes, so a crash reconciles the chunk again and each create goes again with
   * the same idempotency key (the app returns the record it made); and the other side is read from
   * the staged download, which cannot hold what this chunk created, until the chunk is done.
   */
  stagedChunk?: boolean;
};

type RunContext = Omit<ApplyInput, 'result' | 'shadows' | 'openIssues' | 'followUps' | 'stagedChunk'>;

const byId = (records: RecordData[]) => new Map(records.map((r) => [r.id, r]));

/**
 * Reconciles refused writes again, round after round (a round's own writes may be refused too, if
 * the record keeps changing), up to FOLLOW_UP_ROUNDS; what is left then is an issue, and nothing
 * was overwritten.
 */
async function settleFollowUps(
  deps: Deps,
  a: RunContext,
  followUps: FollowUp[],
  input: Pick<Parameters<typeof reconcileFollowUps>[0], 'read' | 'resolveRelation'>,
) {
  let pending = followUps;
  for (let round = 1; pending.length > 0; round++) {
    bump(a.counts, 'refollowed', pending.length);
    if (round > FOLLOW_UP_ROUNDS) {
      for (const f of pending)
        await recordIssue(deps.db, a, f.op, {
          code: 'version_conflict',
          message: 'The record kept changing while Lockstep wrote it',
          userFacingMessage:
            'This record kept changing while Lockstep was writing it, so nothing was overwritten. Retry once edits settle.',
        });
      return;
    }
    const { result, shadows, refused } = await reconcileFollowUps(
      {
        db: deps.db,
        ownerId: a.ownerId,
        coreBaseId: a.coreBaseId,
        m: a.m,
        connectors: a.connectors,
        ...input,
      },
      pending,
    );
    for (const f of refused) if (f.kind === 'collided') await recordIssue(deps.db, a, f.op, f.error);
    await storePendingRelations(deps.db, a, result.pendingRelations);
    const next: FollowUp[] = [];
    await applyResult(deps, { ...a, result, shadows, openIssues: true, followUps: next });
    pending = next;
  }
}

async function hasOpenIssues(db: Db, coreBaseId: string) {
  return (
    (await db
      .selectFrom('sync_error')
      .select('id')
      .where('core_base_id', '=', coreBaseId)
      .where('status', '!=', 'resolved')
      .limit(1)
      .executeTakeFirst()) !== undefined
  );
}

/**
 * Rows for a set-based statement as one JSON document, read with json_to_recordset: for thousands
 * of rows carrying JSON values this is much cheaper than an array parameter per column (no array
 * literal to escape and parse) or a bind parameter per value.
 */
const rowsDoc = (rows: object[]) => JSON.stringify(rows);

/** Operations logged in one statement. */
async function logOperations(
  db: Db,
  a: RunContext,
  entries: {
    l: string | null;
    s: 'left' | 'right';
    o: 'create' | 'update' | 'delete';
    r: string;
    b: unknown;
    a: unknown;
  }[],
) {
  if (entries.length === 0) return;
  await sql`insert into sync_log_entry (owner_id, sync_log_id, core_base_id, core_meta_record_id, side, operation, remote_id, before, after)
    select ${a.ownerId}, ${a.syncLogId}::uuid, ${a.coreBaseId}::uuid, u.l, u.s, u.o, u.r, u.b, u.a
      from json_to_recordset(${rowsDoc(entries)}::json) as u(l uuid, s text, o text, r text, b jsonb, a jsonb)`.execute(
    db,
  );
}

/** A record that syncs again resolves its open issues (one statement for a batch). */
async function resolveIssues(db: Db, a: { coreBaseId: string }, remoteIds: string[]) {
  if (remoteIds.length === 0) return;
  await sql`update sync_error set status = 'resolved', updated_at = now()
     where core_base_id = ${a.coreBaseId}::uuid and status <> 'resolved' and remote_id = any(${remoteIds}::text[])`.execute(
    db,
  );
}

const bump = (counts: Counts, key: string, by = 1) => {
  counts[key] = (counts[key] ?? 0) + by;
};

async function applyResult(deps: Deps, a: ApplyInput) {
  const { db } = deps;
  const { m, result, counts } = a;
  bump(counts, 'echoes', result.stats.echoes);
  bump(counts, 'conflicts', result.stats.conflicts);
  const operations = await withoutDecidedDeletes(db, result.operations);
  const batches = planWrites(operations, {
    left: Math.min(a.connectors.left.capabilities.batchSize, PIPELINED_BATCH),
    right: Math.min(a.connectors.right.capabilities.batchSize, PIPELINED_BATCH),
  });
  // Pipelined: while one batch's links, shadows and operations are stored (Lockstep's database),
  // the next batch is recorded and written to the app. At most one batch's bookkeeping is in
  // flight, and it is always awaited before returning (or throwing).
  let inFlight: Promise<void> | null = null;
  let failure: { error: unknown } | null = null;
  const lap = stopwatch();
  const settle = async () => {
    if (inFlight) await inFlight;
    inFlight = null;
    if (failure) throw failure.error;
  };
  try {
    for (const batch of batches) {
      const side = batch.side;
      const table = side === 'left' ? m.left.tableRemoteId : m.right.tableRemoteId;
      // Creates and updates are recorded before calling the app: a crash between the write and its
      // bookkeeping is recognised and the write replayed with its key (recoverPendingWrites), so a
      // create is linked rather than copied back, and an update that landed moves the shadow rather
      // than making a later edit of that record look like a conflict with it. Deletes need no
      // record: their cursor has not moved, so the next run reads and writes them again.
      const ops = batch.operations;
      const creates = ops.filter(
        (op): op is Extract<WriteOp, { kind: 'create' | 'update' }> =>
          op.kind === 'update' || (op.kind === 'create' && !(a.stagedChunk && op.linkId === null)),
      );
      // The payload is what a replay needs: a create's fields, not its intended shadow (half the
      // bytes of the bookkeeping a first sync writes per row; a replay derives it, recoveredShadow);
      // an update's intended shadow too (a replay that finds it landed stores it).
      const pending = rowsDoc(
        creates.map(({ intended, ...op }) => ({
          k: op.idempotencyKey,
          l: op.linkId,
          o: op.kind,
          p: { tableMappingId: m.tableMappingId, op: op.kind === 'update' ? { ...op, intended } : op },
        })),
      );
      lap('write: plan batch');
      if (creates.length > 0)
        await sql`insert into pending_write (idempotency_key, owner_id, core_base_id, core_meta_record_id, side, operation, payload)
        select u.k, ${a.ownerId}, ${a.coreBaseId}::uuid, u.l, ${side}, u.o, u.p
          from json_to_recordset(${pending}::json) as u(k text, l uuid, o text, p jsonb)
        on conflict (idempotency_key) do nothing`.execute(db);
      const requests: WriteRequest[] = batch.operations.map((op) =>
        op.kind === 'create'
          ? { kind: 'create', fields: op.fields, idempotencyKey: op.idempotencyKey }
          : op.kind === 'update'
            ? {
                kind: 'update',
                remoteId: op.remoteId,
                fields: op.fields,
                idempotencyKey: op.idempotencyKey,
                expected: op.expected,
              }
            : {
                kind: 'delete',
                remoteId: op.remoteId,
                idempotencyKey: op.idempotencyKey,
                ...(op.expected ? { expected: op.expected } : {}),
              },
      );
      lap('write: record pending writes');
      if (failure) break;
      const results = await a.connectors[side].write(table, requests);
      lap('write: connector');
      await settle();
      lap('write: wait for previous bookkeeping');
      // One transaction per batch; new records (the bulk of a first sync) and updates are applied with
      // a few set-based statements per batch.
      inFlight = db
        .transaction()
        .execute(async (trx) => {
          const created: {
            op: Extract<WriteOp, { kind: 'create' }>;
            remoteId: string;
            postImage: RecordData | null;
          }[] = [];
          const updated: {
            op: Extract<WriteOp, { kind: 'update' }>;
            remoteId: string;
            postImage: RecordData | null;
            before: Shadow | null;
          }[] = [];
          for (const [i, op] of batch.operations.entries()) {
            const r = results[i];
            const followUp = r && !r.ok ? followUpOf(op, r) : null;
            if (followUp) {
              a.followUps.push(followUp);
              continue;
            }
            if (!r?.ok) {
              const error =
                r && !r.ok
                  ? r.error
                  : {
                      code: 'transient' as const,
                      message: 'No result for this item',
                      userFacingMessage: 'The app did not answer for this record.',
                    };
              await recordIssue(trx, a, op, error);
              a.openIssues = true;
              bump(counts, 'failed');
              continue;
            }
            bump(counts, `${op.kind}d_${side}`);
            if (op.kind === 'create' && op.linkId === null)
              created.push({ op, remoteId: r.remoteId, postImage: r.postImage });
            else if (op.kind === 'update' && a.shadows.has(op.linkId))
              updated.push({
                op,
                remoteId: r.remoteId,
                postImage: r.postImage,
                before: a.shadows.get(op.linkId) ?? null,
              });
            else await applySuccess(trx, a, op, r.remoteId, r.postImage);
          }
          if (created.length > 0) await linkCreated(trx, a, created);
          if (updated.length > 0) await storeUpdated(trx, a, updated);
          if (creates.length > 0)
            await sql`delete from pending_write where idempotency_key = any(${creates.map((op) => op.idempotencyKey)}::text[])`.execute(
              trx,
            );
        })
        .catch((error: unknown) => {
          failure = { error };
        });
    }
  } finally {
    if (inFlight) await inFlight;
    lap('write: wait for previous bookkeeping');
  }
  if (failure) throw (failure as { error: unknown }).error;
  if (result.shadowUpdates.length > 0) {
    const u = result.shadowUpdates;
    await sql`update core_meta_record as c set shadow = u.s, shadow_version = c.shadow_version + 1, updated_at = now()
      from json_to_recordset(${rowsDoc(u.map((x) => ({ id: x.linkId, s: x.shadow })))}::json) as u(id uuid, s jsonb)
     where c.id = u.id`.execute(db);
  }
  if (result.unlinked.length)
    await db.deleteFrom('core_meta_record').where('id', 'in', result.unlinked).execute();
  for (const c of result.heldConflicts) {
    // Held once: while it waits for the user, later runs find the same conflict again.
    const open = await db
      .selectFrom('held_conflict')
      .select('id')
      .where('core_meta_record_id', '=', c.linkId)
      .where('column_mapping_id', '=', c.fieldMappingId)
      .where('status', '=', 'open')
      .executeTakeFirst();
    if (open) continue;
    await db
      .insertInto('held_conflict')
      .values({
        owner_id: a.ownerId,
        core_base_id: a.coreBaseId,
        core_meta_record_id: c.linkId,
        column_mapping_id: c.fieldMappingId,
        left_value: JSON.stringify(c.left),
        right_value: JSON.stringify(c.right),
        shadow_value: JSON.stringify(c.shadow),
      })
      .execute();
  }
  for (const d of result.deleteApprovals) {
    const waiting = await db
      .selectFrom('delete_approval')
      .select('id')
      .where('core_meta_record_id', '=', d.linkId)
      .where('status', 'in', ['pending', 'approved'])
      .executeTakeFirst();
    if (waiting) continue;
    await db
      .insertInto('delete_approval')
      .values({
        owner_id: a.ownerId,
        core_base_id: a.coreBaseId,
        core_meta_record_id: d.linkId,
        side: d.side,
        reason: d.reason,
      })
      .execute();
  }
  // One issue per side the breaker tripped on; the deletes themselves wait in the approval queue.
  for (const cb of result.circuitBreakers) {
    await db
      .insertInto('sync_error')
      .values({
        owner_id: a.ownerId,
        core_base_id: a.coreBaseId,
        side: cb.side,
        code: 'mass_delete',
        message: `Run would delete ${cb.wouldDelete} of ${cb.linked} records on the ${cb.side} side`,
        user_facing_message: `This run would have deleted ${cb.wouldDelete} of ${cb.linked} records on the ${cb.side} side at once, so it deleted none of them. They wait for your review on the sync's overview: approve the deletions, or reject them to restore the records.`,
        details: JSON.stringify(cb),
      })
      .execute();
  }
  for (const p of result.problems) {
    if (!p.recordId || p.code === 'relation_pending') continue;
    await recordIssue(
      db,
      a,
      null,
      { code: p.code, message: p.message, userFacingMessage: p.message },
      p.side ?? null,
      p.recordId,
    );
  }
}

/**
 * Deletes of records the user holds in review (pending) or chose to keep (rejected) are not written,
 * whatever a later read shows: the approval queue decides them, not the next run.
 */
async function withoutDecidedDeletes(db: Db, operations: WriteOp[]): Promise<WriteOp[]> {
  const deletes = operations.filter((op) => op.kind === 'delete').map((op) => op.linkId);
  if (deletes.length === 0) return operations;
  // A rejected delete holds until its record is restored (the link whole again); later deletes of
  // the restored record are the user's new edits and go through.
  const held = await db
    .selectFrom('delete_approval')
    .innerJoin('core_meta_record', 'core_meta_record.id', 'delete_approval.core_meta_record_id')
    .select('delete_approval.core_meta_record_id')
    .where('delete_approval.core_meta_record_id', 'in', deletes)
    .where((eb) =>
      eb.or([
        eb('delete_approval.status', '=', 'pending'),
        eb.and([
          eb('delete_approval.status', '=', 'rejected'),
          eb.or([
            eb('core_meta_record.left_remote_id', 'is', null),
            eb('core_meta_record.right_remote_id', 'is', null),
          ]),
        ]),
      ]),
    )
    .execute();
  if (held.length === 0) return operations;
  const skip = new Set(held.map((h) => h.core_meta_record_id));
  return operations.filter((op) => op.kind !== 'delete' || !skip.has(op.linkId));
}

/** Links the records a batch created, logs the operations and resolves their issues: a few statements per batch. */
async function linkCreated(
  db: Db,
  a: RunContext & { openIssues: boolean },
  created: { op: Extract<WriteOp, { kind: 'create' }>; remoteId: string; postImage: RecordData | null }[],
) {
  const lefts = created.map(({ op, remoteId }) => (op.side === 'left' ? remoteId : op.sourceId));
  const rights = created.map(({ op, remoteId }) => (op.side === 'right' ? remoteId : op.sourceId));
  const doc = rowsDoc(
    created.map(({ op, remoteId, postImage }, i) => ({
      l: lefts[i],
      r: rights[i],
      s: shadowAfterWrite(a.m.spec, op, postImage ?? { id: remoteId, fields: op.fields }),
    })),
  );
  // Each operation finds its link by the pair of ids.
  const rows = (
    await sql`insert into core_meta_record (owner_id, core_base_id, table_mapping_id, left_remote_id, right_remote_id, shadow, shadow_version)
      select ${a.ownerId}, ${a.coreBaseId}::uuid, ${a.m.tableMappingId}::uuid, u.l, u.r, u.s, 1
        from json_to_recordset(${doc}::json) as u(l text, r text, s jsonb)
      returning id, left_remote_id, right_remote_id`.execute(db)
  ).rows as { id: string; left_remote_id: string; right_remote_id: string }[];
  const linkOf = new Map(rows.map((r) => [`${r.left_remote_id}\u0000${r.right_remote_id}`, r.id]));
  await logOperations(
    db,
    a,
    created.map(({ op, remoteId, postImage }, i) => ({
      l: linkOf.get(`${lefts[i]}\u0000${rights[i]}`) ?? null,
      s: op.side,
      o: 'create' as const,
      r: remoteId,
      b: null,
      a: postImage?.fields ?? op.fields,
    })),
  );
  if (a.openIssues)
    await resolveIssues(
      db,
      a,
      created.flatMap(({ op, remoteId }) => [remoteId, op.sourceId]),
    );
}

/** Stores the shadows of a batch's updates, with the operations (before: the previous shadow's values). */
async function storeUpdated(
  db: Db,
  a: RunContext & { openIssues: boolean },
  updated: {
    op: Extract<WriteOp, { kind: 'update' }>;
    remoteId: string;
    postImage: RecordData | null;
    before: Shadow | null;
  }[],
) {
  // Only the shadow entries that moved are sent and merged (`||`): an edit of one field of a wide
  // record moves one entry, and rewriting the whole shadow per record was most of a bulk update's cost.
  const doc = rowsDoc(
    updated.map(({ op, remoteId, postImage, before }) => ({
      id: op.linkId,
      s: movedEntries(
        before,
        shadowAfterWrite(a.m.spec, op, postImage ?? { id: remoteId, fields: op.fields }),
      ),
    })),
  );
  await sql`update core_meta_record as c set shadow = c.shadow || u.s, shadow_version = c.shadow_version + 1, updated_at = now()
    from json_to_recordset(${doc}::json) as u(id uuid, s jsonb)
   where c.id = u.id`.execute(db);
  // Before and after of the fields written (the whole post-image would repeat every unchanged column).
  await logOperations(
    db,
    a,
    updated.map(({ op, remoteId, postImage, before }) => ({
      l: op.linkId,
      s: op.side,
      o: 'update' as const,
      r: remoteId,
      // What the target held: the values the conditional write found there (what it overwrote),
      // else the shadow's.
      b: { ...beforeValues(a.m, op, before ?? {}), ...op.expected },
      a: postImage ? pick(postImage.fields, Object.keys(op.fields)) : op.fields,
    })),
  );
  if (a.openIssues)
    await resolveIssues(
      db,
      a,
      updated.map((u) => u.remoteId),
    );
}

/** The entries of `next` that differ from `before` (all of them without a shadow before). */
function movedEntries(before: Shadow | null, next: Shadow): Shadow {
  if (!before) return next;
  const moved: Shadow = {};
  for (const [k, v] of Object.entries(next)) {
    const was = before[k];
    if (!was || JSON.stringify(was) !== JSON.stringify(v)) moved[k] = v;
  }
  return moved;
}

const pick = (fields: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => k in fields).map((k) => [k, fields[k]]));

/**
 * The shadow of a create replayed after a crash (its payload keeps no intended shadow): each written
 * field as the value on both sides. If the source held a value that converts differently, the next
 * read of it finds a change and sends it again, which is the right outcome for a record just made.
 */
function recoveredShadow(m: MappingPlan, op: Extract<WriteOp, { kind: 'create' | 'update' }>): Shadow {
  const shadow: Shadow = {};
  for (const fm of m.spec.fields) {
    const target = op.side === 'left' ? fm.left : fm.right;
    if (!(target.id in op.fields)) continue;
    const v = op.fields[target.id] ?? null;
    shadow[fm.id] = { l: v, r: v };
  }
  return shadow;
}

/** Before: what the written side held, field by field, from the previous shadow. */
function beforeValues(
  m: MappingPlan,
  op: Extract<WriteOp, { kind: 'create' | 'update' }>,
  prevShadow: Shadow,
) {
  const was: Record<string, unknown> = {};
  for (const fm of m.spec.fields) {
    const target = op.side === 'left' ? fm.left : fm.right;
    const sf = prevShadow[fm.id];
    if (sf && target.id in op.fields) was[target.id] = op.side === 'left' ? sf.l : sf.r;
  }
  return was;
}

/** A per-record failure becomes an issue (once while it stays open), with the app's message. */
async function recordIssue(
  db: Db,
  a: RunContext,
  op: WriteOp | null,
  error: { code: string; message: string; userFacingMessage: string },
  side: 'left' | 'right' | null = op?.side ?? null,
  remoteId: string | null = op && op.kind !== 'create'
    ? op.remoteId
    : op?.kind === 'create'
      ? op.sourceId
      : null,
) {
  const existing = await db
    .selectFrom('sync_error')
    .select('id')
    .where('core_base_id', '=', a.coreBaseId)
    .where('remote_id', '=', remoteId ?? '')
    .where('code', '=', error.code)
    // The side is part of an issue's identity: the same id may fail on both sides at once.
    .where((eb) => (side === null ? eb('side', 'is', null) : eb('side', '=', side)))
    // A retried issue that fails again is the same issue, open again (not resolved plus a new one).
    .where('status', 'in', ['open', 'retrying'])
    .executeTakeFirst();
  if (existing) {
    await db
      .updateTable('sync_error')
      .set((eb) => ({ status: 'open', attempts: eb('attempts', '+', 1), updated_at: new Date() }))
      .where('id', '=', existing.id)
      .execute();
    return;
  }
  await db
    .insertInto('sync_error')
    .values({
      owner_id: a.ownerId,
      core_base_id: a.coreBaseId,
      core_meta_record_id: op?.linkId ?? null,
      side,
      remote_id: remoteId,
      code: error.code,
      message: error.message,
      user_facing_message: error.userFacingMessage,
      details: JSON.stringify({ operation: op?.kind ?? null, tableMappingId: a.m.tableMappingId }),
    })
    .execute();
}

async function applySuccess(
  db: Db,
  a: RunContext,
  op: WriteOp,
  remoteId: string,
  postImage: { id: string; fields: Record<string, unknown> } | null,
  recovering = false,
) {
  const now = new Date();
  let linkId: string | null = op.linkId;
  let before: unknown = null;
  if (op.kind === 'delete') {
    await db.deleteFrom('core_meta_record').where('id', '=', op.linkId).execute();
    linkId = null;
  } else {
    // A replayed create returns the record as it is now (maybe edited since): the shadow then takes
    // what we wrote, so those later edits still count as changes.
    const shadow = recovering
      ? (op.intended ?? recoveredShadow(a.m, op))
      : shadowAfterWrite(a.m.spec, op, (postImage as never) ?? { id: remoteId, fields: op.fields });
    if (op.kind === 'create' && op.linkId === null) {
      const row = await db
        .insertInto('core_meta_record')
        .values({
          owner_id: a.ownerId,
          core_base_id: a.coreBaseId,
          table_mapping_id: a.m.tableMappingId,
          left_remote_id: op.side === 'left' ? remoteId : op.sourceId,
          right_remote_id: op.side === 'right' ? remoteId : op.sourceId,
          shadow: JSON.stringify(shadow),
          shadow_version: 1,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      linkId = row.id;
    } else {
      const prev = await db
        .selectFrom('core_meta_record')
        .select('shadow')
        .where('id', '=', op.linkId as string)
        .executeTakeFirst();
      before = {
        ...beforeValues(a.m, op, (prev?.shadow ?? {}) as Shadow),
        // What the target held when it was written over (a conditional update checked it).
        ...(op.kind === 'update' ? op.expected : {}),
      };
      await db
        .updateTable('core_meta_record')
        .set((eb) => ({
          shadow: JSON.stringify(shadow),
          shadow_version: eb('shadow_version', '+', 1),
          updated_at: now,
          ...(op.kind === 'create'
            ? { [op.side === 'left' ? 'left_remote_id' : 'right_remote_id']: remoteId }
            : {}),
        }))
        .where('id', '=', op.linkId as string)
        .execute();
    }
  }
  await db
    .insertInto('sync_log_entry')
    .values({
      owner_id: a.ownerId,
      sync_log_id: a.syncLogId,
      core_base_id: a.coreBaseId,
      core_meta_record_id: linkId,
      side: op.side,
      operation: op.kind,
      remote_id: remoteId,
      before: before === null ? null : JSON.stringify(before),
      after:
        op.kind === 'delete' ? null : JSON.stringify(postImage?.fields ?? ('fields' in op ? op.fields : {})),
    })
    .execute();
  // A record that syncs again resolves its open issues.
  await db
    .updateTable('sync_error')
    .set({ status: 'resolved', updated_at: now })
    .where('core_base_id', '=', a.coreBaseId)
    .where('remote_id', 'in', [remoteId, ...(op.kind === 'create' ? [op.sourceId] : [])])
    .where('status', '!=', 'resolved')
    .execute();
}
