import { ExternalConnection } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findConnection, openSecrets, toExternalConnection } from '../../services/external-connections';
import { ConnectionParams } from './params';

export function getExternalConnection(app: RestApp, ctx: AppContext) {
  app.get(
    '/external-connections/:id',
    {
      schema: {
        tags: ['connections'],
        summary: 'One connection (never its secrets)',
        params: ConnectionParams,
        response: { 200: ExternalConnection },
      },
    },
    async (request) => {
      const row = await findConnection(ctx.db, principalOf(request), request.params.id);
      return toExternalConnection(row, openSecrets(ctx, row).connectionItems);
    },
  );
}
