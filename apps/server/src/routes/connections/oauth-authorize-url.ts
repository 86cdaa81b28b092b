import { AbsoluteUrl, ConnectorType, connectorDisplayName } from '@lockstep/contract';
import { z } from 'zod';
import { ConnectionProblem } from '../../connectors/connector-port';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { connectorFor } from '../../services/external-connections';

const Body = z.strictObject({
  /** S256 of the verifier the browser keeps; the verifier itself comes only with the callback. */
  codeChallenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url SHA-256 (43 characters)'),
  state: z.string().min(16).max(200),
  redirectUri: z.string().url().max(2000).optional(),
});

/**
 * Starts an OAuth sign-in (authorization code with PKCE): the app's authorize URL for the web app to
 * open in a popup. The redirect must come back to this server's own /oauth/{type}/callback page.
 */
export function oauthAuthorizeUrl(app: RestApp, ctx: AppContext) {
  app.post(
    '/external-connections/oauth/:connectorType/authorize-url',
    {
      schema: {
        tags: ['connections'],
        summary: "The app's authorize URL for a PKCE sign-in in a popup",
        params: z.object({ connectorType: ConnectorType }),
        body: Body,
        response: { 200: z.object({ url: AbsoluteUrl }) },
      },
    },
    async (request) => {
      principalOf(request);
      const type = request.params.connectorType;
      const port = connectorFor(ctx, type);
      if (!port.authorizeUrl)
        throw new HttpError(
          400,
          `${type} has no OAuth sign-in`,
          `${connectorDisplayName(type)} does not connect by signing in here. Use its connection form.`,
          'validation',
        );
      const own = `${ctx.config.publicUrl}/oauth/${type}/callback`;
      const redirectUri = request.body.redirectUri ?? own;
      // Only our own callback page: anything else would hand the code to someone else.
      if (new URL(redirectUri).pathname !== `/oauth/${type}/callback`)
        throw new HttpError(
          400,
          'Bad redirectUri',
          `The sign-in must come back to /oauth/${type}/callback.`,
          'validation',
        );
      try {
        return {
          url: port.authorizeUrl({
            redirectUri,
            state: request.body.state,
            codeChallenge: request.body.codeChallenge,
          }),
        };
      } catch (error) {
        if (error instanceof ConnectionProblem)
          throw new HttpError(400, error.message, error.userFacingMessage, error.code);
        throw error;
      }
    },
  );
}
