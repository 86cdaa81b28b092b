import { z } from 'zod';

export const BlendedTableParams = z.object({ id: z.string().uuid('must be a blended table id (a UUID)') });
