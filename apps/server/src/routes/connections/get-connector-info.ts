import { ConnectorInfo } from '@lockstep/contract';
import { z } from 'zod';
import { connectorCatalog } from '../../connectors/connector-catalog';
import type { AppContext, RestApp } from '../../http/context';

export function getConnectorInfo(app: RestApp, ctx: AppContext) {
  app.get(
    '/connector-info',
    {
      schema: {
        tags: ['connections'],
        summary:
          'The connectors, with what each needs to connect; unbuilt ones are marked and cannot be chosen',
        response: { 200: z.array(ConnectorInfo) },
      },
    },
    async () => connectorCatalog(ctx.connectors),
  );
}
