import type { ConnectorType } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import {
  callConnector,
  connectorFor,
  findConnection,
  openSecrets,
  portContext,
} from '../../services/external-connections';
import { ConnectionParams } from './params';

export function fetchBasePreviews(app: RestApp, ctx: AppContext) {
  app.patch(
    '/external-connections/:id/fetch-base-previews',
    {
      schema: {
        tags: ['connections'],
        summary: 'The bases (databases, workspaces, spreadsheets) this connection can reach',
        params: ConnectionParams,
        response: {
          200: z.object({ basePreviews: z.array(z.object({ remoteId: z.string(), name: z.string() })) }),
        },
      },
    },
    async (request) => {
      const row = await findConnection(ctx.db, principalOf(request), request.params.id);
      const type = row.type as ConnectorType;
      const port = connectorFor(ctx, type);
      const basePreviews = await callConnector(type, () =>
        port.listBases(openSecrets(ctx, row).connectionItems, portContext(ctx, row)),
      );
      return { basePreviews };
    },
  );
}
