import { reconcile } from '@lockstep/engine';
import { relationResolver, storePendingRelations } from '../relations';
import { type RetriedIssue, readBothSides, retriedRecords, settleRetriedIssues } from '../retry-records';
import type { FollowUp } from '../write-follow-ups';
import { byId, type Deps, type RunContext } from './run-context';
import { applyResult, settleFollowUps } from './write';

/**
 * A retry by id: the retried records are read again on both sides (a record gone is a delete),
 * reconciled and written like any change, then each retried issue is resolved only if its record is
 * now in step on both sides (see settleRetriedIssues).
 */
export async function retryRecords(
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
