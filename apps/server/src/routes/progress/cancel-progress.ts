import { Progress } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { cancelProgress as cancel } from '../../services/progress';
import { TrackingParams } from './get-progress';

export function cancelProgress(app: RestApp, ctx: AppContext) {
  app.delete(
    '/progress/:trackingId',
    {
      schema: {
        tags: ['progress'],
        summary: 'Cancel a long job; its worker stops at its next step',
        params: TrackingParams,
        response: { 200: Progress },
      },
    },
    async (request) => cancel(ctx.db, principalOf(request), request.params.trackingId),
  );
}
