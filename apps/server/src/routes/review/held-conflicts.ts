import { IsoTimestamp, Paged, PageQuery, Side, Uuid } from '@lockstep/contract';
import type { Shadow } from '@lockstep/engine';
import { sql } from 'kysely';
import { z } from 'zod';
import { type AppContext, canAccessOwner, principalOf, type RestApp } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { PRIORITY, requestSyncRun } from '../../jobs/sync-run';
import { findCoreBase } from '../../services/core-bases';
import { rescanTablesOf } from '../../services/rescan';

const Conflict = z.object({
  id: Uuid,
  coreMetaRecordId: Uuid,
  columnMappingId: Uuid.nullable(),
  left: z.unknown(),
  right: z.unknown(),
  createdAt: IsoTimestamp,
});

/** Conflicts held for review (conflict review on a table pair): list them, and choose the side that wins. */
export function heldConflicts(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/held-conflicts',
    {
      schema: {
        tags: ['review'],
        summary: 'Open conflicts waiting for a decision, oldest first',
        params: z.object({ id: z.string().uuid() }),
        querystring: PageQuery,
        response: { 200: Paged(Conflict) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { skip, take } = request.query;
      const q = ctx.db
        .selectFrom('held_conflict')
        .where('core_base_id', '=', base.id)
        .where('status', '=', 'open');
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('created_at').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => ({
          id: r.id,
          coreMetaRecordId: r.core_meta_record_id,
          columnMappingId: r.column_mapping_id,
          left: r.left_value,
          right: r.right_value,
          createdAt: new Date(r.created_at).toISOString(),
        })),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );

  app.post(
    '/held-conflicts/:id/resolve',
    {
      schema: {
        tags: ['review'],
        summary: 'Resolve a held conflict: the chosen side wins and is written to the other on the next run',
        params: z.object({ id: z.string().uuid() }),
        body: z.strictObject({ winner: Side }),
        response: { 200: z.object({ status: z.enum(['resolved_left', 'resolved_right']) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await ctx.db
        .selectFrom('held_conflict')
        .selectAll()
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Conflict');
      if (row.status !== 'open' || !row.column_mapping_id)
        throw new HttpError(409, 'Already resolved', 'This conflict is already resolved.', 'conflict');
      const { winner } = request.body;
      const status = winner === 'left' ? ('resolved_left' as const) : ('resolved_right' as const);
      // One transaction, only from open (two clicks resolve once), and only this column's shadow
      // entry rewritten in place: a run's shadow write of another column is not overwritten.
      const resolved = await ctx.db.transaction().execute(async (trx) => {
        const taken = await trx
          .updateTable('held_conflict')
          .set({ status })
          .where('id', '=', row.id)
          .where('status', '=', 'open')
          .returning('id')
          .executeTakeFirst();
        if (!taken) return 'decided' as const;
        // Make the loser look unchanged in the shadow: the next run then carries only the winner's edit.
        const previous = (row.shadow_value ?? null) as Shadow[string] | null;
        const entry =
          winner === 'left'
            ? { l: previous?.l ?? null, r: row.right_value as Shadow[string]['r'] }
            : { l: row.left_value as Shadow[string]['l'], r: previous?.r ?? null };
        const link = await trx
          .updateTable('core_meta_record')
          .set({
            shadow: sql`jsonb_set(shadow::jsonb, ${sql.val([row.column_mapping_id])}::text[], ${JSON.stringify(entry)}::jsonb)::json`,
            updated_at: new Date(),
          })
          .where('id', '=', row.core_meta_record_id)
          .returning('id')
          .executeTakeFirst();
        if (!link) throw notFound('Record');
        return 'resolved' as const;
      });
      if (resolved === 'decided')
        throw new HttpError(409, 'Already resolved', 'This conflict is already resolved.', 'conflict');
      await rescanTablesOf(ctx.db, row.core_meta_record_id);
      await requestSyncRun(ctx.boss, row.core_base_id, 'review', PRIORITY.user);
      return { status };
    },
  );
}
