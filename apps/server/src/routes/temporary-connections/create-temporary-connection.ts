import { ConnectorError } from '@lockstep/connectors';
import { parseConnectionString } from '@lockstep/connectors/postgresql';
import { CreateTemporaryConnectionBody, TemporaryConnection } from '@lockstep/contract';
import type { AppContext, RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { assertNoReservedItems, callConnector, connectorFor } from '../../services/external-connections';
import { sealTemporaryConnection } from '../../services/temporary-connections';

/**
 * The one answer an unauthenticated caller gets for every failed check (wrong credentials, a host
 * that does not answer, one that is refused, an unexpected error): anything more would let anyone
 * probe hosts and credentials through Lockstep. Signed-in callers get the exact reason.
 */
export const TEMPORARY_CONNECTION_FAILED = new HttpError(
  400,
  'Temporary connection check failed',
  'Lockstep could not connect with these details. Check the address and the credentials, and that the app or database accepts connections, then try again. Sign in to see the exact reason.',
  'connection_failed',
);

export function createTemporaryConnection(app: RestApp, ctx: AppContext) {
  app.post(
    '/temporary-external-connections/create',
    {
      // Made before sign-in (an app-store install, a link in an email): no Bearer token needed.
      config: { public: true },
      schema: {
        tags: ['connections'],
        summary:
          'Connect an app before signing in: the credentials are checked, and an opaque token (valid one hour) is all that comes back. Limited per email and per client address; every failed check answers the same 400 unless a Bearer token is sent.',
        security: [],
        body: CreateTemporaryConnectionBody,
        response: { 201: TemporaryConnection },
      },
    },
    async (request, reply) => {
      const { email, connectorType, name } = request.body;
      await ctx.authRateLimiter.check(request, 'temporary-connection', email);
      const port = connectorFor(ctx, connectorType);
      let items = request.body.connectionItems;
      assertNoReservedItems(items);
      // What is wrong with the input alone (no host reached) is said to everyone.
      if (connectorType === 'postgresql') refuseMalformedConnectionString(items.connectionString);
      let accountEmail: string | null;
      try {
        ({ accountEmail } = await callConnector(connectorType, () =>
          port.check(items, {
            saveItems: async (next) => {
              items = next;
            },
          }),
        ));
      } catch (error) {
        if (request.principal) throw error;
        if (!(error instanceof HttpError))
          request.log.error({ err: error }, 'temporary connection check failed');
        throw TEMPORARY_CONNECTION_FAILED;
      }
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

function refuseMalformedConnectionString(connectionString: string | undefined) {
  if (!connectionString?.trim()) return;
  try {
    parseConnectionString(connectionString);
  } catch (error) {
    if (error instanceof ConnectorError) {
      throw new HttpError(400, `postgresql: ${error.message}`, error.userFacingMessage, 'validation');
    }
    throw error;
  }
}
