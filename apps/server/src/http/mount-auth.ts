import { AUTH_BASE_PATH } from '@lockstep/contract';
import { fromNodeHeaders } from 'better-auth/node';
import type { FastifyInstance } from 'fastify';
import { type Auth, CLIENT_ADDRESS_HEADER } from '../auth/auth';
import { type AuthRateLimiter, clientAddress, type RateLimitedAction } from './auth-rate-limit';
import { envelope } from './error-envelope';

/** better-auth's endpoints (after /api/auth) that guess, make or reset passwords: limited per email and address. */
const LIMITED: Record<string, RateLimitedAction> = {
  '/sign-in/email': 'sign-in',
  '/sign-up/email': 'sign-up',
  // Anyone may ask for a new confirmation link for any unconfirmed address: a mail each time.
  '/send-verification-email': 'sign-up',
  '/request-password-reset': 'password-reset',
  '/forget-password': 'password-reset',
  '/reset-password': 'password-reset',
  '/change-password': 'password-change',
  '/verify-password': 'password-change',
};

/** Headers that say who the client is: only this server says that to better-auth. */
const CLIENT_ADDRESS_HEADERS = ['x-forwarded-for', 'x-real-ip', 'forwarded', CLIENT_ADDRESS_HEADER];

/**
 * Hands /api/auth/* to better-auth's fetch handler, copying every Set-Cookie line. Sign-in, sign-up
 * and password resets are rate-limited first (429 with Retry-After, in the envelope); better-auth's
 * own errors leave in the envelope too, with its message as the text for the user.
 */
export function mountAuth(app: FastifyInstance, auth: Auth, limiter: AuthRateLimiter) {
  app.route({
    method: ['GET', 'POST'],
    url: `${AUTH_BASE_PATH}/*`,
    schema: { hide: true },
    async handler(request, reply) {
      const url = new URL(request.url, `http://${request.headers.host ?? 'localhost'}`);
      const endpoint = url.pathname.slice(AUTH_BASE_PATH.length).replace(/\/+$/, '');
      const action = request.method === 'POST' ? LIMITED[endpoint] : undefined;
      if (action) {
        const body = (request.body ?? {}) as { email?: unknown };
        await limiter.check(request, action, typeof body.email === 'string' ? body.email : null);
      }
      const hasBody = request.method !== 'GET' && request.body !== undefined && request.body !== null;
      const headers = fromNodeHeaders(request.headers);
      for (const name of CLIENT_ADDRESS_HEADERS) headers.delete(name);
      headers.set(CLIENT_ADDRESS_HEADER, clientAddressForAuth(request.ip));
      const response = await auth.handler(
        new Request(url, {
          method: request.method,
          headers,
          ...(hasBody ? { body: JSON.stringify(request.body) } : {}),
        }),
      );
      reply.status(response.status);
      for (const [key, value] of response.headers) {
        const lower = key.toLowerCase();
        if (lower !== 'set-cookie' && lower !== 'content-length') reply.header(key, value);
      }
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) reply.header('set-cookie', cookies);
      if (!response.body) return reply.send(null);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (response.status >= 400) {
        const wrapped = inEnvelope(
          response.status,
          url.pathname,
          response.headers.get('content-type'),
          bytes,
        );
        if (wrapped) return reply.type('application/json; charset=utf-8').send(wrapped);
      }
      return reply.send(bytes);
    },
  });
}

/** The exact address for better-auth (sessions record it); only the rate-limit keys collapse IPv6. */
function clientAddressForAuth(ip: string | undefined): string {
  const address = ip ?? '';
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? clientAddress({ ip: address }) : address;
}

/** better-auth codes whose own message ("Email not verified") does not say what to do. */
const USER_TEXT = new Map([['EMAIL_NOT_VERIFIED', 'Confirm your email address first: we sent you a link.']]);

/** better-auth's JSON error ({ code, message }) as the envelope, its message the user's text. */
function inEnvelope(status: number, path: string, contentType: string | null, bytes: Buffer) {
  if (!contentType?.includes('application/json')) return null;
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (!body || typeof body !== 'object') return null;
  const { message, code } = body as { message?: unknown; code?: unknown };
  const text =
    (typeof code === 'string' ? USER_TEXT.get(code) : undefined) ??
    (typeof message === 'string' && message.trim() !== '' ? message : 'That did not work. Please try again.');
  return envelope(status, path, text, text, typeof code === 'string' ? code : undefined);
}
