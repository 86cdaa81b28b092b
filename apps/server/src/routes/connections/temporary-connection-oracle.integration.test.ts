import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

/**
 * Security review (issue 18, item 2): the public temporary-connection route answered differently for
 * wrong credentials, an unreachable host and a host that never answers, so anyone could probe hosts
 * and credentials through it. Unauthenticated callers now get one answer for every failure; a
 * signed-in caller (Bearer token) still gets the exact reason.
 */
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let silent: net.Server;
const sockets = new Set<net.Socket>();
let silentPort = 0;
let closedPort = 0;

beforeAll(async () => {
  silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as net.AddressInfo).port;
  // A port nothing listens on: take one, then let it go.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  t = await createTestApp({ LOCKSTEP_PG_CONNECT_TIMEOUT_MS: '1000' });
  user = await signUp(t.app, 'oracle@test.test');
});
afterAll(async () => {
  await t.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

const realUrl = () => {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = '/postgres';
  return u;
};

function failures(): Record<string, string> {
  const wrongPassword = realUrl();
  wrongPassword.password = 'not-the-password';
  const noDatabase = realUrl();
  noDatabase.pathname = '/no_such_database';
  return {
    'wrong password': wrongPassword.toString(),
    'no such database': noDatabase.toString(),
    'nothing listening': `postgres://u:p@127.0.0.1:${closedPort}/db`,
    'never answers': `postgres://u:p@127.0.0.1:${silentPort}/db?sslmode=disable`,
  };
}

const create = (connectionString: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/rest/temporary-external-connections/create',
    headers: { 'content-type': 'application/json', ...headers },
    payload: { email: 'later@test.test', connectorType: 'postgresql', connectionItems: { connectionString } },
  });

type Body = { timestamp?: string; [key: string]: unknown };
const withoutTime = (body: Body) => ({ ...body, timestamp: undefined });

describe('temporary connection failures', () => {
  it('answer unauthenticated callers the same for every failure', async () => {
    const answers: Array<{ status: number; body: Body }> = [];
    for (const url of Object.values(failures())) {
      const res = await create(url);
      answers.push({ status: res.statusCode, body: withoutTime(res.json()) });
    }
    expect(answers[0]).toMatchObject({
      status: 400,
      body: {
        statusCode: 400,
        path: '/rest/temporary-external-connections/create',
        message: 'Temporary connection check failed',
        response: {
          userFacingMessage: expect.stringMatching(/could not connect with these details/),
          code: 'connection_failed',
        },
      },
    });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    // An invalid Bearer token is no sign-in: the same answer.
    const forged = await create(failures()['wrong password'] as string, {
      authorization: 'Bearer not.a.token',
    });
    expect(withoutTime(forged.json())).toEqual(answers[0]?.body);
    // And a good connection still works without sign-in.
    const ok = await create(realUrl().toString());
    expect(ok.statusCode, ok.body).toBe(201);
  }, 30_000);

  it('tell a signed-in caller the exact reason', async () => {
    const messages = new Set<string>();
    for (const [what, url] of Object.entries(failures())) {
      const res = await create(url, user.auth);
      expect(res.statusCode, what).toBeGreaterThanOrEqual(400);
      const text = res.json().response.userFacingMessage as string;
      expect(text, what).not.toMatch(/Sign in to see the exact reason/);
      messages.add(text);
    }
    expect(messages.size).toBeGreaterThan(1);
  }, 30_000);
});
