import type { Db } from '../db/database';
import type { Side } from '../db/schema';

/**
 * Issues about something wider than a record (a table pair, an app that cannot be reached): one
 * open issue per scope, counted again while the problem lasts, resolved when it is gone. The scope
 * lives in `details.scope` (with `details.tableMappingId` for a table pair).
 */
type ScopeKey = {
  coreBaseId: string;
  scope: 'table' | 'outage' | 'record_limit';
  tableMappingId?: string;
  code?: string;
};

function openInScope(db: Db, key: ScopeKey) {
  let q = db
    .selectFrom('sync_error')
    .select('id')
    .where('core_base_id', '=', key.coreBaseId)
    .where('status', 'in', ['open', 'retrying'])
    .where((eb) => eb(eb.ref('details', '->>').key('scope'), '=', key.scope));
  if (key.tableMappingId)
    q = q.where((eb) =>
      eb(eb.ref('details', '->>').key('tableMappingId'), '=', key.tableMappingId as string),
    );
  if (key.code) q = q.where('code', '=', key.code);
  return q;
}

/** Counts the scope's open issue again with the latest text, or opens one. */
export async function openOrCountIssue(
  db: Db,
  key: ScopeKey,
  issue: {
    ownerId: string;
    externalConnectionId: string | null;
    side: Side | null;
    code: string;
    message: string;
    userFacingMessage: string;
    /** More to keep with the issue, beside its scope. */
    details?: Record<string, unknown>;
  },
) {
  const open = await openInScope(db, key).executeTakeFirst();
  if (open) {
    await db
      .updateTable('sync_error')
      .set((eb) => ({
        message: issue.message,
        user_facing_message: issue.userFacingMessage,
        attempts: eb('attempts', '+', 1),
        updated_at: new Date(),
      }))
      .where('id', '=', open.id)
      .execute();
    return;
  }
  await db
    .insertInto('sync_error')
    .values({
      owner_id: issue.ownerId,
      core_base_id: key.coreBaseId,
      external_connection_id: issue.externalConnectionId,
      side: issue.side,
      remote_id: null,
      code: issue.code,
      message: issue.message,
      user_facing_message: issue.userFacingMessage,
      details: JSON.stringify({
        ...issue.details,
        scope: key.scope,
        ...(key.tableMappingId ? { tableMappingId: key.tableMappingId } : {}),
      }),
    })
    .execute();
}

/** The problem is gone: the scope's open issues are resolved. */
export async function resolveScopedIssues(db: Db, key: Omit<ScopeKey, 'code'>) {
  await db
    .updateTable('sync_error')
    .set({ status: 'resolved', updated_at: new Date() })
    .where('id', 'in', openInScope(db, key))
    .execute();
}
