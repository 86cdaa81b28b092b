import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorError } from './connector';
import { HttpClient, type HttpClientOptions, parseRetryAfter } from './http-client';

// A real local HTTP server: each test queues the answers it wants, the server records what it got.
type Answer =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true }
  | { destroy: true };
let answers: Answer[] = [];
let received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
let server: Server;
let baseUrl: string;

function handle(req: IncomingMessage, res: ServerResponse) {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    const answer = answers.shift() ?? { status: 200, body: { ok: true } };
    if ('hang' in answer) return;
    if ('destroy' in answer) {
      req.socket.destroy();
      return;
    }
    const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(text);
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  answers = [];
  received = [];
});

const slept: number[] = [];
function client(options: Partial<HttpClientOptions> = {}) {
  slept.length = 0;
  return new HttpClient({
    baseUrl,
    sleep: async (ms) => {
      slept.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ConnectorError) return error;
    throw error;
  }
  throw new Error('expected a ConnectorError');
}

describe('HttpClient', () => {
  it('sends JSON with the base headers and query, and parses the JSON answer', async () => {
    answers.push({ status: 201, body: { id: 'rec1' } });
    const http = client({ headers: () => ({ authorization: 'Bearer t' }) });
    const res = await http.request<{ id: string }>({
      method: 'POST',
      path: '/tables/t1/records',
      query: { view: 'all', skip: undefined },
      body: { fields: { name: 'Ada' } },
    });
    expect(res).toMatchObject({ status: 201, body: { id: 'rec1' } });
    expect(received[0]).toMatchObject({ method: 'POST', url: '/v1/tables/t1/records?view=all' });
    expect(received[0]?.headers.authorization).toBe('Bearer t');
    expect(received[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(received[0]?.body ?? '')).toEqual({ fields: { name: 'Ada' } });
    expect(http.stats).toEqual({ requests: 1, retries: 0 });
  });

  it('retries 5xx with full-jitter exponential backoff, then succeeds', async () => {
    answers.push({ status: 500 }, { status: 502 }, { status: 503 }, { status: 200, body: [1] });
    const http = client({ baseDelayMs: 100, random: () => 0.5 });
    const res = await http.request({ method: 'GET', path: 'items' });
    expect(res.body).toEqual([1]);
    // random 0.5 of ceilings 100, 200, 400.
    expect(slept).toEqual([50, 100, 200]);
    expect(http.stats).toEqual({ requests: 4, retries: 3 });
  });

  it('caps the backoff at maxDelayMs and jitters down to zero', async () => {
    answers.push({ status: 500 }, { status: 500 }, { status: 500 }, { status: 200 });
    const http = client({ baseDelayMs: 1000, maxDelayMs: 1500, random: () => 0.999 });
    await http.request({ method: 'GET', path: '/x' });
    expect(slept).toEqual([999, 1498, 1498]);
    answers.push({ status: 500 }, { status: 200 });
    const zero = client({ random: () => 0 });
    await zero.request({ method: 'GET', path: '/x' });
    expect(slept).toEqual([0]);
  });

  it('gives up after maxAttempts with a transient error', async () => {
    answers.push({ status: 500 }, { status: 500 }, { status: 500 });
    const http = client({ maxAttempts: 3 });
    const error = await failure(http.request({ method: 'GET', path: '/x' }));
    expect(error.code).toBe('transient');
    expect(http.stats).toEqual({ requests: 3, retries: 2 });
  });

  it('honours Retry-After in seconds on 429', async () => {
    answers.push({ status: 429, headers: { 'retry-after': '2' } }, { status: 200 });
    const http = client();
    await http.request({ method: 'GET', path: '/x' });
    expect(slept).toEqual([2000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    answers.push(
      { status: 429, headers: { 'retry-after': 'Sun, 22 Nov 2026 10:00:03 GMT' } },
      { status: 200 },
    );
    const http = client({ now: () => now });
    await http.request({ method: 'GET', path: '/x' });
    expect(slept).toEqual([3000]);
  });

  it('uses the default 429 wait when the app sends no Retry-After', async () => {
    answers.push({ status: 429 }, { status: 200 });
    const http = client({ defaultRetryAfterMs: 30_000 });
    await http.request({ method: 'GET', path: '/x' });
    expect(slept).toEqual([30_000]);
  });

  it('hands a Retry-After longer than maxRetryAfterMs to the caller instead of sleeping', async () => {
    answers.push({ status: 429, headers: { 'retry-after': '120' } });
    const http = client({ maxRetryAfterMs: 60_000 });
    const error = await failure(http.request({ method: 'GET', path: '/x' }));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 120_000 });
    expect(slept).toEqual([]);
    expect(http.stats.requests).toBe(1);
  });

  it('maps error statuses by default and does not retry them', async () => {
    const cases: [number, string][] = [
      [400, 'validation'],
      [401, 'auth_invalid'],
      [403, 'permission_denied'],
      [404, 'not_found'],
      [409, 'version_conflict'],
      [422, 'validation'],
    ];
    const http = client();
    for (const [status, code] of cases) {
      answers.push({ status, body: { error: 'nope' } });
      const error = await failure(http.request({ method: 'GET', path: '/x' }));
      expect(error.code, String(status)).toBe(code);
      expect(error.message).toContain('nope');
    }
    expect(http.stats).toEqual({ requests: cases.length, retries: 0 });
  });

  it("lets the connector's mapError read the app's error body, and retries what it calls transient", async () => {
    answers.push(
      { status: 403, body: { errorCode: 'REQUEST_LIMIT_EXCEEDED' } },
      { status: 422, body: { type: 'INVALID_VALUE', field: 'email' } },
    );
    const http = client({
      mapError: (status, body) => {
        const b = body as { errorCode?: string; field?: string };
        if (b.errorCode === 'REQUEST_LIMIT_EXCEEDED')
          return new ConnectorError('rate_limited', 'limit', 'Daily limit', 5000);
        if (status === 422) return new ConnectorError('validation', 'bad', `Bad value in ${b.field}`);
        return null;
      },
    });
    const error = await failure(http.request({ method: 'GET', path: '/x' }));
    expect(slept).toEqual([5000]);
    expect(error).toMatchObject({ code: 'validation', userFacingMessage: 'Bad value in email' });
  });

  it('retries a timeout on a GET', async () => {
    answers.push({ hang: true }, { status: 200, body: 'late' });
    const http = client({ timeoutMs: 100 });
    const res = await http.request({ method: 'GET', path: '/x' });
    expect(res.body).toBe('late');
    expect(http.stats).toEqual({ requests: 2, retries: 1 });
  });

  it('does not resend a POST after a timeout or dropped connection (it may have been applied)', async () => {
    answers.push({ hang: true });
    const http = client({ timeoutMs: 100 });
    expect((await failure(http.request({ method: 'POST', path: '/x', body: {} }))).code).toBe('transient');
    answers.push({ destroy: true });
    expect((await failure(http.request({ method: 'POST', path: '/x', body: {} }))).code).toBe('transient');
    expect(http.stats).toEqual({ requests: 2, retries: 0 });
  });

  it('resends a POST on 429, and on 5xx when the caller says it is idempotent', async () => {
    answers.push({ status: 429, headers: { 'retry-after': '0' } }, { status: 200 });
    const http = client();
    await http.request({ method: 'POST', path: '/x', body: {} });
    answers.push({ status: 500 });
    await failure(http.request({ method: 'POST', path: '/x', body: {} }));
    answers.push({ status: 500 }, { status: 200 });
    await http.request({ method: 'POST', path: '/query', body: {}, idempotent: true });
    expect(http.stats).toEqual({ requests: 5, retries: 2 });
  });

  it('retries a refused connection, counting every attempt', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const http = client({ baseUrl: `http://127.0.0.1:${port}`, maxAttempts: 3 });
    const error = await failure(http.request({ method: 'POST', path: '/x', body: {} }));
    expect(error.code).toBe('transient');
    expect(error.message).toContain('ECONNREFUSED');
    expect(http.stats).toEqual({ requests: 3, retries: 2 });
  });

  it('acquires a permit with the request cost before every attempt', async () => {
    answers.push({ status: 503 }, { status: 200 });
    const permits: number[] = [];
    const http = client({
      acquirePermit: async (cost) => {
        permits.push(cost);
      },
    });
    await http.request({ method: 'GET', path: '/x', cost: 3 });
    expect(permits).toEqual([3, 3]);
  });

  it('follows absolute links on the same origin only', async () => {
    const http = client();
    await http.request({ method: 'GET', path: `${new URL(baseUrl).origin}/v1/next?page=2` });
    expect(received[0]?.url).toBe('/v1/next?page=2');
    const error = await failure(http.request({ method: 'GET', path: 'http://169.254.169.254/latest' }));
    expect(error.code).toBe('validation');
    expect(received).toHaveLength(1);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
