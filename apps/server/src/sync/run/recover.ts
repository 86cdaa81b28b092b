import type { WriteOp } from '@lockstep/engine';
import { applySuccess } from './bookkeeping';
import { recordIssue } from './issues';
import type { Deps, RunContext } from './run-context';

/**
 * Creates a crash interrupted (recorded as pending, never confirmed) are sent again with their
 * idempotency keys before anything is read, so the record the app already made gets linked instead
 * of being read as new and copied back.
 */
export async function recoverPendingCreates(deps: Deps, a: RunContext) {
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
export async function recoverPendingUpdates(deps: Deps, a: RunContext) {
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
export async function executeApprovedDeletes(deps: Deps, a: RunContext) {
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
