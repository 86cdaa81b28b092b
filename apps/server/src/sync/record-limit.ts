import type { WriteOp } from '@lockstep/engine';
import type { Db } from '../db/database';
import { effectivePlan } from '../services/plan-guard';
import { rescanTables } from '../services/rescan';
import type { MappingPlan } from './load-sync-plan';
import { openOrCountIssue, resolveScopedIssues } from './scoped-issues';

/** Synced records the owner's plan still has room for (each linked record counts once). */
export async function recordRoom(db: Db, ownerId: string, localDevPlan: boolean): Promise<number> {
  const { limits } = await effectivePlan(db, ownerId, localDevPlan);
  return Math.max(0, limits.recordLimit - limits.recordCount);
}

/**
 * Live runs respect the record limit as applying a preview does: creates of new records beyond the
 * room left are held back (not written), the rest of the run goes on, and the user is told. Nothing
 * is lost: the held records stay in their app, and once there is room (see releaseHeldCreates) the
 * table pair is read in full again, which finds them.
 */
export async function holdCreatesOverLimit(
  db: Db,
  a: { ownerId: string; coreBaseId: string; m: MappingPlan; localDevPlan: boolean },
  operations: WriteOp[],
  /** A dry pass holds the same creates back and tells nobody (it stores nothing). */
  options: { openIssue: boolean } = { openIssue: true },
): Promise<WriteOp[]> {
  const creates = operations.filter((op) => op.kind === 'create' && op.linkId === null).length;
  if (creates === 0) return operations;
  const room = await recordRoom(db, a.ownerId, a.localDevPlan);
  if (creates <= room) return operations;
  let allowed = room;
  const kept = operations.filter((op) => op.kind !== 'create' || op.linkId !== null || allowed-- > 0);
  const held = creates - room;
  if (!options.openIssue) return kept;
  await openOrCountIssue(
    db,
    { coreBaseId: a.coreBaseId, scope: 'record_limit', tableMappingId: a.m.tableMappingId },
    {
      ownerId: a.ownerId,
      externalConnectionId: null,
      side: null,
      code: 'record_limit',
      message: `record limit reached: ${held} new records held`,
      userFacingMessage: `Your plan's record limit is reached, so ${held} new record${held === 1 ? ' was' : 's were'} not created on the other side (edits and deletes of synced records go on). Upgrade your plan or remove records: Lockstep creates them once there is room.`,
      details: { held },
    },
  );
  return kept;
}

/**
 * Once the plan has room again, a table pair that held creates back is read in full (both tables),
 * so the records it held are found and created; the issue resolves (a run still over the limit
 * opens it again).
 */
export async function releaseHeldCreates(
  db: Db,
  a: { ownerId: string; coreBaseId: string; m: MappingPlan; localDevPlan: boolean },
): Promise<boolean> {
  const open = await db
    .selectFrom('sync_error')
    .select('id')
    .where('core_base_id', '=', a.coreBaseId)
    .where('code', '=', 'record_limit')
    .where('status', '!=', 'resolved')
    .where((eb) => eb(eb.ref('details', '->>').key('tableMappingId'), '=', a.m.tableMappingId))
    .executeTakeFirst();
  if (!open || (await recordRoom(db, a.ownerId, a.localDevPlan)) === 0) return false;
  await rescanTables(db, a.ownerId, [a.m.left.tableId, a.m.right.tableId]);
  await resolveScopedIssues(db, {
    coreBaseId: a.coreBaseId,
    scope: 'record_limit',
    tableMappingId: a.m.tableMappingId,
  });
  return true;
}
