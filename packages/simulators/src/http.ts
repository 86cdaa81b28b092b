/**
 * A tiny HTTP server helper shared by the simulators, on node:http (no framework).
 *
 * - `startHttpServer` listens on port 0 and resolves to `{ url, close }`.
 * - Request bodies are parsed as JSON (or form-urlencoded) before the handler sees them.
 * - `FaultInjector` queues faults (status codes, timeouts, dropped sockets, rate limits) that
 *   the server applies to the next matching requests before the simulator sees them.
 * - `RequestLog` counts requests per method and path (for efficiency benchmarks).
 * - `TokenRegistry` holds bearer tokens with scopes and supports revocation.
 * - `ManualClock` lets tests move time (rate-limit penalties, token and webhook expiry).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// ---------------------------------------------------------------------------------------------
// Clock

export type Clock = { now(): number };

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: number | string | Date = Date.UTC(2026, 0, 15, 9, 0, 0)) {
    this.current = typeof start === 'number' ? start : new Date(start).getTime();
  }
  now(): number {
    return this.current;
  }
  advance(ms: number): number {
    this.current += ms;
    return this.current;
  }
  set(time: number | string | Date): void {
    this.current = typeof time === 'number' ? time : new Date(time).getTime();
  }
}

// ---------------------------------------------------------------------------------------------
// Requests and responses

export type SimRequest = {
  method: string;
  url: URL;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON (or form fields); undefined when the body is empty. */
  body: unknown;
  /** True when a body was sent that could not be parsed. */
  bodyInvalid: boolean;
};

export type SimResponse = {
  status: number;
  headers?: Record<string, string>;
  /** Serialized as JSON unless `text` is given. */
  body?: unknown;
  text?: string;
};

export type Handler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

