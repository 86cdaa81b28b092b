import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';

// Issue 18 item 10: a Bearer token lives five minutes; signing out must end it at once, not when
// those minutes run out (the token names its session, and the guard checks the session is alive).
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('signing out', () => {
  it("ends the session's Bearer tokens at once, and only that session's", async () => {
    const first = await signUp(t.app, 'sign-out-bearer@test.test');
    const me = (auth: Record<string, string>) => t.app.inject({ url: '/rest/users/current', headers: auth });
    expect((await me(first.auth)).statusCode).toBe(200);

    // A second session of the same user (another browser) keeps working after the first signs out.
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      headers: { origin: 'http://localhost:3999', 'content-type': 'application/json' },
      payload: { email: 'sign-out-bearer@test.test', password: 'correct-horse-battery' },
    });
    const cookie = [signIn.headers['set-cookie']]
      .flat()
      .filter((c): c is string => typeof c === 'string')
      .map((c) => c.split(';')[0])
      .join('; ');
    const other = (await t.app.inject({ url: '/api/auth/token', headers: { cookie } })).json() as {
      token: string;
    };
    const otherAuth = { authorization: `Bearer ${other.token}` };

    const out = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sign-out',
      headers: { cookie: first.cookie, origin: 'http://localhost:3999' },
    });
    expect(out.statusCode, out.body).toBe(200);
    const after = await me(first.auth);
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({
      statusCode: 401,
      response: { userFacingMessage: expect.stringMatching(/signed out/) },
    });
    expect((await me(otherAuth)).statusCode).toBe(200);
  });
});
