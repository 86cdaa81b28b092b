import { reconcile } from '@lockstep/engine';
import { stopwatch } from '../chunk-timings';
import { firstSyncStep, markFirstSyncSent, storeFirstSyncPosition } from '../first-sync';
import type { MappingPlan } from '../load-sync-plan';
import { pageSizeOf } from '../page-size';
import { holdCreatesOverLimit, releaseHeldCreates } from '../record-limit';
import { relationResolver, storePendingRelations } from '../relations';
import { retriedIssues, settleRetriedIssues } from '../retry-records';
import { sideConnector } from '../side-connector';
import { assertMappedFieldsPresent } from '../table-problems';
import type { FollowUp } from '../write-follow-ups';
import { trace } from './bookkeeping';
import { readCursor, type StoredCursor, storeCursor } from './cursors';
import { hasOpenIssues } from './issues';
import { findLeftovers } from './leftovers';
import { hasLinks, linkMatches, loadLinks, toLink } from './links';
import { recordNamer } from './record-names';
import { executeApprovedDeletes, recoverPendingWrites } from './recover';
import { retryRecords } from './retry';
import { byId, type Counts, type Deps } from './run-context';
import { applyResult, settleFollowUps } from './write';

/**
 * One chunk of one table pair, stage after stage (each in its own file of this folder):
 * recover (recover.ts, retry.ts) -> read (the cursors' pages, or a staged first-sync chunk; links.ts)
 * -> reconcile (the engine) -> write and record (write.ts, bookkeeping.ts) -> issues (issues.ts) ->
 * cursors (cursors.ts), stored last. Returns whether this pair has more to do.
 *
 * A dry pass (deps.dryRun) reads and reconciles the same way and stores nothing: the stages that
 * write (recovery, retries, held creates, first-sync staging, traces, pending relations) are
 * skipped, applyResult plans instead of writing, and the cursors move in memory only.
 */
