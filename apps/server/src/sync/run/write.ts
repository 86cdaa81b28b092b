import type { TableConnector, WriteRequest } from '@lockstep/connectors';
import { planWrites, type RecordData, type Shadow, type WriteOp } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { toStoredShadow } from '../../db/stored-shadow';
import { stopwatch } from '../chunk-timings';
import { storePendingRelations } from '../relations';
import { FOLLOW_UP_ROUNDS, type FollowUp, followUpOf, reconcileFollowUps } from '../write-follow-ups';
import { applySuccess, linkCreated, storeUpdated } from './bookkeeping';
import { recordIssue, recordOutcomes } from './issues';
import { type ApplyInput, bump, type Deps, pendingBatchKey, type RunContext, rowsDoc } from './run-context';

/** Write batches of at most this many, so a page's batches can be pipelined (see applyResult). */
export const PIPELINED_BATCH = 1000;

/** A side's write batch: its connector's batch, pipelined, unless it writes big jobs cheaper whole. */
export const writeBatchOf = (c: TableConnector) =>
  c.capabilities.bulkWriteSize ?? Math.min(c.capabilities.batchSize, PIPELINED_BATCH);

/**
 * Reconciles refused writes again, round after round (a round's own writes may be refused too, if
 * the record keeps changing), up to FOLLOW_UP_ROUNDS; what is left then is an issue, and nothing
 * was overwritten.
 */
export async function settleFollowUps(
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

export async function applyResult(deps: Deps, a: ApplyInput) {
  const { db } = deps;
  const { m, result, counts } = a;
  bump(counts, 'echoes', result.stats.echoes);
  bump(counts, 'conflicts', result.stats.conflicts);
  const operations = await withoutDecidedDeletes(db, result.operations);
  // A dry pass: what would be written is planned, and nothing is written or recorded.
  if (deps.dryRun) return deps.dryRun.plan(a, operations);
  const batches = planWrites(operations, {
    left: writeBatchOf(a.connectors.left),
    right: writeBatchOf(a.connectors.right),
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
  /** Records a batch's creates and updates as pending (one row per kind); returns the rows' keys. */
  const recordPending = async (batch: (typeof batches)[number]): Promise<string[]> => {
    const side = batch.side;
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
    // One row per kind per batch (not one per record: a 10,000-row update inserted and deleted
    // 10,000 rows). The payload is what a replay needs: a create's fields, not its intended
    // shadow (a replay derives it, recoveredShadow); an update's intended shadow too (a replay
    // that finds it landed stores it).
    const pendingRows = (['create', 'update'] as const).flatMap((kind) => {
      const mine = creates.filter((op) => op.kind === kind);
      if (mine.length === 0) return [];
      return [
        {
          k: pendingBatchKey(kind, mine[0]?.idempotencyKey as string),
          o: kind,
          p: {
            tableMappingId: m.tableMappingId,
            ops: mine.map(({ intended, ...op }) => (op.kind === 'update' ? { ...op, intended } : op)),
          },
        },
      ];
    });
    if (pendingRows.length > 0)
      await sql`insert into pending_write (idempotency_key, owner_id, core_base_id, side, operation, payload)
    select u.k, ${a.ownerId}, ${a.coreBaseId}::uuid, ${side}, u.o, u.p
      from json_to_recordset(${rowsDoc(pendingRows)}::json) as u(k text, o text, p json)
    on conflict (idempotency_key) do nothing`.execute(db);
    return pendingRows.map((r) => r.k);
  };
  // The next batch is recorded while this one is written to the app (its rows only say a write
  // may have been sent: a replay of one never sent makes the write the run meant to make).
  const recorded: (Promise<string[]> | undefined)[] = [];
  const recordOf = (i: number) => {
    const batch = batches[i];
    if (!batch) return undefined;
    if (!recorded[i]) {
      const p = recordPending(batch);
      p.catch(() => {}); // awaited below; this only keeps an early failure from being unhandled
      recorded[i] = p;
    }
    return recorded[i];
  };
  try {
    for (const [index, batch] of batches.entries()) {
      const side = batch.side;
      const table = side === 'left' ? m.left.tableRemoteId : m.right.tableRemoteId;
      const pendingKeys = (await recordOf(index)) ?? [];
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
      const writing = a.connectors[side].write(table, requests, { freshKeys: a.freshKeys === true });
      recordOf(index + 1);
      const results = await writing;
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
          if (pendingKeys.length > 0)
            await sql`delete from pending_write where idempotency_key = any(${pendingKeys}::text[])`.execute(
              trx,
            );
        })
        .catch((error: unknown) => {
          failure = { error };
        });
    }
  } finally {
    if (inFlight) await inFlight;
    // Nothing of this call is left running on the database when it returns.
    await Promise.allSettled(recorded.filter((p) => p !== undefined));
    lap('write: wait for previous bookkeeping');
  }
  if (failure) throw (failure as { error: unknown }).error;
  if (result.shadowUpdates.length > 0) {
    const u = result.shadowUpdates;
    await sql`update core_meta_record as c set shadow = u.s, shadow_version = c.shadow_version + 1, updated_at = now()
      from json_to_recordset(${rowsDoc(u.map((x) => ({ id: x.linkId, s: toStoredShadow(x.shadow) })))}::json) as u(id uuid, s json)
     where c.id = u.id`.execute(db);
  }
  if (result.unlinked.length)
    await db.deleteFrom('core_meta_record').where('id', 'in', result.unlinked).execute();
  await recordOutcomes(db, a, result);
}

/**
 * Deletes of records the user holds in review (pending) or chose to keep (rejected) are not written,
 * whatever a later read shows: the approval queue decides them, not the next run.
 */
export async function withoutDecidedDeletes(db: Db, operations: WriteOp[]): Promise<WriteOp[]> {
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
