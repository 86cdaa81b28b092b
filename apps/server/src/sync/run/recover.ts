import { NIL_ID } from '@lockstep/contract';
import type { WriteOp } from '@lockstep/engine';
import { applySuccess } from './bookkeeping';
import { recordIssue } from './issues';
import type { Deps, RunContext } from './run-context';

/**
 * Writes a crash interrupted (recorded as pending, never confirmed) are sent again with their
 * idempotency keys before anything is read. Updates first: one that had landed (the app knows its
 * key) or lands now moves the shadow to what it wrote, so an edit made on that record since is read
 * as the later edit it is, not as a conflict with an earlier value; one refused (the record changed
 * and it never landed) is dropped, and the next read finds both edits and the table pair's rule
 * decides. Then creates: the record the app already made gets linked instead of being read as new
 * and copied back.
 */
export async function recoverPendingWrites(deps: Deps, a: RunContext) {
  await recoverPending(deps, a, 'update');
  await recoverPending(deps, a, 'create');
}

type Pending = { key: string; op: Extract<WriteOp, { kind: 'create' | 'update' }> };

async function recoverPending(deps: Deps, a: RunContext, kind: 'create' | 'update') {
  const rows = await deps.db
    .selectFrom('pending_write')
    .select(['idempotency_key', 'payload'])
    .where('core_base_id', '=', a.coreBaseId)
    .where('operation', '=', kind)
    .execute();
  // A row holds a batch's operations (`ops`), or one operation (`op`, rows written before batches).
  const pending: Pending[] = rows.flatMap((row) => {
    const p = row.payload as { tableMappingId: string; op?: WriteOp; ops?: WriteOp[] };
    if (p.tableMappingId !== a.m.tableMappingId) return [];
    return (p.ops ?? (p.op ? [p.op] : []))
      .filter((op): op is Pending['op'] => op.kind === kind)
      .map((op) => ({ key: row.idempotency_key, op }));
  });
  // A row is deleted once all its operations are settled (a batch row may span several calls).
  const left = new Map<string, number>();
  for (const p of pending) left.set(p.key, (left.get(p.key) ?? 0) + 1);
  for (const side of ['left', 'right'] as const) {
    const mine = pending.filter((p) => p.op.side === side);
    const table = side === 'left' ? a.m.left.tableRemoteId : a.m.right.tableRemoteId;
    const size = Math.max(1, a.connectors[side].capabilities.batchSize);
    for (let i = 0; i < mine.length; i += size) {
      const batch = mine.slice(i, i + size);
      // The app recognises each key: a write it already made is returned, not made twice.
      const results = await a.connectors[side].write(
        table,
        batch.map(({ op }) =>
          op.kind === 'create'
            ? { kind: 'create' as const, fields: op.fields, idempotencyKey: op.idempotencyKey }
            : {
                kind: 'update' as const,
                remoteId: op.remoteId,
                fields: op.fields,
                idempotencyKey: op.idempotencyKey,
                expected: op.expected,
              },
        ),
      );
      const settled: string[] = [];
      for (const p of batch) {
        const n = (left.get(p.key) ?? 1) - 1;
        left.set(p.key, n);
        if (n === 0) settled.push(p.key);
      }
      await deps.db.transaction().execute(async (trx) => {
        // An update of a record unlinked meanwhile has no shadow to move.
        const linked = new Set(
          (
            await trx
              .selectFrom('core_meta_record')
              .select('id')
              .where('id', 'in', [
                ...batch.map((p) => p.op.linkId).filter((id): id is string => id !== null),
                NIL_ID, // never a link id: keeps the `in` list from being empty
              ])
              .execute()
          ).map((r) => r.id),
        );
        for (const [j, p] of batch.entries()) {
          const r = results[j];
          if (!r?.ok || (p.op.linkId !== null && !linked.has(p.op.linkId))) continue;
          await applySuccess(trx, a, p.op, r.remoteId, r.postImage, true);
        }
        if (settled.length > 0)
          await trx.deleteFrom('pending_write').where('idempotency_key', 'in', settled).execute();
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
