/**
 * HTTP routes of the Memberstack simulator: the Admin REST API's member routes as documented at
 * developers.memberstack.com/admin-rest-api (Quick Start, Member Actions), with the `X-API-KEY`
 * secret key, the 25-per-second limit, and Memberstack's `{code, message}` errors.
 */
import {
  FaultInjector,
  json,
  RequestLog,
  type RunningServer,
  type SimRequest,
  type SimResponse,
  startHttpServer,
} from '../http.ts';
import { invalid, MemberstackApiError, type MemberstackState, type Mode, renderMember } from './model.ts';
import { RateLimiter, type RateLimitOptions, rateLimitResponse } from './rate-limit.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const INVALID_KEY_CODE = 'validation/invalid-secret-key';
export const INVALID_KEY_MESSAGE = 'The provided secret key is invalid.';

/** `sk_sb_...` (sandbox) or `sk_...` (live). */
const KEY_SHAPE = /^sk_[A-Za-z0-9_]{8,}$/;

export function modeOfKey(key: string): Mode {
  return key.startsWith('sk_sb_') ? 'sandbox' : 'live';
}

export type MemberstackServerOptions = {
  /** `false` turns the limit off. */
  rateLimit?: false | RateLimitOptions;
};

export type MemberstackServer = RunningServer & {
  faults: FaultInjector;
  requestLog: RequestLog;
  limiter: RateLimiter;
};

type Ctx = { req: SimRequest; mode: Mode };

/** Express's answer for a route it does not have. */
function cannot(method: string, path: string): SimResponse {
  const escaped = path.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return {
    status: 404,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    text: `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot ${method} ${escaped}</pre>\n</body>\n</html>\n`,
  };
}

function pageSize(query: URLSearchParams): number {
  // `first` is an alias of `limit` and wins when both are given (the official client sends `first`).
  const raw = query.get('first') ?? query.get('limit');
  if (raw === null || raw === '') return DEFAULT_PAGE_SIZE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) return DEFAULT_PAGE_SIZE;
  return Math.min(n, MAX_PAGE_SIZE);
}

function cursorParam(query: URLSearchParams): number | undefined {
  const raw = query.get('after');
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw invalid('after must be a number (the endCursor of the previous page).');
  return n;
}

export async function startMemberstackServer(
  state: MemberstackState,
  options: MemberstackServerOptions = {},
): Promise<MemberstackServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const limiter = new RateLimiter(state.clock, options.rateLimit || {}, options.rateLimit !== false);

  function route(method: string, parts: string[]): ((ctx: Ctx) => SimResponse) | undefined {
    if (parts[0] !== 'members') return undefined;
    if (parts.length === 1) {
      if (method === 'GET') return listMembers;
      if (method === 'POST') return createMember;
      return undefined;
    }
    const id = parts[1] as string;
    if (parts.length === 2) {
      if (method === 'GET') return (ctx) => getMember(id, ctx);
      if (method === 'PATCH') return (ctx) => updateMember(id, ctx);
      if (method === 'DELETE') return (ctx) => deleteMember(id, ctx);
      return undefined;
    }
    if (parts.length === 3 && method === 'POST') {
      if (parts[2] === 'add-plan') return (ctx) => addPlan(id, ctx);
      if (parts[2] === 'remove-plan') return (ctx) => removePlan(id, ctx);
    }
    return undefined;
  }

  async function handle(req: SimRequest): Promise<SimResponse> {
    const key = req.headers['x-api-key'];
    const secret = Array.isArray(key) ? key[0] : key;
    // A missing or malformed key is a 400, a well-formed unknown one a 401, with the same code.
    if (!secret || !KEY_SHAPE.test(secret)) {
      return json(400, { code: INVALID_KEY_CODE, message: INVALID_KEY_MESSAGE });
    }
    if (!state.keys.check(secret).ok) {
      return json(401, { code: INVALID_KEY_CODE, message: INVALID_KEY_MESSAGE });
    }
    if (!limiter.take(secret)) return limiter.refusal(secret);
    const headers = limiter.headers(secret);

    let parts: string[];
    try {
      parts = req.path
        .split('/')
        .filter((p) => p !== '')
        .map(decodeURIComponent);
    } catch {
      return {
        ...cannot(req.method, req.path),
        headers: { ...headers, 'content-type': 'text/html; charset=utf-8' },
      };
    }
    const run = route(req.method, parts);
    if (!run) {
      const r = cannot(req.method, req.path);
      return { ...r, headers: { ...r.headers, ...headers } };
    }
    try {
      if (req.bodyInvalid) {
        throw new MemberstackApiError(400, 'validation/invalid-json', 'The request body is not valid JSON.');
      }
      const r = run({ req, mode: modeOfKey(secret) });
      return { ...r, headers: { ...(r.headers ?? {}), ...headers } };
    } catch (err) {
      if (err instanceof MemberstackApiError) return json(err.status, err.body, headers);
      throw err;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Members

  function listMembers({ req, mode }: Ctx): SimResponse {
    const order = req.query.get('order')?.toUpperCase() === 'DESC' ? 'DESC' : 'ASC';
    const page = state.list({ after: cursorParam(req.query), limit: pageSize(req.query), order }, mode);
    // The JSON blob is left out of lists unless includeJSON=true asks for it.
    const includeJson = req.query.get('includeJSON') === 'true';
    return json(200, {
      totalCount: page.totalCount,
      endCursor: page.endCursor,
      hasNextPage: page.hasNextPage,
      data: page.members.map((m) => renderMember(state, m, { json: includeJson })),
    });
  }

  function getMember(idOrEmail: string, { mode }: Ctx): SimResponse {
    // A miss is not an error: 200 with data null.
    const m = state.lookup(idOrEmail, mode);
    return json(200, { data: m ? renderMember(state, m) : null });
  }

  function body(req: SimRequest): Record<string, unknown> {
    const b = req.body;
    if (b === undefined) return {};
    if (typeof b !== 'object' || b === null || Array.isArray(b))
      throw invalid('The request body must be an object.');
    return b as Record<string, unknown>;
  }

  function createMember({ req, mode }: Ctx): SimResponse {
    const m = state.create(body(req), mode);
    return json(200, { data: renderMember(state, m) });
  }

  function updateMember(id: string, { req, mode }: Ctx): SimResponse {
    const m = state.update(id, body(req), mode);
    return json(200, { data: renderMember(state, m) });
  }

  function deleteMember(id: string, { mode }: Ctx): SimResponse {
    // Body flags deleteStripeCustomer / cancelStripeSubscriptions: there is no Stripe here.
    return json(200, { data: state.remove(id, mode) });
  }

  function addPlan(id: string, { req, mode }: Ctx): SimResponse {
    state.addPlan(id, body(req).planId, mode);
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, text: 'OK' };
  }

  function removePlan(id: string, { req, mode }: Ctx): SimResponse {
    state.removePlan(id, body(req).planId, mode);
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, text: 'OK' };
  }

  const server = await startHttpServer({
    handler: handle,
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => rateLimitResponse(limiter.perSecond),
  });
  return { ...server, faults, requestLog, limiter };
}
