import { CreateApiTokenBody, CreatedApiToken } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { forbidden } from '../../http/http-error';
import { createApiToken, toApiToken } from '../../services/api-tokens';

export function createApiTokenRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/developer/tokens',
    {
      schema: {
        tags: ['developer'],
        summary: 'Create a personal API token (the token is in this answer only)',
        description:
          'Send it as `Authorization: Bearer <token>` on the REST API, as yourself. A token with only the `read` scope is refused (403) on POST, PUT, PATCH and DELETE. Tokens cannot create tokens: sign in.',
        body: CreateApiTokenBody,
        response: { 201: CreatedApiToken },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal.tokenScopes) throw forbidden('An API token cannot create tokens: sign in to create one.');
      if (principal.impersonatedBy) throw forbidden('Tokens cannot be created while impersonating a user.');
      const { row, token } = await createApiToken(
        ctx.db,
        principal.userId,
        request.body.name,
        request.body.scopes,
      );
      return reply.status(201).send({ ...toApiToken(row), token });
    },
  );
}
