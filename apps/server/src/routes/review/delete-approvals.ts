import { IsoTimestamp, Paged, PageQuery, Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, canAccessOwner, principalOf, type RestApp } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findCoreBase } from '../../services/core-bases';
import { rescanTablesOf } from '../../services/rescan';

const Approval = z.object({
  id: Uuid,
  coreMetaRecordId: Uuid,
  side: z.string(),
  remoteId: z.string().nullable(),
  reason: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']),
  createdAt: IsoTimestamp,
});

/** The delete approval queue of a sync with delete protection: list, approve (delete it), reject (restore it). */
export function deleteApprovals(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/delete-approvals',
    {
      schema: {
        tags: ['review'],
        summary: 'Deletes waiting for approval (delete protection), oldest first',
        params: z.object({ id: z.string().uuid() }),
        querystring: PageQuery.extend({
          status: z.enum(['pending', 'approved', 'rejected']).default('pending'),
        }),
        response: { 200: Paged(Approval) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { skip, take, status } = request.query;
      const q = ctx.db
        .selectFrom('delete_approval')
        .innerJoin('core_meta_record', 'core_meta_record.id', 'delete_approval.core_meta_record_id')
        .where('delete_approval.core_base_id', '=', base.id)
        .where('delete_approval.status', '=', status);
      const [rows, total] = await Promise.all([
        q
          .select([
            'delete_approval.id',
            'delete_approval.core_meta_record_id',
            'delete_approval.side',
            'delete_approval.reason',
            'delete_approval.status',
            'delete_approval.created_at',
            'core_meta_record.left_remote_id',
            'core_meta_record.right_remote_id',
          ])
          .orderBy('delete_approval.created_at')
          .offset(skip)
          .limit(take)
          .execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => ({
          id: r.id,
          coreMetaRecordId: r.core_meta_record_id,
          side: r.side,
          remoteId: r.side === 'left' ? r.left_remote_id : r.right_remote_id,
          reason: r.reason,
          status: r.status,
          createdAt: new Date(r.created_at).toISOString(),
        })),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );

  app.post(
    '/delete-approvals/:id/:decision',
    {
      schema: {
        tags: ['review'],
        summary:
          'Approve a delete (the next run deletes the record) or reject it (the record is restored on the other side)',
        params: z.object({ id: z.string().uuid(), decision: z.enum(['approve', 'reject']) }),
        response: { 200: z.object({ status: z.enum(['approved', 'rejected']) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await ctx.db
        .selectFrom('delete_approval')
        .selectAll()
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Delete approval');
      const alreadyDecided = (status: string) =>
        new HttpError(409, 'Already decided', `This delete was already ${status}.`, 'conflict');
      if (row.status !== 'pending') throw alreadyDecided(row.status);
      const status = request.params.decision === 'approve' ? ('approved' as const) : ('rejected' as const);
      // One transaction, and only from pending (two clicks at once decide once): a run that saw
      // "rejected" with the link still whole would take the record as restored and carry the delete
      // it was holding.
      const decided = await ctx.db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('delete_approval')
          .set({ status })
          .where('id', '=', row.id)
          .where('status', '=', 'pending')
          .returning('id')
          .executeTakeFirst();
        if (!updated || status === 'approved') return updated !== undefined;
        // Unlinking makes the surviving record new again: the next run creates it on the other side.
        await trx
          .updateTable('core_meta_record')
          .set({ [row.side === 'left' ? 'right_remote_id' : 'left_remote_id']: null, shadow: '{}' })
          .where('id', '=', row.core_meta_record_id)
          .execute();
        return true;
      });
      if (!decided) throw alreadyDecided('decided');
      if (status === 'rejected') await rescanTablesOf(ctx.db, row.core_meta_record_id);
      await requestSyncRun(ctx.boss, row.core_base_id, 'review', PRIORITY.user);
      return { status };
    },
  );
}
