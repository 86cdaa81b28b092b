import { ExternalBase, PatchExternalBaseBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase, toCoreBase } from '../../services/core-bases';
import { findExternalBase } from '../../services/external-bases';
import { ExternalBaseParams } from './params';

export function patchExternalBase(app: RestApp, ctx: AppContext) {
  app.patch(
    '/external-bases/:id',
    {
      schema: {
        tags: ['external-bases'],
        summary: 'Rename an attached app, change its extras, or switch its webhooks',
        params: ExternalBaseParams,
        body: PatchExternalBaseBody,
        response: { 200: ExternalBase },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const base = await findExternalBase(ctx.db, principal, request.params.id);
      const { name, extras, webhooksEnabled } = request.body;
      await ctx.db
        .updateTable('external_base')
        .set({
          ...(name ? { name } : {}),
          ...(extras ? { extras: JSON.stringify(extras) } : {}),
          ...(webhooksEnabled === undefined ? {} : { webhooks_enabled: webhooksEnabled }),
          updated_at: new Date(),
        })
        .where('id', '=', base.id)
        .execute();
      const full = await toCoreBase(
        ctx.db,
        await findCoreBase(ctx.db, principal, base.core_base_id),
        'fullBaseSchema',
      );
      return (base.side === 'left' ? full.leftExternalBase : full.rightExternalBase) as NonNullable<
        typeof full.leftExternalBase
      >;
    },
  );
}
