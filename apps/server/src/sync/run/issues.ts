import type { ReconcileResult, WriteOp } from '@lockstep/engine';
import type { Db } from '../../db/database';
import type { Side } from '../../db/schema';
import { nameFieldOf } from './record-names';
import type { RunContext } from './run-context';

/**
 * A connection whose credentials fail: marked broken (only the side that failed, when known), the
 * sync paused, the user told (an issue on that connection).
 */
export async function pauseForBrokenConnection(
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

export async function hasOpenIssues(db: Db, coreBaseId: string) {
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
 * What the engine decided for the user rather than wrote: conflicts held for review (once), deletes
 * waiting for approval (once), one issue per side the mass-delete breaker tripped on, and a record's
 * problems as issues.
 */
export async function recordOutcomes(db: Db, a: RunContext, result: ReconcileResult) {
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
 * The name of the record an issue is about, as its app shows it: a create's id is its source's (on
 * the other side); else the record as read, or the name the operation writes.
 */
function recordNameFor(a: RunContext, op: WriteOp | null, side: Side | null, remoteId: string | null) {
  if (!side || !remoteId) return null;
  const own = op?.kind === 'create' ? (side === 'left' ? 'right' : 'left') : side;
  const read = a.recordName?.(own, remoteId) ?? null;
  if (read || !op || op.kind === 'delete') return read;
  const field = nameFieldOf(a.m);
  const written = field ? op.intended[field.id] : undefined;
  const value = written ? (own === 'left' ? written.l : written.r) : null;
  return value === null || value === undefined || value === '' ? null : String(value);
}

/** A per-record failure becomes an issue (once while it stays open), with the app's message. */
export async function recordIssue(
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
  /** The linked pair the issue is about (an operation's own link, unless given). */
  linkId: string | null = op?.linkId ?? null,
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
      core_meta_record_id: linkId,
      side,
      remote_id: remoteId,
      code: error.code,
      message: error.message,
      user_facing_message: error.userFacingMessage,
      details: JSON.stringify({
        operation: op?.kind ?? null,
        tableMappingId: a.m.tableMappingId,
        recordName: recordNameFor(a, op, side, remoteId),
      }),
    })
    .execute();
}
