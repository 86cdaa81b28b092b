import { ConnectorError } from '@lockstep/connectors';
import type { Db } from '../db/database';
import { openOrCountIssue, resolveScopedIssues } from './scoped-issues';
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
  await openOrCountIssue(
    db,
    { coreBaseId, scope: 'outage' },
    {
      ownerId: base.owner_id,
      externalConnectionId: where?.connectionId ?? null,
      side: where?.side ?? null,
      code: error instanceof ConnectorError ? error.code : 'transient',
      message: error instanceof Error ? error.message : String(error),
      userFacingMessage: text,
    },
  );
}

/** A chunk ran through: the sync's outage issue (if any) is resolved. */
export async function resolveOutageIssues(db: Db, coreBaseId: string) {
  await resolveScopedIssues(db, { coreBaseId, scope: 'outage' });
}
