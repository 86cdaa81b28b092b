import type { FastifyRequest } from 'fastify';
import { isApiToken, useApiToken } from '../services/api-tokens';
import { toRole } from '../services/users';
import type { AppContext } from './context';
import { forbidden, HttpError, unauthorized } from './http-error';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Open without sign-in (a connection made before sign-in). The handler sees a principal only
     * when a valid Bearer token is sent anyway; a missing or invalid one leaves it null.
     */
    public?: boolean;
    /** Staff only: refused with 403 before anything else (validation included) looks at the request. */
    staff?: boolean;
  }
}

/** Methods a personal API token needs the `write` scope for. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every /rest route needs a valid Bearer token of a user that still exists and is not banned: a
 * session JWT (better-auth's, revoked at sign-out) or a personal API token (`lst_...`, revoked on
 * the developer page; its scopes decide whether it may write).
 */
export function bearerGuard(ctx: AppContext) {
  return async (request: FastifyRequest) => {
    // A route marked public (config: { public: true }) is open before sign-in: a valid token still
    // makes a principal (signed-in callers may be told more), anything else none.
    if (request.routeOptions.config?.public === true) {
      if (!request.headers.authorization) return;
      try {
        await authenticate(request);
      } catch {
        request.principal = null;
      }
      return;
    }
    await authenticate(request);
    if (request.routeOptions.config?.staff === true && request.principal?.staff !== true) throw forbidden();
    const scopes = request.principal?.tokenScopes;
    if (scopes && WRITES.has(request.method) && !scopes.includes('write'))
      throw new HttpError(
        403,
        'This API token is read-only',
        'This API token has only the read scope: it cannot change anything. Create a token with the write scope.',
        'insufficient_scope',
      );
  };

  async function authenticate(request: FastifyRequest) {
    const header = request.headers.authorization;
    if (!header) throw unauthorized('Sign in to continue: this call needs an Authorization: Bearer token.');
    const [scheme, token] = header.split(' ');
    if (scheme?.toLowerCase() !== 'bearer' || !token) {
      throw unauthorized('The Authorization header must be "Bearer <token>".');
    }
    if (isApiToken(token)) return authenticateApiToken(request, token);
    let claims: Awaited<ReturnType<AppContext['verifyBearer']>>;
    try {
      claims = await ctx.verifyBearer(token);
    } catch {
      throw unauthorized('Your session token is invalid or has expired. Sign in again.');
    }
    // Read the role from the database, so a change of role or a deletion takes effect at once.
    const user = await ctx.db
      .selectFrom('user')
      .select(['id', 'email', 'role', 'banned'])
      .where('id', '=', claims.userId)
      .executeTakeFirst();
    if (!user) throw unauthorized('This account no longer exists.');
    // Signed out (or the session expired or was revoked): its tokens stop working at once, not
    // when their five minutes run out.
    if (claims.sessionId) {
      const session = await ctx.db
        .selectFrom('session')
        .select('id')
        .where('id', '=', claims.sessionId)
        .where('expiresAt', '>', new Date())
        .executeTakeFirst();
      if (!session) throw unauthorized('You have signed out of this session. Sign in again.');
    }
    if (user.banned) throw new HttpError(403, 'Account banned', 'This account has been suspended.', 'banned');
    request.principal = {
      userId: user.id,
      email: user.email,
      staff: toRole(user.role) === 'staff',
      impersonatedBy: claims.impersonatedBy,
      tokenScopes: null,
    };
  }

  async function authenticateApiToken(request: FastifyRequest, token: string) {
    const used = await useApiToken(ctx.db, token);
    if (!used) throw unauthorized('This API token is unknown or has been revoked.');
    const user = await ctx.db
      .selectFrom('user')
      .select(['id', 'email', 'role', 'banned'])
      .where('id', '=', used.userId)
      .executeTakeFirst();
    if (!user) throw unauthorized('This account no longer exists.');
    if (user.banned) throw new HttpError(403, 'Account banned', 'This account has been suspended.', 'banned');
    request.principal = {
      userId: user.id,
      email: user.email,
      staff: toRole(user.role) === 'staff',
      impersonatedBy: null,
      tokenScopes: used.scopes,
    };
  }
}
