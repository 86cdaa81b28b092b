import { Progress } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findProgress, toProgress } from '../../services/progress';

export const TrackingParams = z.object({ trackingId: z.string().uuid('must be a tracking id (a UUID)') });

export function getProgress(app: RestApp, ctx: AppContext) {
  app.get(
    '/progress/:trackingId',
    {
      schema: {
        tags: ['progress'],
        summary: 'Status and progress of a long job',
        params: TrackingParams,
        response: { 200: Progress },
      },
    },
    async (request) =>
      toProgress(await findProgress(ctx.db, principalOf(request), request.params.trackingId)),
  );
}
