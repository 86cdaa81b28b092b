import { Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { queueApiImportRun } from '../../jobs/api-import';
import { findApiImport } from '../../services/api-import/store';
import { ApiImportParams } from './params';

export function runApiImportNow(app: RestApp, ctx: AppContext) {
  app.post(
    '/api-import/:id/run',
    {
      schema: {
        tags: ['api-import'],
        summary: 'Run a saved API import now; its progress is at /rest/progress/{trackingId}',
        params: ApiImportParams,
        response: { 202: z.object({ trackingId: Uuid }) },
      },
    },
    async (request, reply) => {
      const row = await findApiImport(ctx.db, principalOf(request), request.params.id);
      const trackingId = await queueApiImportRun(ctx.db, ctx.boss, row);
      if (!trackingId)
        throw new HttpError(
          409,
          'already queued',
          'This import is already waiting to run or running.',
          'conflict',
        );
      return reply.status(202).send({ trackingId });
    },
  );
}
