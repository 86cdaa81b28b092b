import { Paged, PageQuery, UserSummary } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { searchUsers as search } from '../../services/users';

/** The spec's `users/search/{term}`: the same search as GET /users?q=, with the term in the path. */
export function searchUsersByTerm(app: RestApp, ctx: AppContext) {
  app.get(
    '/users/search/:term',
    {
      config: { staff: true },
      schema: {
        tags: ['users', 'staff'],
        summary: 'Search users by email or name, the term in the path (staff)',
        params: z.object({ term: z.string().min(1).max(200) }),
        querystring: PageQuery,
        response: { 200: Paged(UserSummary) },
      },
    },
    async (request) => {
      requireStaff(request);
      const { skip, take } = request.query;
      return search(ctx.db, request.params.term.trim(), skip, take);
    },
  );
}
