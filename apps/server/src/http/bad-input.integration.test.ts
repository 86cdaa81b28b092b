import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';

/**
 * Security review (issue 18): inputs that answered 500 or left the envelope. A NUL character in any
 * text (PostgreSQL refuses it in text and jsonb), a connection string pg cannot read (`TypeError:
 * Invalid URL`), a path id longer than the router takes (Fastify's own 414 body).
 */
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await createTestApp();
  user = await signUp(t.app, 'bad-input@test.test');
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, 'content-type': 'application/json' },
    payload: { productType: 'solo' },
  });
});
afterAll(async () => t.close());

type Res = { statusCode: number; json(): unknown; body: string };

function expectEnvelope(res: Res, status: number, userFacing: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as { timestamp: string; response: { userFacingMessage: string | string[] } };
  expect(body).toMatchObject({
    statusCode: status,
    path: expect.any(String),
    timestamp: expect.any(String),
    message: expect.any(String),
    response: { userFacingMessage: expect.anything() },
  });
  expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  expect([body.response.userFacingMessage].flat().join(' ')).toMatch(userFacing);
}

const NUL = /Text may not contain NUL characters/;
const post = (url: string, payload: unknown, auth: Record<string, string> | null = user.auth) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { ...(auth ?? {}), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });

describe('NUL characters', () => {
  it('refuses a core base whose name has a NUL, storing nothing', async () => {
    const res = await post('/rest/core-bases', { name: 'Contacts\u0000' });
    expectEnvelope(res, 400, NUL);
    expect((res.json() as { message: string }).message).toMatch(/body\.name/);
    const list = await t.app.inject({ url: '/rest/core-bases?filter=%7B%7D', headers: user.auth });
    expect(list.json()).toMatchObject({ total: 0 });
  });

  it('refuses a NUL when renaming a core base', async () => {
    const created = await post('/rest/core-bases', { name: 'Fine' });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/rest/core-bases/${id}`,
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'a\u0000b' }),
    });
    expectEnvelope(res, 400, NUL);
  });

  it('refuses a connection with a NUL in an item, and in the temporary-connection route', async () => {
    for (const connectionItems of [
      { host: 'db\u0000.example.com', database: 'app', user: 'u' },
      { connectionString: 'postgres://u:p@127.0.0.1:1/db\u0000' },
    ]) {
      expectEnvelope(
        await post('/rest/external-connections', { type: 'postgresql', connectionItems }),
        400,
        NUL,
      );
      expectEnvelope(
        await post(
          '/rest/temporary-external-connections/create',
          { email: 'later@test.test', connectorType: 'postgresql', connectionItems },
          null,
        ),
        400,
        NUL,
      );
    }
  });

  it('refuses a NUL in a query parameter, raw or as a \\u0000 escape in a JSON filter', async () => {
    const raw = await t.app.inject({
      url: `/rest/core-bases?filter=${encodeURIComponent('{"name":"a\u0000"}')}`,
      headers: user.auth,
    });
    expectEnvelope(raw, 400, NUL);
    const escaped = await t.app.inject({
      url: `/rest/core-bases?filter=${encodeURIComponent('{"name":"a\\u0000"}')}`,
      headers: user.auth,
    });
    expectEnvelope(escaped, 400, NUL);
  });

  it('refuses a NUL in a path parameter and a NUL key in a body', async () => {
    expectEnvelope(await t.app.inject({ url: '/rest/core-bases/%00', headers: user.auth }), 400, /./);
    expectEnvelope(await post('/rest/core-bases', { 'na\u0000me': 'x' }), 400, NUL);
  });

  it('refuses a NUL in sign-up (better-auth) in the envelope', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sign-up/email',
      headers: { origin: 'http://localhost:3999', 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'nul@test.test', password: 'correct-horse-battery', name: 'N\u0000' }),
    });
    expectEnvelope(res, 400, NUL);
  });
});

describe('malformed connection strings', () => {
  it('answers 400 in the envelope saying what is wrong, on both routes', async () => {
    for (const [connectionString, why] of [
      ['postgres://u:p@[::1/db', /connection string is not valid \(Invalid URL\)/],
      ['postgres://u:p@host:port/db', /connection string is not valid/],
      ['just some words', /must start with postgres:\/\//],
    ] as const) {
      const created = await post('/rest/external-connections', {
        type: 'postgresql',
        connectionItems: { connectionString },
      });
      expectEnvelope(created, 400, why);
      const temporary = await post(
        '/rest/temporary-external-connections/create',
        { email: 'later@test.test', connectorType: 'postgresql', connectionItems: { connectionString } },
        null,
      );
      expectEnvelope(temporary, 400, why);
    }
  });
});

describe('over-long and malformed paths', () => {
  it('answers a 10,000-character path id with 414 in the envelope, without echoing it whole', async () => {
    const id = 'a'.repeat(10_000);
    for (const url of [`/rest/core-bases/${id}`, `/rest/external-connections/${id}`]) {
      const res = await t.app.inject({ url, headers: user.auth });
      expectEnvelope(res, 414, /too long/);
      expect(res.body.length).toBeLessThan(1_000);
    }
  });

  it('answers a path with a malformed %-escape with 400 in the envelope', async () => {
    const res = await t.app.inject({ url: '/rest/core-bases/%E0%A4%A', headers: user.auth });
    expect(res.statusCode).toBe(400);
    expectEnvelope(res, 400, /./);
  });
});

describe('unknown query parameters', () => {
  it('refuses a parameter the call does not take, naming it and the ones it takes, as unknown body fields are', async () => {
    const misspelt = await t.app.inject({ url: '/rest/sync-errors?take=5&filter={}', headers: user.auth });
    expectEnvelope(misspelt, 400, /does not take "filter".*filters/);
    const none = await t.app.inject({ url: '/rest/users/current?debug=1', headers: user.auth });
    expectEnvelope(none, 400, /takes no query parameters; remove "debug"/);
    // The parameters a call takes still work.
    const known = await t.app.inject({ url: '/rest/sync-errors?take=5&skip=0', headers: user.auth });
    expect(known.statusCode, known.body).toBe(200);
  });
});
