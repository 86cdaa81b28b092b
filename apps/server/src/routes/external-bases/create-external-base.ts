import { CoreBase, CreateExternalBaseBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findCoreBase, toCoreBase } from '../../services/core-bases';
import { refreshExternalSchema } from '../../services/external-bases';
import { findConnection } from '../../services/external-connections';

export function createExternalBase(app: RestApp, ctx: AppContext) {
  app.post(
    '/external-bases',
    {
      schema: {
        tags: ['external-bases'],
        summary:
          "Attach an app's base to one side of a sync and read its schema; answers with the sync's full schema",
        body: CreateExternalBaseBody,
        response: { 201: CoreBase },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const core = await findCoreBase(ctx.db, principal, body.coreBaseId);
      const connection = await findConnection(ctx.db, principal, body.externalConnectionId);
      if (connection.owner_id !== core.owner_id)
        throw new HttpError(404, 'Connection not found', 'Connection was not found.', 'not_found');
      if (connection.type !== body.type) {
        throw new HttpError(
          400,
          'Type mismatch',
          `This connection is for ${connection.type}, not ${body.type}.`,
          'validation',
        );
      }
      const taken = await ctx.db
        .selectFrom('external_base')
        .select('id')
        .where('core_base_id', '=', core.id)
        .where('side', '=', body.side)
        .executeTakeFirst();
      if (taken) {
        throw new HttpError(
          409,
          'Side taken',
          `This sync already has a ${body.side} app. Remove it first to choose another.`,
          'conflict',
        );
      }
      const base = await ctx.db
        .insertInto('external_base')
        .values({
          owner_id: core.owner_id,
          core_base_id: core.id,
          external_connection_id: connection.id,
          type: body.type,
          name: body.name,
          remote_id: body.remoteId,
          side: body.side,
          extras: JSON.stringify(body.extras),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      try {
        await refreshExternalSchema(ctx, base);
      } catch (error) {
        // Nothing half-made stays behind: the base goes if its schema cannot be read.
        await ctx.db.deleteFrom('external_base').where('id', '=', base.id).execute();
        throw error;
      }
      return reply.status(201).send(await toCoreBase(ctx.db, core, 'fullBaseSchema'));
    },
  );
}
