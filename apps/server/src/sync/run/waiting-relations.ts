import { writePendingRelations } from '../relations';
import { sideConnector } from '../side-connector';
import { logOperations } from './bookkeeping';
import { recordIssue } from './issues';
import { bump, type Deps, type RunContext } from './run-context';

/** Writes the relations of one mapping that were waiting for their linked records to sync. */
export async function writeWaitingRelations(
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
