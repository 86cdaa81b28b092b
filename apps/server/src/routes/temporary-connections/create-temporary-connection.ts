import { CreateTemporaryConnectionBody, TemporaryConnection } from '@lockstep/contract';
import type { AppContext, RestApp } from '../../http/context';
import { callConnector, connectorFor } from '../../services/external-connections';
import { sealTemporaryConnection } from '../../services/temporary-connections';

export function createTemporaryConnection(app: RestApp, ctx: AppContext) {
  app.post(
    '/temporary-external-connections/create',
    {
      // Made before sign-in (an app-store install, a link in an email): no Bearer token needed.
      config: { public: true },
      schema: {
        tags: ['connections'],
        summary:
          'Connect an app before signing in: the credentials are checked, and an opaque token (valid one hour) is all that comes back',
        security: [],
        body: CreateTemporaryConnectionBody,
        response: { 201: TemporaryConnection },
      },
    },
    async (request, reply) => {
      const { email, connectorType, name } = request.body;
      const port = connectorFor(ctx, connectorType);
      let items = request.body.connectionItems;
      const { accountEmail } = await callConnector(connectorType, () =>
        port.check(items, {
          saveItems: async (next) => {
            items = next;
          },
        }),
      );
      const { token, payload } = sealTemporaryConnection(ctx.secretBox, {
        email,
        type: connectorType,
        items,
        name: name ?? null,
        accountEmail,
      });
      return reply.status(201).send({
        token,
        email: payload.email,
        connectorType,
        accountEmail,
        expiresAt: new Date(payload.expiresAt).toISOString(),
      });
    },
  );
}
