import { type ConnectorType, ConnectorUserEmail } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import {
  callConnector,
  connectorFor,
  findConnection,
  openSecrets,
  portContext,
} from '../../services/external-connections';

export function getUserEmail(app: RestApp, ctx: AppContext) {
  app.get(
    '/connector-rpc/get-user-email',
    {
      schema: {
        tags: ['connections'],
        summary:
          "The account a connection signs in as, asked of the app now (null when the app does not say, as Supabase's API)",
        querystring: z.object({
          externalConnectionId: z.string().uuid('must be a connection id (a UUID)'),
        }),
        response: { 200: ConnectorUserEmail },
      },
    },
    async (request) => {
      const row = await findConnection(ctx.db, principalOf(request), request.query.externalConnectionId);
      const type = row.type as ConnectorType;
      const port = connectorFor(ctx, type);
      const { accountEmail } = await callConnector(type, () =>
        port.check(openSecrets(ctx, row).connectionItems, portContext(ctx, row)),
      );
      return { externalConnectionId: row.id, email: accountEmail };
    },
  );
}
