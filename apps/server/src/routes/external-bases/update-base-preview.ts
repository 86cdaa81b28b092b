import { type ConnectorType, ExternalBase } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { externalBaseView, findExternalBase } from '../../services/external-bases';
import { callConnector, connectorFor, openSecrets, portContext } from '../../services/external-connections';
import { ExternalBaseParams } from './params';

export function updateBasePreview(app: RestApp, ctx: AppContext) {
  app.patch(
    '/external-bases/:id/update-base-preview',
    {
      schema: {
        tags: ['external-bases'],
        summary:
          'Ask the app for this base again: its current name is taken over; found is false when the app no longer lists it',
        params: ExternalBaseParams,
        response: {
          200: z.object({
            found: z.boolean(),
            renamed: z.boolean(),
            basePreview: z.object({ remoteId: z.string(), name: z.string() }).nullable(),
            externalBase: ExternalBase,
          }),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const base = await findExternalBase(ctx.db, principal, request.params.id);
      if (!base.external_connection_id) throw notFound('Connection');
      const connection = await ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', base.external_connection_id)
        .executeTakeFirstOrThrow();
      const type = base.type as ConnectorType;
      const port = connectorFor(ctx, type);
      const previews = await callConnector(type, () =>
        port.listBases(openSecrets(ctx, connection).connectionItems, portContext(ctx, connection)),
      );
      const preview = previews.find((p) => p.remoteId === base.remote_id) ?? null;
      const renamed = preview !== null && preview.name !== base.name;
      if (renamed) {
        await ctx.db
          .updateTable('external_base')
          .set({ name: preview.name, updated_at: new Date() })
          .where('id', '=', base.id)
          .execute();
      }
      return {
        found: preview !== null,
        renamed,
        basePreview: preview,
        externalBase: await externalBaseView(ctx, principal, base),
      };
    },
  );
}
