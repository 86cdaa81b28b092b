import { CreateExternalConnectionBody, connectorDisplayName, ExternalConnection } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import {
  assertItemChoices,
  assertNoReservedItems,
  callConnector,
  connectorFor,
  toExternalConnection,
} from '../../services/external-connections';

export function createExternalConnection(app: RestApp, ctx: AppContext) {
  app.post(
    '/external-connections',
    {
      schema: {
        tags: ['connections'],
        summary: 'Connect an app: the credentials are checked with the app, then stored encrypted',
        body: CreateExternalConnectionBody,
        response: { 201: ExternalConnection },
      },
    },
    async (request, reply) => {
      const { userId } = principalOf(request);
      const { type, connectionItems, oAuthAuthorizationData, name } = request.body;
      const port = connectorFor(ctx, type);
      assertNoReservedItems(connectionItems);
      assertItemChoices(type, connectionItems);
      const { accountEmail } = await callConnector(type, () => port.check(connectionItems));
      const row = await ctx.db
        .insertInto('external_connection')
        .values({
          owner_id: userId,
          type,
          name:
            name ??
            (accountEmail ? `${connectorDisplayName(type)} (${accountEmail})` : connectorDisplayName(type)),
          secrets: ctx.secretBox.seal({ connectionItems, oAuth: oAuthAuthorizationData }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(toExternalConnection(row, connectionItems));
    },
  );
}
