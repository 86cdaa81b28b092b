import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

/**
 * Security review (issue 18): a PostgreSQL host that accepts TCP but never answers kept the request
 * open indefinitely (one was still open after 11 minutes). With LOCKSTEP_PG_CONNECT_TIMEOUT_MS the
 * request answers a 400 in the envelope once the connect timeout passes.
 */
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let silent: net.Server;
const sockets = new Set<net.Socket>();
let port = 0;

beforeAll(async () => {
  // Accepts every connection and never writes a byte: no PostgreSQL greeting, no error, no close.
  silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  port = (silent.address() as net.AddressInfo).port;
  t = await createTestApp({ LOCKSTEP_PG_CONNECT_TIMEOUT_MS: '1000' });
  user = await signUp(t.app, 'timeouts@test.test');
});
afterAll(async () => {
  await t.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

function expectTimeoutEnvelope(
  res: { statusCode: number; json(): unknown },
  path: string,
  text: RegExp = /did not answer in time/,
) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({
    statusCode: 400,
    path,
    timestamp: expect.any(String),
    message: expect.any(String),
    response: { userFacingMessage: expect.stringMatching(text) },
  });
}

async function timed<T>(call: () => Promise<T>) {
  const started = Date.now();
  const result = await call();
  return { result, ms: Date.now() - started };
}

describe('PostgreSQL connect timeout', () => {
  it('creating a connection from a connection string to a silent host answers 400 within the timeout', async () => {
    const { result, ms } = await timed(() =>
      t.app.inject({
        method: 'POST',
        url: '/rest/external-connections',
        headers: { ...user.auth, 'content-type': 'application/json' },
        payload: {
          type: 'postgresql',
          connectionItems: { connectionString: `postgres://u:p@127.0.0.1:${port}/db` },
        },
      }),
    );
    expectTimeoutEnvelope(result, '/rest/external-connections');
    expect(ms).toBeLessThan(5_000);
    // Nothing stored.
    expect((await t.app.inject({ url: '/rest/external-connections', headers: user.auth })).json().total).toBe(
      0,
    );
  }, 15_000);

  it('the same with host, port, database and user items', async () => {
    const { result, ms } = await timed(() =>
      t.app.inject({
        method: 'POST',
        url: '/rest/external-connections',
        headers: { ...user.auth, 'content-type': 'application/json' },
        payload: {
          type: 'postgresql',
          connectionItems: {
            host: '127.0.0.1',
            port: String(port),
            database: 'db',
            user: 'u',
            password: 'p',
          },
        },
      }),
    );
    expectTimeoutEnvelope(result, '/rest/external-connections');
    expect(ms).toBeLessThan(5_000);
  }, 15_000);

  it('the public temporary-connection route answers 400 within the timeout too', async () => {
    // Signed in, the exact reason; without sign-in, the one answer every failure gets (no oracle).
    for (const [headers, text] of [
      [user.auth, /did not answer in time/],
      [{}, /could not connect with these details/],
    ] as const) {
      const { result, ms } = await timed(() =>
        t.app.inject({
          method: 'POST',
          url: '/rest/temporary-external-connections/create',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: {
            email: 'later@test.test',
            connectorType: 'postgresql',
            connectionItems: { connectionString: `postgresql://u:p@127.0.0.1:${port}/db?sslmode=disable` },
          },
        }),
      );
      expectTimeoutEnvelope(result, '/rest/temporary-external-connections/create', text);
      expect(ms).toBeLessThan(5_000);
    }
  }, 15_000);
});
