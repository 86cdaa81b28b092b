import { Paged, UserSearchQuery, UserSummary } from '@lockstep/contract';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { searchUsers as search } from '../../services/users';

export function searchUsers(app: RestApp, ctx: AppContext) {
  app.get(
    '/users',
    {
      config: { staff: true },
      schema: {
        tags: ['users', 'staff'],
        summary: 'Search users by email or name (staff)',
        querystring: UserSearchQuery,
        response: { 200: Paged(UserSummary) },
      },
    },
    async (request) => {
      requireStaff(request);
      const { q, skip, take } = request.query;
      return search(ctx.db, q.trim(), skip, take);
    },
  );
}
