import { SuggestedFix } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findSyncError, suggestFixByRules } from '../../services/sync-errors';
import { SyncErrorParams } from './get-sync-error';

export function suggestFix(app: RestApp, ctx: AppContext) {
  app.post(
    '/sync-errors/:id/suggest-fix',
    {
      schema: {
        tags: ['sync-errors'],
        summary: 'A suggested fix for an issue, from rules by its error code',
        params: SyncErrorParams,
        response: { 200: SuggestedFix },
      },
    },
    async (request) => {
      const row = await findSyncError(ctx.db, principalOf(request), request.params.id);
      return { errorId: row.id, source: 'rules' as const, ...suggestFixByRules(row.code) };
    },
  );
}
