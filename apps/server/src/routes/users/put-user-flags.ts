import { ExperimentFlags, FlagsBody } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, type RestApp, requireStaff } from '../../http/context';
import { setExperimentFlags } from '../../services/users';
import { UserIdParams } from './get-user';

export function putUserFlags(app: RestApp, ctx: AppContext) {
  app.put(
    '/users/:id/flags',
    {
      config: { staff: true },
      schema: {
        tags: ['users', 'staff'],
        summary: "Replace a user's experiment flags (staff)",
        params: UserIdParams,
        body: FlagsBody,
        response: { 200: z.object({ experimentFlags: ExperimentFlags }) },
      },
    },
    async (request) => {
      requireStaff(request);
      await setExperimentFlags(ctx.db, request.params.id, request.body.experimentFlags);
      return { experimentFlags: request.body.experimentFlags };
    },
  );
}
