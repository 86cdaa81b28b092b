import {
  ConnectorType,
  connectorDisplayName,
  ExternalConnection,
  OAuthAuthorizeCallbackBody,
  oauthDeniedMessage,
} from '@lockstep/contract';
import { z } from 'zod';
import { ConnectionProblem } from '../../connectors/connector-port';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { callConnector, connectorFor, toExternalConnection } from '../../services/external-connections';

const denied = (type: ConnectorType) =>
  new HttpError(400, `${type}: OAuth access_denied`, oauthDeniedMessage(type), 'access_denied');

/** Items the client may add beside the tokens (never the ones the exchange or the server set). */
const SERVER_MANAGED = new Set([
  'accessToken',
  'refreshToken',
  'tokenExpiresAt',
  'connectionString',
  'password',
  'roleName',
  'schemas',
  'ssl',
  'projectRef',
  'projectName',
  'organizationId',
]);

export function oauthAuthorizeCallback(app: RestApp, ctx: AppContext) {
  app.post(
    '/external-connections/oauth/:connectorType/authorize-callback',
    {
      schema: {
        tags: ['connections'],
        summary:
          "Finish an OAuth sign-in: the code is exchanged (with its PKCE verifier) at the app's token endpoint and the connection stored",
        params: z.object({ connectorType: ConnectorType }),
        body: OAuthAuthorizeCallbackBody,
        response: { 201: ExternalConnection },
      },
    },
    async (request, reply) => {
      const { userId } = principalOf(request);
      const type = request.params.connectorType;
      const body = request.body;
      if (body.error === 'access_denied') throw denied(type);
      if (body.error) {
        throw new HttpError(
          400,
          `${type}: OAuth ${body.error}`,
          `${connectorDisplayName(type)} sign-in failed (${body.errorDescription ?? body.error}). Please try again.`,
          'oauth_error',
        );
      }
      if (!body.code || !body.codeVerifier) {
        throw new HttpError(
          400,
          'code and codeVerifier are required',
          'The sign-in did not complete. Please try again.',
          'validation',
        );
      }
      const port = connectorFor(ctx, type);
      if (!port.exchangeOAuthCode) {
        throw new HttpError(
          400,
          `${type} has no OAuth sign-in`,
          `${connectorDisplayName(type)} does not connect by signing in here. Use its connection form.`,
          'validation',
        );
      }
      const exchange = port.exchangeOAuthCode.bind(port);
      const input = {
        code: body.code,
        codeVerifier: body.codeVerifier,
        redirectUri: body.redirectUri ?? `${ctx.config.publicUrl}/oauth/${type}/callback`,
      };
      const tokens = await callConnector(type, async () => {
        try {
          return await exchange(input);
        } catch (error) {
          if (error instanceof ConnectionProblem && error.message.startsWith('access_denied'))
            throw denied(type);
          throw error;
        }
      });
      const extra = Object.fromEntries(
        Object.entries(body.connectionItems).filter(([k]) => !SERVER_MANAGED.has(k) && !(k in tokens)),
      );
      let items: Record<string, string> = { ...extra, ...tokens };
      const { accountEmail } = await callConnector(type, () =>
        port.check(items, {
          saveItems: async (next) => {
            items = next;
          },
        }),
      );
      const row = await ctx.db
        .insertInto('external_connection')
        .values({
          owner_id: userId,
          type,
          name:
            body.name ??
            (accountEmail ? `${connectorDisplayName(type)} (${accountEmail})` : connectorDisplayName(type)),
          secrets: ctx.secretBox.seal({ connectionItems: items }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(toExternalConnection(row, items));
    },
  );
}
