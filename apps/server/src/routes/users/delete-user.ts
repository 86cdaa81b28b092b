import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { deleteUser as remove } from '../../services/users';
import { UserIdParams } from './get-user';

export function deleteUser(app: RestApp, ctx: AppContext) {
  app.delete(
    '/users/:id',
    {
      config: { staff: true },
      schema: {
        tags: ['users', 'staff'],
        summary: 'Delete a user and everything they own (staff)',
        params: UserIdParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      const staff = requireStaff(request);
      if (staff.userId === request.params.id) {
        throw new HttpError(400, 'Cannot delete yourself', 'You cannot delete your own account from here.');
      }
      await remove(ctx.db, request.params.id);
      return { deleted: true as const };
    },
  );
}
