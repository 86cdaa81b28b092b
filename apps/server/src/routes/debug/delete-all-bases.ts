import { z } from 'zod';
import { type AppContext, principalOf, type RestApp, requireStaff } from '../../http/context';
import { HttpError } from '../../http/http-error';

/**
 * "Delete all bases for testing" (staff): every sync of one user (the caller's own by default),
 * with everything it owns. Refused on a production or staging server, where it could only do harm.
 */
export function deleteAllBases(app: RestApp, ctx: AppContext) {
  app.post(
    '/debug/delete-all-bases',
    {
      config: { staff: true },
      schema: {
        tags: ['debug', 'staff'],
        summary: 'Delete every sync of a user, for testing (staff; refused in production and staging)',
        body: z.object({ userId: z.string().min(1).max(100).optional() }).strict(),
        response: { 200: z.object({ deleted: z.number().int() }) },
      },
    },
    async (request) => {
      requireStaff(request);
      if (ctx.config.environment === 'production' || ctx.config.environment === 'staging')
        throw new HttpError(
          403,
          'Not on this server',
          'Deleting all bases is for test servers only; it is refused in production and staging.',
          'forbidden',
        );
      const owner = request.body.userId ?? principalOf(request).userId;
      // The foreign keys cascade from core_base to everything it owns.
      const rows = await ctx.db
        .deleteFrom('core_base')
        .where('owner_id', '=', owner)
        .returning('id')
        .execute();
      return { deleted: rows.length };
    },
  );
}
