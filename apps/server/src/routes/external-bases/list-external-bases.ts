import { ExternalBase } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase, toCoreBase } from '../../services/core-bases';

export function listExternalBases(app: RestApp, ctx: AppContext) {
  app.get(
    '/external-bases',
    {
      schema: {
        tags: ['external-bases'],
        summary: "The apps attached to a sync; includeBundle adds each one's tables and fields",
        querystring: z.object({
          coreBaseId: z.string().uuid(),
          includeBundle: z.enum(['true', 'false']).default('false'),
        }),
        response: { 200: z.object({ items: z.array(ExternalBase) }) },
      },
    },
    async (request) => {
      const core = await findCoreBase(ctx.db, principalOf(request), request.query.coreBaseId);
      const full = await toCoreBase(
        ctx.db,
        core,
        request.query.includeBundle === 'true' ? 'fullBaseSchema' : 'basic',
      );
      return { items: [full.leftExternalBase, full.rightExternalBase].filter((b) => b !== null) };
    },
  );
}
