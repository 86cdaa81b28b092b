import { z } from 'zod';

export const ConnectionParams = z.object({ id: z.string().uuid('must be a connection id (a UUID)') });