export function json(status: number, body: unknown, headers?: Record<string, string>): SimResponse {
  return { status, body, ...(headers ? { headers } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Faults

type FaultMatch = { method?: string; path?: string | RegExp };

export type Fault = FaultMatch &
  (
    | { kind?: 'status'; status: number; body?: unknown; headers?: Record<string, string>; count?: number }
    /** Never answer (the client's timeout fires); the socket is destroyed after `ms` if given. */
    | { kind: 'timeout'; ms?: number; count?: number }
    /** Destroy the socket without an answer. */
    | { kind: 'drop'; count?: number }
    /** Answer with the simulator's own rate-limit response. */
    | { kind: 'rate_limit'; count?: number }
  );

type QueuedFault = { fault: Fault; remaining: number };

export class FaultInjector {
  private queue: QueuedFault[] = [];

  /** Queue a fault for the next `count` (default 1) matching requests. */
  next(fault: Fault): void {
    this.queue.push({ fault, remaining: fault.count ?? 1 });
  }

  clear(): void {
    this.queue = [];
  }

  get pending(): number {
    return this.queue.reduce((sum, q) => sum + q.remaining, 0);
  }

  /** Take the first fault matching this request, if any. */
  take(method: string, path: string): Fault | undefined {
    for (const [i, q] of this.queue.entries()) {
      const f = q.fault;
      if (f.method && f.method.toUpperCase() !== method) continue;
      if (f.path !== undefined) {
        const ok = typeof f.path === 'string' ? path.startsWith(f.path) : f.path.test(path);
        if (!ok) continue;
      }
      q.remaining -= 1;
      if (q.remaining <= 0) this.queue.splice(i, 1);
      return f;
    }
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Request log

export type LoggedRequest = { method: string; path: string; status: number | 'timeout' | 'drop'; at: number };

export class RequestLog {
  readonly entries: LoggedRequest[] = [];

  record(entry: LoggedRequest): void {
    this.entries.push(entry);
  }

  reset(): void {
    this.entries.length = 0;
  }

  get total(): number {
    return this.entries.length;
  }

  /** Count requests, optionally filtered by method, path prefix (or RegExp) and status. */
  count(filter: { method?: string; path?: string | RegExp; status?: number } = {}): number {
    return this.entries.filter((e) => {
      if (filter.method && e.method !== filter.method.toUpperCase()) return false;
      if (filter.status !== undefined && e.status !== filter.status) return false;
      if (filter.path !== undefined) {
        return typeof filter.path === 'string' ? e.path.startsWith(filter.path) : filter.path.test(e.path);
      }
      return true;
    }).length;
  }

  /** `{ "GET /v0/app.../Contacts": 3, ... }` */
  byPath(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.entries) {
      const key = `${e.method} ${e.path}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens

export type TokenInfo = {
  token: string;
  scopes: string[];
  /** Base ids this token may use; undefined means every base. */
  bases?: string[];
  /** Epoch ms after which the token is no longer accepted. */
  expiresAt?: number;
  kind: 'pat' | 'oauth';
  userId: string;
};

export type TokenCheck =
  | { ok: true; info: TokenInfo }
  | { ok: false; reason: 'missing' | 'unknown' | 'revoked' | 'expired' };

export class TokenRegistry {
  private readonly tokens = new Map<string, TokenInfo>();
  private readonly revoked = new Set<string>();

  constructor(private readonly clock: Clock) {}

  add(info: TokenInfo): TokenInfo {
    this.tokens.set(info.token, info);
    this.revoked.delete(info.token);
    return info;
  }

  revoke(token: string): void {
    this.revoked.add(token);
  }

  get(token: string): TokenInfo | undefined {
    return this.tokens.get(token);
  }

  check(token: string | undefined): TokenCheck {
    if (!token) return { ok: false, reason: 'missing' };
    if (this.revoked.has(token)) return { ok: false, reason: 'revoked' };
    const info = this.tokens.get(token);
    if (!info) return { ok: false, reason: 'unknown' };
    if (info.expiresAt !== undefined && this.clock.now() >= info.expiresAt)
      return { ok: false, reason: 'expired' };
    return { ok: true, info };
  }
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

// ---------------------------------------------------------------------------------------------
// Ids

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random alphanumeric string; `random` returns floats in [0, 1) (seedable for reproducible ids). */
export function randomAlphanumeric(length: number, random: () => number = cryptoRandom): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUM[Math.floor(random() * ALPHANUM.length)];
  return out;
}

function cryptoRandom(): number {
  return randomBytes(4).readUInt32BE(0) / 2 ** 32;
}

/** mulberry32: a small seedable PRNG. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------------
// Server

export type HttpServerOptions = {
  handler: Handler;
  faults?: FaultInjector;
  log?: RequestLog;
  clock?: Clock;
  /** The response for a `{ kind: 'rate_limit' }` fault, in the simulated app's own format. */
  rateLimitResponse?: () => SimResponse;
};

export type RunningServer = { url: string; close: () => Promise<void> };

export async function startHttpServer(options: HttpServerOptions): Promise<RunningServer> {
  const faults = options.faults ?? new FaultInjector();
  const log = options.log ?? new RequestLog();
  const clock = options.clock ?? systemClock;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const rawBody = await readBody(req);

    const fault = faults.take(method, path);
    if (fault) {
      if (fault.kind === 'drop') {
        log.record({ method, path, status: 'drop', at: clock.now() });
        req.socket.destroy();
        return;
      }
      if (fault.kind === 'timeout') {
        log.record({ method, path, status: 'timeout', at: clock.now() });
        if (fault.ms !== undefined) {
          const t = setTimeout(() => {
            timers.delete(t);
            req.socket.destroy();
          }, fault.ms);
          timers.add(t);
        }
        return;
      }
      if (fault.kind === 'rate_limit') {
        const r = options.rateLimitResponse?.() ?? json(429, { error: 'rate_limited' });
        log.record({ method, path, status: r.status, at: clock.now() });
        send(res, r, clock);
        return;
      }
      const r: SimResponse = {
        status: fault.status,
        body: fault.body ?? { error: { type: 'SERVER_ERROR', message: 'Injected fault' } },
        ...(fault.headers ? { headers: fault.headers } : {}),
      };
      log.record({ method, path, status: r.status, at: clock.now() });
      send(res, r, clock);
      return;
    }

    const { body, invalid } = parseBody(rawBody, req.headers['content-type']);
    let response: SimResponse;
    try {
      response = await options.handler({
        method,
        url,
        path,
        query: url.searchParams,
        headers: req.headers,
        rawBody,
        body,
        bodyInvalid: invalid,
      });
    } catch (err) {
      response = json(500, {
        error: { type: 'SERVER_ERROR', message: err instanceof Error ? err.message : String(err) },
      });
    }
    log.record({ method, path, status: response.status, at: clock.now() });
    send(res, response, clock);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseBody(raw: string, contentType: string | undefined): { body: unknown; invalid: boolean } {
  if (raw.length === 0) return { body: undefined, invalid: false };
  if (contentType?.includes('application/x-www-form-urlencoded')) {
    return { body: Object.fromEntries(new URLSearchParams(raw)), invalid: false };
  }
  try {
    return { body: JSON.parse(raw) as unknown, invalid: false };
  } catch {
    return { body: undefined, invalid: true };
  }
}

function send(res: ServerResponse, r: SimResponse, clock: Clock): void {
  // The Date header follows the simulator's clock, so clients can use server time as a high-water mark.
  const headers: Record<string, string> = { date: new Date(clock.now()).toUTCString(), ...(r.headers ?? {}) };
  let payload = '';
  if (r.text !== undefined) {
    payload = r.text;
  } else if (r.body !== undefined) {
    payload = JSON.stringify(r.body);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  res.writeHead(r.status, headers);
  res.end(payload);
}
