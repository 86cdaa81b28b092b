import {
  canTransition,
  type PreviewActor,
  type SyncPreview,
  type SyncPreviewStatus,
} from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/database';
import type { SyncPreviewTable } from '../db/schema';
import { canAccessOwner, type Principal } from '../http/context';
import { HttpError, notFound } from '../http/http-error';
import { requestPreviewStep } from '../jobs/preview-step-queue';
import { createProgress } from './progress';
import { iso } from './sync-logs';

export function toSyncPreview(r: Selectable<SyncPreviewTable>): SyncPreview {
  return {
    id: r.id,
    status: r.status as SyncPreviewStatus,
    coreBaseId: r.core_base_id,
    coreTableIds: r.core_table_ids,
    trackingId: r.tracking_id,
    summary: r.summary,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function findSyncPreview(db: Db, principal: Principal, id: string) {
  const row = await db.selectFrom('sync_preview').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Sync preview');
  return row;
}

/**
 * Moves a preview with a compare-and-set on its current status, so two racing requests (or a
 * request racing a worker) cannot both win; a transition the state machine forbids is refused.
 */
export async function transitionPreview(
  db: Db,
  id: string,
  from: SyncPreviewStatus,
  to: SyncPreviewStatus,
  actor: PreviewActor,
  summary?: Record<string, unknown>,
) {
  if (!canTransition(from, to, actor)) {
    throw new HttpError(
      409,
      `Cannot move a sync preview from ${from} to ${to}`,
      `This preview is ${from.replaceAll('_', ' ')}; it cannot go to ${to.replaceAll('_', ' ')} from there.`,
      'invalid_transition',
    );
  }
  const row = await db
    .updateTable('sync_preview')
    .set({ status: to, updated_at: new Date(), ...(summary ? { summary: JSON.stringify(summary) } : {}) })
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
  if (!row) {
    throw new HttpError(
      409,
      'Sync preview changed meanwhile',
      'This preview changed meanwhile. Reload it and try again.',
      'conflict',
    );
  }
  return row;
}

/**
 * Refuses a preview of a sync with no table mappings, or of table mappings that are not the sync's:
 * the checks before a preview starts, whoever starts it.
 */
export async function checkPreviewTables(db: Db, coreBaseId: string, coreTableIds: string[]) {
  const mappings = await db
    .selectFrom('table_mapping')
    .select('id')
    .where('core_base_id', '=', coreBaseId)
    .execute();
  if (mappings.length === 0)
    throw new HttpError(
      400,
      'No table mappings',
      'Map at least one pair of tables before previewing.',
      'validation',
    );
  const unknown = coreTableIds.filter((id) => !mappings.some((m) => m.id === id));
  if (unknown.length)
    throw new HttpError(
      400,
      'Unknown table mappings',
      `These are not table mappings of this sync: ${unknown.join(', ')}.`,
      'validation',
    );
}

/** Creates a preview of a sync (for the chosen table mappings, or all) and starts its download. */
export async function startPreview(
  db: Db,
  boss: PgBoss,
  base: { id: string; owner_id: string },
  coreTableIds: string[],
  requestedBy: string | null = null,
) {
  const tracker = await createProgress(db, base.owner_id, 'sync-preview');
  const row = await db
    .insertInto('sync_preview')
    .values({
      owner_id: base.owner_id,
      core_base_id: base.id,
      core_table_ids: JSON.stringify(coreTableIds),
      tracking_id: tracker.id,
      summary: '{}',
      requested_by: requestedBy,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const started = await transitionPreview(db, row.id, 'new', 'downloading', 'server');
  await requestPreviewStep(boss, row.id, 'download');
  return toSyncPreview(started);
}
