import { type ConnectorType, ExternalConnection, PatchExternalConnectionBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import {
  assertItemChoices,
  callConnector,
  connectorFor,
  findConnection,
  openSecrets,
  patchedItems,
  toExternalConnection,
} from '../../services/external-connections';
import { ConnectionParams } from './params';

export function patchExternalConnection(app: RestApp, ctx: AppContext) {
  app.patch(
    '/external-connections/:id',
    {
      schema: {
        tags: ['connections'],
        summary:
          'Rename a connection or replace its credentials (checked first); a working connection is no longer broken',
        params: ConnectionParams,
        body: PatchExternalConnectionBody,
        response: { 200: ExternalConnection },
      },
    },
    async (request) => {
      const row = await findConnection(ctx.db, principalOf(request), request.params.id);
      const secrets = openSecrets(ctx, row);
      const { name, connectionItems } = request.body;
      let items = secrets.connectionItems;
      if (connectionItems) {
        // New credentials merge over the old ones, so a form can leave unchanged secrets blank;
        // null removes an item.
        const type = row.type as ConnectorType;
        items = patchedItems(type, secrets.connectionItems, connectionItems);
        // What is sent must be one of the choices; what was stored stays (a Supabase connection's
        // ssl stored as require before the choices were verify-full and no-verify, or the
        // simulator's disable).
        assertItemChoices(
          type,
          Object.fromEntries(
            Object.entries(connectionItems).filter((e): e is [string, string] => e[1] !== null),
          ),
        );
        await callConnector(type, () => connectorFor(ctx, type).check(items));
      }
      const updated = await ctx.db
        .updateTable('external_connection')
        .set({
          ...(name ? { name } : {}),
          ...(connectionItems
            ? {
                secrets: ctx.secretBox.seal({ ...secrets, connectionItems: items }),
                status: 'ok',
                broken_reason: null,
              }
            : {}),
          updated_at: new Date(),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toExternalConnection(updated, items);
    },
  );
}
