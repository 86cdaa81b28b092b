import { ApiImport } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { describeApiImport, findApiImport } from '../../services/api-import/store';
import { ApiImportParams } from './params';

export function getApiImport(app: RestApp, ctx: AppContext) {
  app.get(
    '/api-import/:id',
    {
      schema: {
        tags: ['api-import'],
        summary: 'One saved API import (secrets masked), with its schedule and last run',
        params: ApiImportParams,
        response: { 200: ApiImport },
      },
    },
    async (request) =>
      describeApiImport(ctx.db, await findApiImport(ctx.db, principalOf(request), request.params.id)),
  );
}
