import { CoreBase } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase, toCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams, DetailQuery } from './params';

export function getCoreBase(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id',
    {
      schema: {
        tags: ['core-bases'],
        summary:
          "One sync; fullBaseSchema adds both sides' tables and fields, fullDebug (staff) adds internals",
        params: CoreBaseIdParams,
        querystring: DetailQuery,
        response: { 200: CoreBase },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await findCoreBase(ctx.db, principal, request.params.id);
      return toCoreBase(ctx.db, row, request.query.detailLevel, request.query.fullDebug && principal.staff);
    },
  );
}
