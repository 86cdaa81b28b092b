import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequestError, requestHeaders, requestJson } from './outbound';

/** A local server: big answers, a silent one, redirects, and one that echoes the credentials it got. */
let server: http.Server;
let port = 0;
const seen: { path: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const big = JSON.stringify({ data: 'x'.repeat(4000) });
    if (req.url === '/big') return res.end(big);
    if (req.url === '/big-gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      return res.end(zlib.gzipSync(big));
    }
    if (req.url === '/silent') return; // never answers
    if (req.url === '/elsewhere') {
      res.writeHead(302, { location: `http://localhost:${port}/echo` });
      return res.end();
    }
    if (req.url === '/same') {
      res.writeHead(301, { location: '/echo' });
      return res.end();
    }
    if (req.url === '/echo')
      return res.end(JSON.stringify({ authorization: req.headers.authorization ?? null }));
    if (req.url === '/html') return res.end('<html>');
    res.writeHead(404);
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const get = (path: string, options: Partial<Parameters<typeof requestJson>[1]> = {}, host = '127.0.0.1') =>
  requestJson(
    {
      method: 'GET',
      url: `http://${host}:${port}${path}`,
      headers: requestHeaders({}, { type: 'bearer', token: 't0ken' }),
    },
    { allowPrivate: true, ...options },
  );

async function failure(promise: Promise<unknown>): Promise<ApiRequestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiRequestError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe('requests to a user API', () => {
  it('refuses an answer over the size limit, compressed or not', async () => {
    expect((await get('/big', { maxBytes: 10_000 })).json).toMatchObject({ data: expect.any(String) });
    expect((await failure(get('/big', { maxBytes: 1024 }))).kind).toBe('too_large');
    expect((await failure(get('/big-gzip', { maxBytes: 1024 }))).kind).toBe('too_large');
  });

  it('gives up on an API that does not answer in time', async () => {
    const started = Date.now();
    const error = await failure(get('/silent', { timeoutMs: 300 }));
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('keeps credentials on a redirect within the origin and drops them for another origin', async () => {
    expect((await get('/same')).json).toEqual({ authorization: 'Bearer t0ken' });
    expect((await get('/elsewhere')).json).toEqual({ authorization: null });
  });

  it('says when the answer is not JSON or an error status', async () => {
    expect((await failure(get('/html'))).kind).toBe('not_json');
    const missing = await failure(get('/nothing'));
    expect(missing.kind).toBe('http_status');
    expect(missing.status).toBe(404);
  });

  it('refuses this machine outside local mode without sending anything', async () => {
    const before = seen.length;
    expect((await failure(get('/echo', { allowPrivate: false }))).kind).toBe('refused');
    expect((await failure(get('/echo', { allowPrivate: false }, 'localhost'))).kind).toBe('refused');
    expect(seen.length).toBe(before);
  });
});