export async function runMapping(
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
  const dry = deps.dryRun;
  const [left, right] = await Promise.all([
    sideConnector(deps, m.left, 'left'),
    sideConnector(deps, m.right, 'right'),
  ]);
  const context = { ownerId, coreBaseId, syncLogId, m, connectors: { left, right }, counts };
  // What this chunk may have to do besides reading, asked at once (a dry pass does none of it).
  const leftovers = dry ? null : await findLeftovers(db, coreBaseId, m.tableMappingId);
  if (leftovers?.pendingWrites) await recoverPendingWrites(deps, context);
  if (leftovers?.approvedDeletes) await executeApprovedDeletes(deps, context);
  lap('recover pending writes');
  // Issues being retried: where both apps read records by id, those records are read again on both
  // sides and reconciled now; otherwise this pair's tables are read in full again.
  const limits = { ownerId, coreBaseId, m, localDevPlan: deps.localDevPlan ?? false };
  // Creates held back by the record limit are looked for again once the plan has room.
  if (leftovers?.heldCreates) await releaseHeldCreates(db, limits);
  const retried = leftovers?.retrying ? await retriedIssues(db, coreBaseId, m.tableMappingId) : [];
  lap('held creates, retries');
  const byIds = retried.length > 0 && left.readRecords !== undefined && right.readRecords !== undefined;
  if (byIds) await retryRecords(deps, context, retried, targets);
  const retrying = retried.length > 0 && !byIds;
  const stored = await Promise.all([
    readCursor(db, m.left.tableId, dry),
    readCursor(db, m.right.tableId, dry),
  ]);
  const [cursorL, cursorR] = retrying ? [null, null] : stored.map((c) => c.cursor);
  const cursor = { left: cursorL ?? null, right: cursorR ?? null };
  const firstSync = cursor.left === null && cursor.right === null && !(await hasLinks(db, m.tableMappingId));
  if (dry) await assertFirstSyncDone(db, m, firstSync);
  // A first sync with a match field reads both sides whole before writing (see first-sync.ts); its
  // staging goes on while its state is kept.
  const mayStage = leftovers?.firstSyncStaging || (firstSync && Boolean(m.matchOn.primary));
  const staged =
    retrying || dry || !mayStage
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
  // Awaited with the reconcile's trace: a round trip less on the way to the writes.
  const readTrace = dry
    ? null
    : trace(db, ownerId, coreBaseId, syncLogId, 'read', {
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
  readTrace?.catch(() => {}); // awaited below; this only keeps an early failure from being unhandled
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
  const planned = result.operations.length;
  result.operations = await holdCreatesOverLimit(db, limits, result.operations, { openIssue: !dry });
  const heldNow = result.operations.length < planned;
  // Before the writes: a crash after them still leaves the relations to write later.
  if (!dry) await storePendingRelations(db, context, result.pendingRelations);
  if (!dry)
    await Promise.all([
      readTrace,
      trace(db, ownerId, coreBaseId, syncLogId, 'reconcile', {
        tableMappingId: m.tableMappingId,
        ...result.stats,
        problems: result.problems.length,
        circuitBreakers: result.circuitBreakers,
      }),
    ]);
  lap('pending relations, limits, trace');
  const shadows = new Map(links.map((l) => [l.id, l.shadow]));
  const followUps: FollowUp[] = [];
  const named = { ...context, recordName: recordNamer(m, { left: pageL.records, right: pageR.records }) };
  if (staged.kind === 'pages' && !dry) await markFirstSyncSent(db, staged.position);
  await applyResult(deps, {
    ...named,
    result,
    shadows,
    // Issues open when the chunk began, or that its recovery or retries may have opened: a record
    // that syncs resolves its own.
    openIssues: Boolean(
      leftovers?.openIssues ||
        ((leftovers?.pendingWrites || leftovers?.approvedDeletes || retried.length > 0) &&
          (await hasOpenIssues(db, coreBaseId))),
    ),
    stagedChunk: staged.kind === 'pages',
    // Pending writes were replayed (recover) before this read, so a page's writes are new; a staged
    // chunk says whether it is being reconciled again.
    freshKeys: staged.kind === 'pages' ? staged.freshKeys : true,
    followUps,
  });
  lap('write and record');
  // Writes refused because the target changed under them or already held the record: reconciled
  // again now, with the source as read and the target as it is (before the cursors move past them).
  await settleFollowUps(deps, named, followUps, {
    read: { left: byId(pageL.records), right: byId(pageR.records) },
    resolveRelation,
  });
  lap('follow-ups');

  // Cursors last: only after everything they cover is applied. A staged first sync keeps its own
  // position and sets the cursors when it ends.
  if (staged.kind === 'pages') await storeFirstSyncPosition(db, staged.position);
  if (staged.kind !== 'pages')
    await Promise.all([
      storeCursor(db, ownerId, m.left.tableId, stored[0] as StoredCursor, pageL, dry),
      storeCursor(db, ownerId, m.right.tableId, stored[1] as StoredCursor, pageR, dry),
    ]);
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
  if (!dry && (leftovers?.heldCreates || heldNow) && (await releaseHeldCreates(db, limits))) return true;
  return pageL.hasMore || pageR.hasMore;
}

/** Thrown by a dry pass of a table pair whose first sync is not done: there is nothing to compare with yet. */
export class FirstSyncNotDone extends Error {}

async function assertFirstSyncDone(db: Deps['db'], m: MappingPlan, firstSync: boolean) {
  const staging = await db
    .selectFrom('first_sync_state')
    .select('table_mapping_id')
    .where('table_mapping_id', '=', m.tableMappingId)
    .executeTakeFirst();
  if (firstSync || staging)
    throw new FirstSyncNotDone(
      'The first sync of this table pair is not done yet: run it first, then a dry pass shows what each later run would write.',
    );
}
