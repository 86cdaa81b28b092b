import { Paged, PageQuery, RecordHistoryEntry } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreMetaRecord, recordHistory } from '../../services/core-meta-records';

export function getRecordHistory(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-meta-records/debug/history',
    {
      schema: {
        tags: ['records'],
        summary: 'Every change of one linked record with its side, run, and before and after values',
        querystring: PageQuery.extend({ coreMetaRecordId: z.string().uuid('must be a record id (a UUID)') }),
        response: { 200: Paged(RecordHistoryEntry) },
      },
    },
    async (request) => {
      const { coreMetaRecordId, skip, take } = request.query;
      const row = await findCoreMetaRecord(ctx.db, principalOf(request), coreMetaRecordId);
      return recordHistory(ctx.db, row, skip, take);
    },
  );
}
