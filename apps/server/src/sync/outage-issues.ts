import { ConnectorError } from '@lockstep/connectors';
import type { Db } from '../db/database';
import { failedSideOf } from './table-problems';

/**
 * An app that cannot be reached (a server down, a network failure, 5xx after 5xx): the run is
 * retried with backoff by the queue, which alone would be a silent failure. Once a retry has failed
 * too, the sync gets one issue saying what fails and that Lockstep keeps trying; the next chunk that
 * runs through resolves it.
 */
export async function raiseOutageIssue(db: Db, coreBaseId: string, error: unknown) {
  const base = await db
    .selectFrom('core_base')
    .select('owner_id')
    .where('id', '=', coreBaseId)
    .executeTakeFirst();
  if (!base) return;
  const where = failedSideOf(error);
  const why =
    error instanceof ConnectorError
      ? error.userFacingMessage
      : 'Lockstep failed unexpectedly while running this sync.';
  const text = `${where ? `The ${where.side} app: ` : ''}${why} Lockstep keeps retrying with backoff; the sync resumes by itself once this clears.`;
  const message = error instanceof Error ? error.message : String(error);
  const open = await db
    .selectFrom('sync_error')
    .select('id')
    .where('core_base_id', '=', coreBaseId)
    .where('status', 'in', ['open', 'retrying'])
    .where((eb) => eb(eb.ref('details', '->>').key('scope'), '=', 'outage'))
    .executeTakeFirst();
  if (open) {
    await db
      .updateTable('sync_error')
      .set((eb) => ({
        message,
        user_facing_message: text,
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
      owner_id: base.owner_id,
      core_base_id: coreBaseId,
      external_connection_id: where?.connectionId ?? null,
      side: where?.side ?? null,
      code: error instanceof ConnectorError ? error.code : 'transient',
      message,
      user_facing_message: text,
      details: JSON.stringify({ scope: 'outage' }),
    })
    .execute();
}

/** A chunk ran through: the sync's outage issue (if any) is resolved. */
export async function resolveOutageIssues(db: Db, coreBaseId: string) {
  await db
    .updateTable('sync_error')
    .set({ status: 'resolved', updated_at: new Date() })
    .where('core_base_id', '=', coreBaseId)
    .where('status', 'in', ['open', 'retrying'])
    .where((eb) => eb(eb.ref('details', '->>').key('scope'), '=', 'outage'))
    .execute();
}
