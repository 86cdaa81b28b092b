import { KNOWN_FLAGS } from '@lockstep/contract';
import { z } from 'zod';
import { type RestApp, requireStaff } from '../../http/context';

export function getKnownFlags(app: RestApp) {
  app.get(
    '/flags/known',
    {
      config: { staff: true },
      schema: {
        tags: ['users', 'staff'],
        summary: 'The experiment flags the product reads (staff)',
        response: {
          200: z.object({
            flags: z.array(
              z.object({ name: z.string(), kind: z.enum(['boolean', 'list']), description: z.string() }),
            ),
          }),
        },
      },
    },
    async (request) => {
      requireStaff(request);
      return { flags: [...KNOWN_FLAGS] };
    },
  );
}
