import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';

let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let staff: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_STAFF_EMAILS: 'boss@lockstep.test' });
  user = await signUp(t.app, 'user@lockstep.test');
  staff = await signUp(t.app, 'boss@lockstep.test');
});
afterAll(async () => t.close());

function expectEnvelope(body: unknown, status: number, path: string) {
  expect(body).toMatchObject({
    statusCode: status,
    path,
    message: expect.any(String),
    response: expect.any(Object),
  });
  const b = body as { timestamp: string };
  expect(Number.isNaN(Date.parse(b.timestamp))).toBe(false);
}

describe('the error envelope and the Bearer guard', () => {
  it('public routes answer without a token', async () => {
    expect((await t.app.inject('/health')).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject('/api/hello')).statusCode).toBe(200);
    expect((await t.app.inject('/api/docs/json')).json()).toHaveProperty('paths./rest/users/current');
  });

  it('refuses a /rest call without a token with 401 in the envelope', async () => {
    const res = await t.app.inject('/rest/users/current');
    expect(res.statusCode).toBe(401);
    expectEnvelope(res.json(), 401, '/rest/users/current');
    expect(res.json().response.userFacingMessage).toMatch(/Sign in/);
  });

  it('refuses a malformed Authorization header and a forged token', async () => {
    const basic = await t.app.inject({ url: '/rest/users/current', headers: { authorization: 'Basic abc' } });
    expect(basic.statusCode).toBe(401);
    const { privateKey } = await generateKeyPair('EdDSA');
    const forged = await new SignJWT({ email: 'user@lockstep.test', role: 'admin' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'forged' })
      .setSubject(user.userId)
      .setIssuer('lockstep')
      .setAudience('lockstep-rest')
      .setExpirationTime('5m')
      .sign(privateKey);
    const res = await t.app.inject({
      url: '/rest/users/current',
      headers: { authorization: `Bearer ${forged}` },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().response.userFacingMessage).toMatch(/invalid or has expired/);
  });

  it('answers unknown API paths with a 404 envelope', async () => {
    const res = await t.app.inject({ url: '/rest/nothing-here', headers: user.auth });
    expect(res.statusCode).toBe(404);
    expectEnvelope(res.json(), 404, '/rest/nothing-here');
  });

  it('answers malformed JSON, unknown fields, wrong types and oversized bodies with 4xx envelopes', async () => {
    const url = '/rest/users/current/choose-plan';
    const headers = { ...user.auth, 'content-type': 'application/json' };
    const bad = await t.app.inject({ method: 'POST', url, headers, payload: '{"productType": ' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().response.userFacingMessage).toBe('The request body is not valid JSON.');

    const unknown = await t.app.inject({
      method: 'POST',
      url,
      headers,
      payload: { productType: 'pro', extra: 1 },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().response.userFacingMessage.join(' ')).toMatch(/extra/);

    const wrongType = await t.app.inject({ method: 'POST', url, headers, payload: { productType: 42 } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().response.userFacingMessage.join(' ')).toMatch(/body\.productType/);

    const huge = await t.app.inject({
      method: 'POST',
      url,
      headers,
      payload: JSON.stringify({ productType: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.statusCode).toBe(413);
    expectEnvelope(huge.json(), 413, url);

    // None of these changed anything: the user still has no plan.
    const me = await t.app.inject({ url: '/rest/users/current', headers: user.auth });
    expect(me.json().lockstepUser.subscription.status).toBe('none');
  });

  it('refuses paging values out of range', async () => {
    const res = await t.app.inject({ url: '/rest/users?take=5000', headers: staff.auth });
    expect(res.statusCode).toBe(400);
    expect(res.json().response.userFacingMessage.join(' ')).toMatch(/querystring\.take/);
  });

  it('forces an error for staff only, as a 500 envelope with a generic text', async () => {
    const asUser = await t.app.inject({ url: '/rest/debug/error', headers: user.auth });
    expect(asUser.statusCode).toBe(403);
    const asStaff = await t.app.inject({ url: '/rest/debug/error', headers: staff.auth });
    expect(asStaff.statusCode).toBe(500);
    expectEnvelope(asStaff.json(), 500, '/rest/debug/error');
    expect(asStaff.json().response.userFacingMessage).toBe('Something went wrong on our side.');
  });
});
