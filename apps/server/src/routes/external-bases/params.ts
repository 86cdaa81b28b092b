import { z } from 'zod';

export const ExternalBaseParams = z.object({ id: z.string().uuid('must be an external base id (a UUID)') });
