import { ConnectorType, ExternalConnection } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { toExternalConnection } from '../../services/external-connections';

const SandboxApp = z.object({
  connectorType: ConnectorType,
  displayName: z.string(),
  description: z.string(),
});

/** Sandbox apps (simulators this server runs): listed, and connected in one click. */
export function sandboxApps(app: RestApp, ctx: AppContext) {
  app.get(
    '/sandbox-apps',
    {
      schema: {
        tags: ['connections'],
        summary:
          'Simulated apps to try a sync on without an account there (embedded default or LOCKSTEP_SANDBOX=1)',
        response: { 200: z.object({ available: z.boolean(), items: z.array(SandboxApp) }) },
      },
    },
    async (request) => {
      principalOf(request);
      return { available: Boolean(ctx.sandbox), items: ctx.sandbox?.list() ?? [] };
    },
  );

  app.post(
    '/sandbox-apps/:connectorType/connect',
    {
      schema: {
        tags: ['connections'],
        summary: 'Create a connection to a fresh sandbox account of an app (its own seeded base)',
        params: z.object({ connectorType: ConnectorType }),
        response: { 201: ExternalConnection },
      },
    },
    async (request, reply) => {
      const { userId } = principalOf(request);
      const account = (await ctx.sandbox?.connect(request.params.connectorType)) ?? null;
      if (!account) {
        throw new HttpError(
          404,
          `No sandbox for ${request.params.connectorType}`,
          ctx.sandbox
            ? 'There is no sandbox for this app yet.'
            : 'Sandbox apps run only on the embedded default or with LOCKSTEP_SANDBOX=1.',
          'not_found',
        );
      }
      const row = await ctx.db
        .insertInto('external_connection')
        .values({
          owner_id: userId,
          type: request.params.connectorType,
          name: account.name,
          secrets: ctx.secretBox.seal({ connectionItems: account.items }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(toExternalConnection(row, account.items));
    },
  );
}
