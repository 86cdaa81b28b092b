import { z } from 'zod';

export const ApiImportParams = z.object({ id: z.string().uuid('must be an API import id (a UUID)') });
