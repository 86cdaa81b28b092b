import { CoreBase } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findCoreBase, toCoreBase } from '../../services/core-bases';
import { findExternalBase } from '../../services/external-bases';
import { ExternalBaseParams } from './params';

export function deleteExternalBase(app: RestApp, ctx: AppContext) {
  app.delete(
    '/external-bases/:id',
    {
      schema: {
        tags: ['external-bases'],
        summary:
          "Remove an app from its sync (to choose another): its tables, fields and the sync's table mappings with them go; the connection stays",
        params: ExternalBaseParams,
        response: {
          200: z.object({
            deleted: z.literal(true),
            removedTableMappings: z.number().int(),
            coreBase: CoreBase,
          }),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const base = await findExternalBase(ctx.db, principal, request.params.id);
      const core = await findCoreBase(ctx.db, principal, base.core_base_id);
      if (core.sync_state === 'on') {
        throw new HttpError(
          409,
          'Sync is on',
          'Turn the sync off before removing one of its apps.',
          'conflict',
        );
      }
      const removedTableMappings = await ctx.db.transaction().execute(async (trx) => {
        const tableIds = trx
          .selectFrom('external_table')
          .select('id')
          .where('external_base_id', '=', base.id);
        // Mappings go first (with their field mappings and linked records, by cascade), then the base
        // with its tables and fields.
        const mappings = await trx
          .deleteFrom('table_mapping')
          .where('core_base_id', '=', core.id)
          .where((eb) => eb.or([eb('left_table_id', 'in', tableIds), eb('right_table_id', 'in', tableIds)]))
          .executeTakeFirst();
        await trx.deleteFrom('external_base').where('id', '=', base.id).execute();
        await trx
          .updateTable('core_base')
          .set({ updated_at: new Date() })
          .where('id', '=', core.id)
          .execute();
        return Number(mappings.numDeletedRows);
      });
      return {
        deleted: true as const,
        removedTableMappings,
        coreBase: await toCoreBase(ctx.db, core, 'fullBaseSchema'),
      };
    },
  );
}
