import { LimitData } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { limitDataOf } from '../../services/subscriptions';

export function getLimitData(app: RestApp, ctx: AppContext) {
  app.get(
    '/users/limit-data',
    { schema: { tags: ['users'], summary: 'Usage and plan limits', response: { 200: LimitData } } },
    async (request) => limitDataOf(ctx.db, principalOf(request).userId),
  );
}
