import { ConnectorType, ExternalConnection, Paged, PageQuery } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { openSecrets, toExternalConnection } from '../../services/external-connections';

export function listExternalConnections(app: RestApp, ctx: AppContext) {
  app.get(
    '/external-connections',
    {
      schema: {
        tags: ['connections'],
        summary: "The signed-in user's connections, newest first; type narrows to one app",
        querystring: PageQuery.extend({ type: ConnectorType.optional() }),
        response: { 200: Paged(ExternalConnection) },
      },
    },
    async (request) => {
      const { userId } = principalOf(request);
      const { skip, take, type } = request.query;
      let q = ctx.db.selectFrom('external_connection').where('owner_id', '=', userId);
      if (type) q = q.where('type', '=', type);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id').offset(skip).limit(take).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((r) => toExternalConnection(r, openSecrets(ctx, r).connectionItems)),
        total: Number(total.n),
        skip,
        take,
      };
    },
  );
}
