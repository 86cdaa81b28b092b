import { DetailLevel } from '@lockstep/contract';
import { z } from 'zod';

export const CoreBaseIdParams = z.object({ id: z.string().uuid('must be a sync id (a UUID)') });
export const DetailQuery = z.object({
  detailLevel: DetailLevel.default('basic'),
  fullDebug: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});
