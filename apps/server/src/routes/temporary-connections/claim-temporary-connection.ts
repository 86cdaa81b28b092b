import { ClaimTemporaryConnectionBody, connectorDisplayName, ExternalConnection } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { openSecrets, toExternalConnection } from '../../services/external-connections';
import { openTemporaryConnection } from '../../services/temporary-connections';

export function claimTemporaryConnection(app: RestApp, ctx: AppContext) {
  app.post(
    '/temporary-external-connections/claim',
    {
      schema: {
        tags: ['connections'],
        summary:
          'Keep a connection made before sign-in: it becomes a connection of the signed-in user, whose email must be the one it was made for',
        body: ClaimTemporaryConnectionBody,
        response: { 200: ExternalConnection, 201: ExternalConnection },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const payload = openTemporaryConnection(ctx.secretBox, request.body.token);
      if (principal.email.toLowerCase() !== payload.email) {
        throw new HttpError(
          403,
          'Temporary connection is for another email',
          'This connection was made for another email address. Sign in with that address to keep it.',
          'forbidden',
        );
      }
      const inserted = await ctx.db
        .insertInto('external_connection')
        .values({
          id: payload.id,
          owner_id: principal.userId,
          type: payload.type,
          name:
            payload.name ??
            (payload.accountEmail
              ? `${connectorDisplayName(payload.type)} (${payload.accountEmail})`
              : connectorDisplayName(payload.type)),
          secrets: ctx.secretBox.seal({ connectionItems: payload.items }),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .returningAll()
        .executeTakeFirst();
      const row =
        inserted ??
        (await ctx.db
          .selectFrom('external_connection')
          .selectAll()
          .where('id', '=', payload.id)
          .executeTakeFirst());
      // Claimed already: the same user gets it again; anyone else learns nothing.
      if (!row || row.owner_id !== principal.userId) throw notFound('Connection');
      return reply
        .status(inserted ? 201 : 200)
        .send(toExternalConnection(row, inserted ? payload.items : openSecrets(ctx, row).connectionItems));
    },
  );
}
