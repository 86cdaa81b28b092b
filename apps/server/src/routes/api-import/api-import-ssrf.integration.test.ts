import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

/**
 * Issue 22, API import: outside local mode the user's API must be on the public internet. A server
 * on this machine (or the metadata service, a private network) is refused before any request
 * reaches it, by address or by a name resolving to it.
 */
let t: TestApp;
let auth: Record<string, string>;
let server: http.Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[{"id":1}]');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  t = await createTestApp(
    { LOCKSTEP_ENV: 'production', LOCKSTEP_EMAIL_VERIFICATION: 'off' },
    { runWorkers: false },
  );
  auth = (await signUp(t.app, 'api-import-ssrf@test.test')).auth;
}, 120_000);
afterAll(async () => {
  await t?.close();
  await new Promise((r) => server?.close(r));
});

const post = (url: string, payload: unknown) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { ...auth, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });

describe('API import outside local mode', () => {
  it.each([
    `http://127.0.0.1:PORT/people`,
    `http://localhost:PORT/people`,
    `http://[::ffff:127.0.0.1]:PORT/people`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/people',
  ])('refuses %s with 403 in the envelope, sending nothing', async (address) => {
    const url = address.replace('PORT', String(port));
    const proposed = await post('/rest/api-import/generate-fetch', { url });
    expect(proposed.statusCode, proposed.body).toBe(403);
    expect(proposed.json()).toMatchObject({ statusCode: 403, path: '/rest/api-import/generate-fetch' });
    expect(proposed.json().response.userFacingMessage).toMatch(/Lockstep cannot connect to/);
    const fetched = await post('/rest/api-import/fetch', {
      config: { url, recordsPath: '$[*]', idField: 'id' },
    });
    expect(fetched.statusCode, fetched.body).toBe(403);
    expect(hits).toBe(0);
  });
});
