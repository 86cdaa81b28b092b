import { CoreMetaRecordStatus } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreMetaRecord, linkEntriesQuery, toCoreMetaRecord } from '../../services/core-meta-records';
import { iso } from '../../services/sync-logs';
import { liveCheck } from '../../sync/live-record-check';

export function getRecordStatus(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-meta-records/:id/status',
    {
      schema: {
        tags: ['records'],
        summary:
          'One linked record: both remote ids, the shadow (last synced values), open issues and the last change',
        params: z.object({ id: z.string().uuid('must be a record id (a UUID)') }),
        response: { 200: CoreMetaRecordStatus },
      },
    },
    async (request) => {
      const row = await findCoreMetaRecord(ctx.db, principalOf(request), request.params.id);
      const [issues, last] = await Promise.all([
        ctx.db
          .selectFrom('sync_error')
          .select(['id', 'code', 'user_facing_message', 'side'])
          .where('core_meta_record_id', '=', row.id)
          .where('status', '!=', 'resolved')
          .execute(),
        linkEntriesQuery(ctx.db, row)
          .select(['created_at', 'side', 'operation'])
          .orderBy('created_at', 'desc')
          .limit(1)
          .executeTakeFirst(),
      ]);
      return {
        ...toCoreMetaRecord(row),
        live: await liveCheck(ctx, row),
        openIssues: issues.map((i) => ({
          id: i.id,
          code: i.code,
          userFacingMessage: i.user_facing_message,
          side: i.side,
        })),
        lastChange: last ? { at: iso(last.created_at), side: last.side, operation: last.operation } : null,
      };
    },
  );
}
