import { z } from 'zod';

export const GitSyncIdParams = z.object({ id: z.string().uuid('must be a git sync id (a UUID)') });
