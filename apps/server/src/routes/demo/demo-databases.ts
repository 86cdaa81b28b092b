import { ExternalConnection } from '@lockstep/contract';
import { z } from 'zod';
import { DEMO_DATABASES, type DemoDatabase } from '../../demo/demo-databases';
import { EMBEDDED_ITEM, EMBEDDED_PASSWORD_ITEM, EMBEDDED_USER_ITEM } from '../../demo/embedded-items';
import { demoDatabasesOffered, demoPerTenant, provisionTenantDemo } from '../../demo/tenant-demo';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { toExternalConnection } from '../../services/external-connections';

const DemoName = z.enum(Object.keys(DEMO_DATABASES) as [DemoDatabase, ...DemoDatabase[]]);

/** The demo databases of the embedded default: listed, and connected in one click. */
export function demoDatabases(app: RestApp, ctx: AppContext) {
  app.get(
    '/demo-databases',
    {
      schema: {
        tags: ['connections'],
        summary: 'Sample PostgreSQL databases to try a sync on (embedded default only)',
        response: {
          200: z.object({
            available: z.boolean(),
            items: z.array(z.object({ name: DemoName, displayName: z.string(), description: z.string() })),
          }),
        },
      },
    },
    async () => ({
      available: demoDatabasesOffered(ctx),
      items: (Object.keys(DEMO_DATABASES) as DemoDatabase[]).map((name) => ({
        name,
        ...DEMO_DATABASES[name],
      })),
    }),
  );

  app.post(
    '/demo-databases/:name/connect',
    {
      schema: {
        tags: ['connections'],
        summary: 'Create a PostgreSQL connection to a demo database',
        params: z.object({ name: DemoName }),
        response: { 201: ExternalConnection },
      },
    },
    async (request, reply) => {
      const { userId } = principalOf(request);
      if (!demoDatabasesOffered(ctx)) {
        throw new HttpError(
          404,
          'No demo databases',
          ctx.embeddedDatabaseUrl
            ? 'This server does not offer demo databases (LOCKSTEP_DEMO=1 turns them on outside local mode).'
            : 'Demo databases exist only when Lockstep runs on its embedded PostgreSQL.',
          'not_found',
        );
      }
      // The database, not its address: the embedded server's port may change between starts. On a
      // server shared by many, the user's own copy, through a role of their own.
      let items: Record<string, string> = { [EMBEDDED_ITEM]: request.params.name };
      if (demoPerTenant(ctx)) {
        const own = await provisionTenantDemo(ctx, request.params.name, userId);
        items = {
          [EMBEDDED_ITEM]: own.database,
          [EMBEDDED_USER_ITEM]: own.user,
          [EMBEDDED_PASSWORD_ITEM]: own.password,
        };
      }
      const row = await ctx.db
        .insertInto('external_connection')
        .values({
          owner_id: userId,
          type: 'postgresql',
          name: DEMO_DATABASES[request.params.name].displayName,
          secrets: ctx.secretBox.seal({ connectionItems: items }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(toExternalConnection(row, items));
    },
  );
}
