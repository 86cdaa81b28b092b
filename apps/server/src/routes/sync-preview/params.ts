import { z } from 'zod';

export const PreviewParams = z.object({ id: z.string().uuid('must be a sync preview id (a UUID)') });
