import { FetchBody, FetchResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { asHttpError } from '../../services/api-import/errors';
import { fetchRecords } from '../../services/api-import/fetch-records';
import { allowPrivateHosts } from '../../services/api-import/run-import';

/**
 * Spec section 7, API import: runs a fetch configuration over its pages (up to the page and record
 * caps) and answers the first records, how many were read and why reading stopped. Nothing is saved.
 */
export function fetchApi(app: RestApp, ctx: AppContext) {
  app.post(
    '/api-import/fetch',
    {
      schema: {
        tags: ['api-import'],
        summary: "Read a fetch configuration's pages and preview the records",
        body: FetchBody,
        response: { 200: FetchResponse },
      },
    },
    async (request) => {
      principalOf(request);
      const { config, maxPages, maxRecords, previewCount } = request.body;
      try {
        const result = await fetchRecords(
          config,
          { maxPages, maxRecords },
          { allowPrivate: allowPrivateHosts(ctx.config) },
        );
        return {
          records: result.records.slice(0, previewCount),
          totalCount: result.records.length,
          pagesRead: result.pagesRead,
          stoppedBecause: result.stoppedBecause,
        };
      } catch (error) {
        throw asHttpError(error);
      }
    },
  );
}
