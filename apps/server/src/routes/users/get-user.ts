import { UserSummary } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { notFound } from '../../http/http-error';
import { userSummary } from '../../services/users';

export const UserIdParams = z.object({ id: z.string().min(1).max(100) });

export function getUser(app: RestApp, ctx: AppContext) {
  app.get(
    '/users/:id',
    {
      schema: {
        tags: ['users'],
        summary: 'One user (staff, or yourself)',
        params: UserIdParams,
        response: { 200: UserSummary },
      },
    },
    async (request) => {
      const p = principalOf(request);
      // Another user's id is indistinguishable from a missing one unless you are staff.
      if (!p.staff && p.userId !== request.params.id) throw notFound('User');
      return userSummary(ctx.db, request.params.id);
    },
  );
}
