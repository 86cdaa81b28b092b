import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';

/**
 * Security review (issue 18, item 1): sign-in had no rate limit (80 wrong passwords in a row were
 * all answered 401, then the right one 200). Sign-in, sign-up, password reset and the public
 * temporary-connection route are now limited per email and per client address, in PostgreSQL,
 * answering 429 with Retry-After in the envelope. createTestApp turns the limits off
 * (LOCKSTEP_AUTH_RATE_LIMIT=off); these tests turn them on.
 */
const ORIGIN = 'http://localhost:3999';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

type Res = { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string };

const post = (app: TestApp, url: string, payload: object, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: 'POST',
    url,
    headers: { origin: ORIGIN, 'content-type': 'application/json', ...headers },
    payload,
  });

const signIn = (app: TestApp, email: string, password: string, headers: Record<string, string> = {}) =>
  post(app, '/api/auth/sign-in/email', { email, password }, headers);

function expectLimited(res: Res, path: string, what: RegExp): number {
  expect(res.statusCode, res.body).toBe(429);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  expect(res.json()).toMatchObject({
    statusCode: 429,
    path,
    timestamp: expect.any(String),
    message: expect.stringMatching(what),
    response: {
      userFacingMessage: expect.stringMatching(/Too many .* Wait \d+ (seconds?|minutes) and try again/),
      code: 'rate_limited',
    },
  });
  return retryAfter;
}

const on = (extra: Record<string, string>) => ({ LOCKSTEP_AUTH_RATE_LIMIT: 'on', ...extra });

describe('sign-in rate limit', () => {
  it('refuses an email after 10 wrong passwords, the right one too, until the window passes', async () => {
    t = await createTestApp(
      on({
        LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL: '10',
        LOCKSTEP_AUTH_RATE_LIMIT_PER_ADDRESS: '100',
        LOCKSTEP_AUTH_RATE_LIMIT_WINDOW_SECONDS: '6',
      }),
    );
    const app = t;
    await signUp(app.app, 'victim@test.test');
    for (let i = 0; i < 10; i++) {
      expect((await signIn(app, 'victim@test.test', `wrong-guess-${i}`)).statusCode).toBe(401);
    }
    expectLimited(
      await signIn(app, 'victim@test.test', 'wrong-guess-10'),
      '/api/auth/sign-in/email',
      /sign-in/,
    );
    // The right password is refused too: a guess that happened to be right must not get through.
    const right = await signIn(app, 'victim@test.test', 'correct-horse-battery');
    const retryAfter = expectLimited(right, '/api/auth/sign-in/email', /sign-in/);
    expect(retryAfter).toBeLessThanOrEqual(6);
    // The email is the key, however it is written.
    expect((await signIn(app, ' Victim@TEST.test', 'correct-horse-battery')).statusCode).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 200));
    expect((await signIn(app, 'victim@test.test', 'correct-horse-battery')).statusCode).toBe(200);
  }, 30_000);

  it('limits an address across emails, and X-Forwarded-For does not change the address by default', async () => {
    t = await createTestApp(
      on({
        LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL: '3',
        LOCKSTEP_AUTH_RATE_LIMIT_PER_ADDRESS: '6',
        LOCKSTEP_AUTH_RATE_LIMIT_WINDOW_SECONDS: '600',
      }),
    );
    const app = t;
    for (let i = 0; i < 3; i++) expect((await signIn(app, 'a@test.test', `wrong-${i}`)).statusCode).toBe(401);
    expectLimited(await signIn(app, 'a@test.test', 'wrong-3'), '/api/auth/sign-in/email', /sign-in/);
    // Another email from the same address: its own limit is 3, but the address's 6 runs out first.
    const statuses: number[] = [];
    let last: Res | undefined;
    for (let i = 0; i < 3; i++) {
      last = await signIn(app, 'b@test.test', `wrong-${i}`, { 'x-forwarded-for': `203.0.113.${i + 1}` });
      statuses.push(last.statusCode);
    }
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 401).length).toBeLessThan(3);
    expectLimited(last as Res, '/api/auth/sign-in/email', /sign-in/);
    // A third email from the same address is limited from its first attempt.
    expectLimited(await signIn(app, 'c@test.test', 'wrong'), '/api/auth/sign-in/email', /sign-in/);
  });

  it('believes X-Forwarded-For only when LOCKSTEP_TRUST_PROXY says so', async () => {
    t = await createTestApp(
      on({
        LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL: '100',
        LOCKSTEP_AUTH_RATE_LIMIT_PER_ADDRESS: '2',
        LOCKSTEP_TRUST_PROXY: 'true',
      }),
    );
    const app = t;
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 0; i < 2; i++)
      expect((await signIn(app, `x${i}@test.test`, 'wrong', from('198.51.100.7'))).statusCode).toBe(401);
    expectLimited(
      await signIn(app, 'x3@test.test', 'wrong', from('198.51.100.7')),
      '/api/auth/sign-in/email',
      /sign-in/,
    );
    // Another client behind the same proxy has its own count.
    expect((await signIn(app, 'x4@test.test', 'wrong', from('198.51.100.8'))).statusCode).toBe(401);
  });
});

describe('sign-up, password reset and temporary connections', () => {
  it('limits each per address (sign-up) and per email (reset, temporary connection)', async () => {
    t = await createTestApp(
      on({ LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL: '2', LOCKSTEP_AUTH_RATE_LIMIT_PER_ADDRESS: '3' }),
    );
    const app = t;
    // Sign-up: 3 accounts from one address, then 429 (each email is new, so the address limits).
    for (let i = 0; i < 3; i++) await signUp(app.app, `new${i}@test.test`);
    expectLimited(
      await post(app, '/api/auth/sign-up/email', {
        email: 'new3@test.test',
        password: 'correct-horse-battery',
        name: 'N',
      }),
      '/api/auth/sign-up/email',
      /sign-up/,
    );
    // Password reset requests: per email.
    for (let i = 0; i < 2; i++) {
      const res = await post(app, '/api/auth/request-password-reset', { email: 'new0@test.test' });
      expect(res.statusCode).not.toBe(429);
    }
    expectLimited(
      await post(app, '/api/auth/request-password-reset', { email: 'new0@test.test' }),
      '/api/auth/request-password-reset',
      /password reset/,
    );
    // The public temporary-connection check: per email.
    const temporary = () =>
      post(app, '/rest/temporary-external-connections/create', {
        email: 'later@test.test',
        connectorType: 'postgresql',
        connectionItems: { connectionString: 'postgres://u:p@127.0.0.1:1/db' },
      });
    for (let i = 0; i < 2; i++) expect((await temporary()).statusCode).toBe(400);
    expectLimited(await temporary(), '/rest/temporary-external-connections/create', /connection attempts/);
  });
});
