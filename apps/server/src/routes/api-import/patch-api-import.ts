import { ApiImport, PatchApiImportBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { describeApiImport, findApiImport } from '../../services/api-import/store';
import { ApiImportParams } from './params';

export function patchApiImport(app: RestApp, ctx: AppContext) {
  app.patch(
    '/api-import/:id',
    {
      schema: {
        tags: ['api-import'],
        summary: 'Rename an API import or change its schedule (none, hourly, daily)',
        params: ApiImportParams,
        body: PatchApiImportBody,
        response: { 200: ApiImport },
      },
    },
    async (request) => {
      const row = await findApiImport(ctx.db, principalOf(request), request.params.id);
      const { name, schedule } = request.body;
      const updated = await ctx.db
        .updateTable('api_import')
        .set({
          ...(name === undefined ? {} : { name }),
          ...(schedule === undefined ? {} : { schedule }),
          updated_at: new Date(),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return describeApiImport(ctx.db, updated);
    },
  );
}
