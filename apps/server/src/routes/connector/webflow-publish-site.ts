import { Progress } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { findExternalBase } from '../../services/external-bases';
import { callConnector, connectorFor, openSecrets } from '../../services/external-connections';
import { createProgress, findProgress, toProgress, updateProgress } from '../../services/progress';

const Params = z.object({ externalBaseId: z.string().uuid('must be an external base id (a UUID)') });

/**
 * Spec section 7, POST /rest/connector/webflow/publishSite/{externalBaseId}: publishes the Webflow
 * site a connected app (external base) stands for, so the CMS items Lockstep wrote staged go live.
 * Only the base's owner may. The publish is queued in Webflow at once; the answer is its progress
 * tracker (COMPLETED, with the domains it went to). A refusal is the spec's error envelope — and the
 * tracker FAILED with the same text: 429 when Webflow's one publish a minute is used up (the text
 * says how long to wait), 400 for a base that is not Webflow or a refused token, 403 for a token
 * without Sites write.
 */
export function webflowPublishSiteRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/connector/webflow/publishSite/:externalBaseId',
    {
      schema: {
        tags: ['external-bases'],
        summary: 'Publish the Webflow site of a connected app (its staged CMS items go live)',
        params: Params,
        response: { 200: Progress },
      },
    },
    async (request) => {
      const base = await findExternalBase(ctx.db, principalOf(request), request.params.externalBaseId);
      if (base.type !== 'webflow') {
        throw new HttpError(
          400,
          `external base ${base.id} is ${base.type}, not webflow`,
          'Only a Webflow site can be published.',
          'validation',
        );
      }
      if (!base.external_connection_id) throw notFound('Connection');
      const connection = await ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', base.external_connection_id)
        .executeTakeFirst();
      if (!connection) throw notFound('Connection');
      const port = connectorFor(ctx, 'webflow');
      if (!port.publishSite) throw notFound('Site publishing');
      const tracker = await createProgress(ctx.db, base.owner_id, 'webflow_publish_site', 1);
      await updateProgress(ctx.db, tracker.id, { status: 'IN_PROGRESS', message: 'Publishing the site' });
      try {
        const publish = port.publishSite;
        const result = await callConnector('webflow', () =>
          publish(openSecrets(ctx, connection).connectionItems, base.remote_id),
        );
        await updateProgress(ctx.db, tracker.id, {
          status: 'COMPLETED',
          done: 1,
          message: `Publishing queued to ${result.publishedTo.join(', ')}`,
          result,
        });
      } catch (error) {
        const text =
          error instanceof HttpError
            ? [error.userFacingMessage].flat().join(' ')
            : 'The site could not be published.';
        await updateProgress(ctx.db, tracker.id, { status: 'FAILED', message: text });
        throw error;
      }
      return toProgress(await findProgress(ctx.db, principalOf(request), tracker.id));
    },
  );
}
