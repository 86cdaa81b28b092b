import { ExternalBase } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase, toCoreBase } from '../../services/core-bases';
import { findExternalBase } from '../../services/external-bases';
import { ExternalBaseParams } from './params';

export function getExternalBase(app: RestApp, ctx: AppContext) {
  app.get(
    '/external-bases/:id',
    {
      schema: {
        tags: ['external-bases'],
        summary: 'One attached app with its tables and fields',
        params: ExternalBaseParams,
        response: { 200: ExternalBase },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const base = await findExternalBase(ctx.db, principal, request.params.id);
      const core = await findCoreBase(ctx.db, principal, base.core_base_id);
      const full = await toCoreBase(ctx.db, core, 'fullBaseSchema');
      return (base.side === 'left' ? full.leftExternalBase : full.rightExternalBase) as NonNullable<
        typeof full.leftExternalBase
      >;
    },
  );
}
