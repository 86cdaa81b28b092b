import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Auth } from '../auth/auth';
import type { TokenClaims } from '../auth/verify-bearer';
import type { Config } from '../config';
import type { ConnectorRegistry } from '../connectors/connector-port';
import type { Db } from '../db/database';
import type { SandboxApps } from '../sandbox/sandbox-apps';
import type { SecretBox } from '../services/secret-box';
import type { createRuntimeConnectors } from '../sync/runtime-connectors';
import type { AuthRateLimiter } from './auth-rate-limit';
import { forbidden, unauthorized } from './http-error';

export type AppContext = {
  boss: PgBoss;
  config: Config;
  pool: pg.Pool;
  db: Db;
  auth: Auth;
  verifyBearer: (token: string) => Promise<TokenClaims>;
  /** Sign-in, sign-up, password reset and public connection checks, per email and client address. */
  authRateLimiter: AuthRateLimiter;
  intercomSecret: string;
  secretBox: SecretBox;
  connectors: ConnectorRegistry;
  /** The embedded PostgreSQL's URL for a database (demo databases); null on a PostgreSQL server. */
  embeddedDatabaseUrl: ((database: string) => string) | null;
  /** Connectors used by runs, by type; tests register in-memory apps here. */
  runtimeConnectors: ReturnType<typeof createRuntimeConnectors>;
  /** Simulated apps this server runs (embedded default or LOCKSTEP_SANDBOX=1); null when off. */
  sandbox?: SandboxApps | null;
};

export type Principal = {
  userId: string;
  email: string;
  staff: boolean;
  impersonatedBy: string | null;
  /** Signed in with a personal API token: its scopes (`read`, `write`); null for a session token. */
  tokenScopes?: ('read' | 'write')[] | null;
};

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export type RestApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** The signed-in principal; every /rest route has one, set by the Bearer guard. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized();
  return request.principal;
}

export function requireStaff(request: FastifyRequest): Principal {
  const principal = principalOf(request);
  if (!principal.staff) throw forbidden();
  return principal;
}

/** A user may act on what they own; staff may act on anything. */
export function canAccessOwner(principal: Principal, ownerId: string): boolean {
  return principal.staff || principal.userId === ownerId;
}
