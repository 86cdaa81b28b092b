import { CoreBase, CreateCoreBaseBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { toCoreBase } from '../../services/core-bases';
import { assertPlanAllows } from '../../services/plan-guard';

export function createCoreBase(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Create a sync (core base); needs a plan with room under its base limit',
        body: CreateCoreBaseBody,
        response: { 201: CoreBase },
      },
    },
    async (request, reply) => {
      const { userId } = principalOf(request);
      await assertPlanAllows(ctx.db, userId, 'create', ctx.config.environment === 'local');
      const row = await ctx.db
        .insertInto('core_base')
        .values({
          owner_id: userId,
          name: request.body.name,
          setup_origin: request.body.setupOrigin,
          config_extras: '{}',
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(await toCoreBase(ctx.db, row, 'basic'));
    },
  );
}
