import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import { boot } from '../src/boot';
import { loadConfig } from '../src/config';
import { ensureDatabase } from '../src/db/database';
import { buildApp } from '../src/http/app';
import type { AppContext } from '../src/http/context';

export type TestApp = { app: FastifyInstance; ctx: AppContext; close: () => Promise<void> };

/** A fresh database on the run's embedded PostgreSQL, migrated, with the real HTTP app on top. */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { runWorkers?: boolean } = {},
): Promise<TestApp> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const config = loadConfig(
    {
      DATABASE_URL: url.toString(),
      LOCKSTEP_ENV: 'test',
      BETTER_AUTH_SECRET: 'test-secret-test-secret-test-secret-0000',
      LOCKSTEP_SECRET_KEY: randomBytes(32).toString('base64'),
      LOCKSTEP_LOG_LEVEL: 'silent',
      PORT: '3999',
      // Tests sign up and in many users from one address; auth-rate-limit.integration.test.ts turns it on.
      LOCKSTEP_AUTH_RATE_LIMIT: 'off',
      ...env,
    },
    ['node', 'main', '--role=all'],
  );
  const booted = await boot(config, () => {}, { runWorkers: options.runWorkers ?? true });
  // The run's embedded PostgreSQL stands in for the embedded default (demo databases live there).
  booted.ctx.embeddedDatabaseUrl = (database) => {
    const u = new URL(adminUrl);
    u.pathname = `/${database}`;
    return u.toString();
  };
  const app = await buildApp(booted.ctx);
  await app.ready();
  return {
    app,
    ctx: booted.ctx,
    close: async () => {
      await app.close();
      await booted.close();
    },
  };
}

const ORIGIN = 'http://localhost:3999';

/** Signs a user up through better-auth's real endpoints and returns a Bearer token for /rest. */
export async function signUp(app: FastifyInstance, email: string, name = 'Test User') {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    headers: { origin: ORIGIN, 'content-type': 'application/json' },
    payload: { email, password: 'correct-horse-battery', name },
  });
  if (res.statusCode !== 200) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
  const cookie = [res.headers['set-cookie']]
    .flat()
    .filter((c): c is string => typeof c === 'string')
    .map((c) => c.split(';')[0])
    .join('; ');
  const tokenRes = await app.inject({ method: 'GET', url: '/api/auth/token', headers: { cookie } });
  const token = (tokenRes.json() as { token: string }).token;
  const userId = (res.json() as { user: { id: string } }).user.id;
  return { token, cookie, userId, auth: { authorization: `Bearer ${token}` } };
}

/** A fetch that delivers into the app in process (a simulator's webhook pings; no port to listen on). */
export function injectAsFetch(app: FastifyInstance): typeof fetch {
  return async (input, init) => {
    const res = await app.inject({
      method: 'POST',
      url: new URL(String(input)).pathname,
      headers: init?.headers as Record<string, string>,
      payload: String(init?.body ?? ''),
    });
    return new Response(res.body, { status: res.statusCode });
  };
}
