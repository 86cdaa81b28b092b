import { GenerateFetchBody, GenerateFetchResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { asHttpError } from '../../services/api-import/errors';
import { proposeConfig } from '../../services/api-import/infer';
import { requestHeaders, requestJson } from '../../services/api-import/outbound';
import { allowPrivateHosts } from '../../services/api-import/run-import';

/**
 * Spec section 7, API import: a fetch configuration proposed from a sample URL (called once, with
 * the headers and auth given) or a pasted sample response: where the records are, the pagination,
 * the id field and the fields' types. Nothing is saved.
 */
export function generateFetch(app: RestApp, ctx: AppContext) {
  app.post(
    '/api-import/generate-fetch',
    {
      schema: {
        tags: ['api-import'],
        summary: 'Propose a fetch configuration from a sample URL or a pasted sample response',
        body: GenerateFetchBody,
        response: { 200: GenerateFetchResponse },
      },
    },
    async (request) => {
      principalOf(request);
      const body = request.body;
      if (!body.url && body.sample === undefined)
        throw new HttpError(
          400,
          'url or sample needed',
          'Give a sample URL or paste a sample response.',
          'validation',
        );
      let json: unknown;
      let linkHeader: string | string[] | undefined;
      let url = body.url ?? null;
      if (body.sample !== undefined && !body.url) {
        try {
          json = JSON.parse(body.sample);
        } catch (error) {
          throw new HttpError(
            400,
            'sample is not JSON',
            `The pasted sample is not JSON: ${error instanceof Error ? error.message : String(error)}`,
            'validation',
          );
        }
      } else {
        try {
          const res = await requestJson(
            {
              method: body.method,
              url: body.url as string,
              headers: requestHeaders(body.headers, body.auth),
              body: body.method === 'POST' ? body.body : null,
            },
            { allowPrivate: allowPrivateHosts(ctx.config) },
          );
          json = res.json;
          linkHeader = res.headers.link;
          url = body.url as string;
        } catch (error) {
          throw asHttpError(error);
        }
      }
      try {
        return proposeConfig({
          url,
          method: body.method,
          headers: body.headers,
          body: body.body,
          auth: body.auth,
          json,
          linkHeader,
          recordsPath: body.recordsPath,
          pagination: body.pagination,
        });
      } catch (error) {
        throw asHttpError(error);
      }
    },
  );
}
