import { AUTH_BASE_PATH } from '@lockstep/contract';
import { betterAuth } from 'better-auth';
import { APIError, createAuthMiddleware } from 'better-auth/api';
import { getMigrations } from 'better-auth/db/migration';
import { admin, genericOAuth, jwt } from 'better-auth/plugins';
import type pg from 'pg';
import type { Config } from '../config';
import { verifiedSignUpOptions } from './email-verification';
import type { Mailer } from './mailer';
import { weakPasswordReason } from './password-strength';

/** better-auth's admin role is Lockstep's staff role. */
export const STAFF_ROLE = 'admin';
export const JWT_ISSUER = 'lockstep';
export const JWT_AUDIENCE = 'lockstep-rest';

/**
 * The header mountAuth sets to the client's address as Fastify sees it (the socket's, or a trusted
 * proxy's X-Forwarded-For); any copy the client sends is dropped. better-auth reads the address
 * only from here (sessions record it), never from a header the client chooses.
 */
export const CLIENT_ADDRESS_HEADER = 'x-lockstep-client-address';

/** Endpoints that set a password, and the body field it is in. */
const PASSWORD_FIELDS: Record<string, 'password' | 'newPassword'> = {
  '/sign-up/email': 'password',
  '/change-password': 'newPassword',
  '/reset-password': 'newPassword',
  '/admin/create-user': 'password',
  '/admin/set-user-password': 'newPassword',
};

/** Refuses a weak new password (400, code WEAK_PASSWORD) before better-auth stores it. */
const refuseWeakPasswords = createAuthMiddleware(async (ctx) => {
  const field = PASSWORD_FIELDS[ctx.path];
  if (!field) return;
  const body = (ctx.body ?? {}) as Record<string, unknown>;
  const password = body[field];
  if (typeof password !== 'string') return;
  const session = (ctx.context as { session?: { user?: { email?: string; name?: string } } | null }).session;
  const reason = weakPasswordReason(password, [
    typeof body.email === 'string' ? body.email : undefined,
    typeof body.name === 'string' ? body.name : undefined,
    session?.user?.email,
    session?.user?.name,
  ]);
  if (reason) throw new APIError('BAD_REQUEST', { message: reason, code: 'WEAK_PASSWORD' });
});

export type AuthHooks = {
  /** Called once a user row exists: create the product record. */
  onUserCreated: (user: { id: string; email: string }) => Promise<void>;
};

/** OIDC providers come from LOCKSTEP_OIDC_PROVIDERS=id1,id2 and LOCKSTEP_OIDC_<ID>_{ISSUER,CLIENT_ID,CLIENT_SECRET}. */
function oidcProviders(config: Config, env: NodeJS.ProcessEnv) {
  return config.oidcProviders.map((providerId) => {
    const key = providerId.toUpperCase().replaceAll(/[^A-Z0-9]/g, '_');
    const issuer = env[`LOCKSTEP_OIDC_${key}_ISSUER`];
    const clientId = env[`LOCKSTEP_OIDC_${key}_CLIENT_ID`];
    const clientSecret = env[`LOCKSTEP_OIDC_${key}_CLIENT_SECRET`];
    if (!issuer || !clientId || !clientSecret) {
      throw new Error(
        `OIDC provider "${providerId}" needs LOCKSTEP_OIDC_${key}_ISSUER, LOCKSTEP_OIDC_${key}_CLIENT_ID and LOCKSTEP_OIDC_${key}_CLIENT_SECRET.`,
      );
    }
    return {
      providerId,
      clientId,
      clientSecret,
      discoveryUrl: `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
      scopes: ['openid', 'email', 'profile'],
      pkce: true,
    };
  });
}

export function createAuth(options: {
  pool: pg.Pool;
  config: Config;
  secret: string;
  hooks: AuthHooks;
  /** Set when new accounts confirm their email address (emailVerificationMode); null signs up at once. */
  mailer: Mailer | null;
  env?: NodeJS.ProcessEnv;
}) {
  const { pool, config, secret, hooks, mailer } = options;
  const providers = oidcProviders(config, options.env ?? process.env);
  const verified = mailer ? verifiedSignUpOptions(mailer, config) : null;
  return betterAuth({
    appName: 'Lockstep',
    database: pool,
    baseURL: config.publicUrl,
    basePath: AUTH_BASE_PATH,
    secret,
    trustedOrigins: config.trustedOrigins,
    telemetry: { enabled: false },
    // Lockstep limits sign-in, sign-up and password resets itself (mountAuth: per email and per
    // address, in PostgreSQL for every api process); better-auth's own would be per process.
    rateLimit: { enabled: false },
    advanced: {
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
      // Mail goes out after the answer: a slow or failing SMTP server neither delays sign-up nor
      // tells a new address from a taken one by the time it takes. better-auth logs the failures.
      backgroundTasks: { handler: (promise) => void promise.catch(() => {}) },
    },
    hooks: { before: refuseWeakPasswords },
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 8,
      maxPasswordLength: 128,
      autoSignIn: true,
      ...verified?.emailAndPassword,
    },
    ...(verified ? { emailVerification: verified.emailVerification } : {}),
    plugins: [
      admin({ defaultRole: 'user', adminRoles: [STAFF_ROLE], impersonationSessionDuration: 60 * 60 }),
      jwt({
        jwt: {
          issuer: JWT_ISSUER,
          audience: JWT_AUDIENCE,
          expirationTime: '5m',
          // The REST API needs only who is asking and whether staff is acting as them.
          // `sid` ties the token to its session: signing out ends the session, and with it the token.
          definePayload: ({ user, session }) => ({
            sid: session.id,
            email: user.email,
            role: user.role ?? 'user',
            impersonatedBy: (session as { impersonatedBy?: string | null }).impersonatedBy ?? null,
          }),
        },
      }),
      ...(providers.length > 0 ? [genericOAuth({ config: providers })] : []),
    ],
    databaseHooks: {
      user: {
        create: {
          before: async (user) => ({
            data: { ...user, role: config.staffEmails.has(user.email.toLowerCase()) ? STAFF_ROLE : 'user' },
          }),
          after: async (user) => {
            await hooks.onUserCreated({ id: user.id, email: user.email });
          },
        },
      },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;

/** Creates or updates better-auth's tables (user, session, account, verification, jwks). */
export async function migrateAuth(auth: Auth): Promise<void> {
  const { runMigrations } = await getMigrations(auth.options);
  await runMigrations();
}
