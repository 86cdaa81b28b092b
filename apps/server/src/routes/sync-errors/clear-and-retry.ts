import { Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findCoreBase } from '../../services/core-bases';
import { assertPlanAllows } from '../../services/plan-guard';
import { findSyncError } from '../../services/sync-errors';
import { SyncErrorParams } from './get-sync-error';

const RetryResponse = z.object({ retried: z.number().int(), coreBaseIds: z.array(Uuid) });

/**
 * Marks open issues as retrying and queues a run of each affected sync; the run retries those
 * records first and resolves or reopens each issue. An expired plan cannot retry (spec section 4).
 */
async function retry(ctx: AppContext, ownerId: string, filter: { errorId?: string; coreBaseId?: string }) {
  await assertPlanAllows(ctx.db, ownerId, 'retry', ctx.config.environment === 'local');
  let q = ctx.db
    .updateTable('sync_error')
    .set({ status: 'retrying', updated_at: new Date() })
    .where('owner_id', '=', ownerId)
    .where('status', '=', 'open');
  if (filter.errorId) q = q.where('id', '=', filter.errorId);
  if (filter.coreBaseId) q = q.where('core_base_id', '=', filter.coreBaseId);
  const rows = await q.returning('core_base_id').execute();
  const coreBaseIds = [...new Set(rows.map((r) => r.core_base_id))];
  for (const id of coreBaseIds) await requestSyncRun(ctx.boss, id, 'retry', PRIORITY.user);
  return { retried: rows.length, coreBaseIds };
}

export function clearAndRetry(app: RestApp, ctx: AppContext) {
  app.post(
    '/sync-errors/clear-and-retry/:id',
    {
      schema: {
        tags: ['sync-errors'],
        summary: 'Retry one issue',
        params: SyncErrorParams,
        response: { 200: RetryResponse },
      },
    },
    async (request) => {
      const row = await findSyncError(ctx.db, principalOf(request), request.params.id);
      return retry(ctx, row.owner_id, { errorId: row.id });
    },
  );
  app.post(
    '/sync-errors/clear-and-retry-all',
    {
      schema: {
        tags: ['sync-errors'],
        summary: 'Retry every open issue of the signed-in user',
        response: { 200: RetryResponse },
      },
    },
    async (request) => retry(ctx, principalOf(request).userId, {}),
  );
  app.post(
    '/sync-errors/clear-and-retry/core-base/:coreBaseId',
    {
      schema: {
        tags: ['sync-errors'],
        summary: 'Retry every open issue of one sync',
        params: z.object({ coreBaseId: z.string().uuid('must be a sync id (a UUID)') }),
        response: { 200: RetryResponse },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.coreBaseId);
      return retry(ctx, base.owner_id, { coreBaseId: base.id });
    },
  );
}
