import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from '../../test/smtp-sink';
import { createTestApp, type TestApp } from '../../test/test-app';

/**
 * Security review (issue 18, item 10): sign-up answered 422 USER_ALREADY_EXISTS for a taken email
 * and 200 with a session for a new one, so anyone could probe which emails have accounts. With
 * email verification (on outside local mode) both get the same answer and no session; the owner of
 * a taken address gets a note, a new address its confirmation link.
 */
const ORIGIN = 'http://localhost:3999';
const PASSWORD = 'correct-horse-battery';
const VERIFY = /^Confirm your email address/;
const TRIED = /^Someone tried to create a Lockstep account/;

type Res = { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string };

const cookiesOf = (res: Res) =>
  [res.headers['set-cookie']].flat().filter((c): c is string => typeof c === 'string');
const cookieHeader = (res: Res) =>
  cookiesOf(res)
    .map((c) => c.split(';')[0])
    .join('; ');

function post(t: TestApp, url: string, payload: object) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { origin: ORIGIN, 'content-type': 'application/json' },
    payload,
  });
}

const signUp = (t: TestApp, email: string, password = PASSWORD, name = 'Sam') =>
  post(t, '/api/auth/sign-up/email', { email, password, name, callbackURL: '/syncs' });
const signIn = (t: TestApp, email: string, password = PASSWORD) =>
  post(t, '/api/auth/sign-in/email', { email, password });

/** The confirmation link in a mail, as a path on this server. */
function linkIn(text: string): string {
  const match = /https?:\/\/\S+\/api\/auth\/verify-email\?\S+/.exec(text);
  if (!match) throw new Error(`no confirmation link in:\n${text}`);
  const url = new URL(match[0]);
  return `${url.pathname}${url.search}`;
}

const sortedKeys = (o: object) => Object.keys(o).sort();

describe('sign-up with email verification', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await startSmtpSink();
    // Test mode with mail set up verifies, as staging and production do (emailVerificationMode).
    t = await createTestApp({
      LOCKSTEP_SMTP_URL: smtp.url,
      LOCKSTEP_MAIL_FROM: 'Lockstep <no-reply@lockstep.test>',
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('confirms a new address by its link; signing in before that is refused with what to do', async () => {
    const res = await signUp(t, 'owner@test.test');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      token: null,
      user: { email: 'owner@test.test', emailVerified: false },
    });
    expect(cookiesOf(res)).toEqual([]);
    const mail = await smtp.next('owner@test.test', VERIFY);
    expect(mail.from).toBe('no-reply@lockstep.test');
    const link = linkIn(mail.text);

    const early = await signIn(t, 'owner@test.test');
    expect(early.statusCode, early.body).toBe(403);
    expect(early.json()).toMatchObject({
      statusCode: 403,
      path: '/api/auth/sign-in/email',
      timestamp: expect.any(String),
      message: 'Confirm your email address first: we sent you a link.',
      response: {
        userFacingMessage: 'Confirm your email address first: we sent you a link.',
        code: 'EMAIL_NOT_VERIFIED',
      },
    });
    expect(cookiesOf(early)).toEqual([]);
    // ...and sends a fresh link, for one that was lost or has expired.
    linkIn((await smtp.next('owner@test.test', VERIFY)).text);

    const verified = await t.app.inject({ method: 'GET', url: link });
    expect(verified.statusCode, verified.body).toBe(302);
    expect(verified.headers.location).toBe('/syncs');
    // Following the link signs in (autoSignInAfterVerification).
    const session = await t.app.inject({
      method: 'GET',
      url: '/api/auth/get-session',
      headers: { cookie: cookieHeader(verified) },
    });
    expect(session.json()).toMatchObject({ user: { email: 'owner@test.test', emailVerified: true } });

    const later = await signIn(t, 'owner@test.test');
    expect(later.statusCode, later.body).toBe(200);
    expect(cookiesOf(later).some((c) => c.includes('session_token='))).toBe(true);
  });

  it('answers a taken address exactly as a new one, and tells only the owner', async () => {
    const taken = await signUp(t, 'Owner@Test.test', 'guessing-someone-elses-account', 'Mallory');
    const fresh = await signUp(t, 'newbie@test.test', 'guessing-someone-elses-account', 'Mallory');
    for (const res of [taken, fresh]) {
      expect(res.statusCode, res.body).toBe(200);
      expect(cookiesOf(res)).toEqual([]);
      expect((res.json() as { token: unknown }).token).toBeNull();
      expect(res.headers['content-type']).toBe(fresh.headers['content-type']);
    }
    const a = taken.json() as { user: object };
    const b = fresh.json() as { user: object };
    expect(sortedKeys(a)).toEqual(sortedKeys(b));
    expect(sortedKeys(a.user)).toEqual(sortedKeys(b.user));
    expect(a.user).toMatchObject({ email: 'owner@test.test', name: 'Mallory', emailVerified: false });

    const note = await smtp.next('owner@test.test', TRIED);
    expect(note.text).toMatch(/already has one\. Nothing was changed/);
    expect(note.text).toContain('http://localhost:3999/sign-in');
    expect(note.text).not.toContain('Mallory');
    await smtp.next('newbie@test.test', VERIFY);
    // The owner got no confirmation link for the attempt, and the newcomer no note.
    await new Promise((r) => setTimeout(r, 300));
    const to = (email: string, subject: RegExp) =>
      smtp.mails.filter((m) => m.to.includes(email) && subject.test(m.subject)).length;
    expect(to('owner@test.test', VERIFY)).toBe(2);
    expect(to('newbie@test.test', TRIED)).toBe(0);

    // The owner's account is untouched: one row, their own password.
    const rows = await t.ctx.db
      .selectFrom('user')
      .select('name')
      .where('email', '=', 'owner@test.test')
      .execute();
    expect(rows).toEqual([{ name: 'Sam' }]);
    expect((await signIn(t, 'owner@test.test', 'guessing-someone-elses-account')).statusCode).toBe(401);
    expect((await signIn(t, 'owner@test.test')).statusCode).toBe(200);
  });
});

describe('sign-up without email verification (local mode, the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('signs in at once, as before (and so still tells a taken address apart)', async () => {
    const res = await signUp(t, 'local@test.test');
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { token: unknown }).token).toEqual(expect.any(String));
    expect(cookiesOf(res).some((c) => c.includes('session_token='))).toBe(true);
    expect((await signIn(t, 'local@test.test')).statusCode).toBe(200);
    expect((await signUp(t, 'local@test.test')).statusCode).toBe(422);
  });
});

describe('asking for a new confirmation link', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await createTestApp({
      LOCKSTEP_SMTP_URL: smtp.url,
      LOCKSTEP_MAIL_FROM: 'no-reply@lockstep.test',
      LOCKSTEP_AUTH_RATE_LIMIT: 'on',
      LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL: '3',
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('counts with sign-up attempts, so no one can fill an unconfirmed inbox', async () => {
    expect((await signUp(t, 'flooded@test.test')).statusCode).toBe(200);
    const resend = () => post(t, '/api/auth/send-verification-email', { email: 'flooded@test.test' });
    for (let i = 0; i < 2; i++) expect((await resend()).statusCode).toBe(200);
    const refused = await resend();
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json()).toMatchObject({
      path: '/api/auth/send-verification-email',
      response: { code: 'rate_limited' },
    });
    for (let i = 0; i < 3; i++) await smtp.next('flooded@test.test', VERIFY);
  });
});
