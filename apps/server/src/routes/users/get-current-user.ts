import { CurrentUser } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { currentUser } from '../../services/users';

export function getCurrentUser(app: RestApp, ctx: AppContext) {
  app.get(
    '/users/current',
    { schema: { tags: ['users'], summary: 'The signed-in user', response: { 200: CurrentUser } } },
    async (request) => {
      const p = principalOf(request);
      return currentUser(ctx.db, p.userId, p.impersonatedBy, ctx.intercomSecret);
    },
  );
}
