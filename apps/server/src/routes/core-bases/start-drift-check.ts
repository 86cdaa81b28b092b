import { Uuid } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { DRIFT_CHECK, type DriftCheckData } from '../../jobs/drift-check';
import { findCoreBase } from '../../services/core-bases';
import { createProgress } from '../../services/progress';
import { CoreBaseIdParams } from './params';

const Body = z
  .object({
    /** Every linked pair, or a random sample of `sample` per table pair. */
    full: z.boolean().default(false),
    sample: z.number().int().min(1).max(100_000).default(500),
  })
  .strict();

export function startDriftCheck(app: RestApp, ctx: AppContext) {
  app.post(
    '/core-bases/:id/drift-checks',
    {
      schema: {
        tags: ['core-bases'],
        summary:
          'Compare the live values of linked records on both apps with what was last synced; drift becomes issues',
        description:
          'Reads linked pairs from both apps (all of them, or a random sample per table pair), lets a run carry the changes already signalled, and opens a `drift` issue for each record whose values still differ from what Lockstep last synced. Follow the tracker at GET /rest/progress/{trackingId}; its result has per table pair what was checked and found.',
        params: CoreBaseIdParams,
        body: Body,
        response: { 202: z.object({ trackingId: Uuid }) },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      // With the sync off every change waits, and each would read as drift.
      if (base.sync_state !== 'on')
        throw new HttpError(
          409,
          'Sync is off',
          'Switch the sync on first: while it is off, every change waits and would look like drift.',
          'conflict',
        );
      const tracker = await createProgress(ctx.db, base.owner_id, 'drift-check');
      await ctx.boss.send(DRIFT_CHECK, {
        trackingId: tracker.id,
        coreBaseId: base.id,
        full: request.body.full,
        sample: request.body.sample,
      } satisfies DriftCheckData);
      return reply.status(202).send({ trackingId: tracker.id });
    },
  );
}
