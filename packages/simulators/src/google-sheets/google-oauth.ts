/**
 * Google's OpenID Connect userinfo endpoint for the Google Sheets simulator (the consent, token and
 * revoke endpoints are in google-sheets-simulator.ts), from developers.google.com/identity/openid-connect:
 *
 * - `GET /oauth2/v3/userinfo` with `Authorization: Bearer <access token>` -> `{sub, email,
 *   email_verified}`; `email` only when the token was granted the `email` scope (or
 *   `https://www.googleapis.com/auth/userinfo.email`), `sub` with `openid` or `email`.
 * - A missing, unknown, revoked or expired token -> 401 `{"error":"invalid_request",
 *   "error_description":"Invalid Credentials"}`; a token without any of those scopes -> 403
 *   `{"error":"insufficient_scope", ...}` (Google's exact answer there is approximated).
 */
import { createHash } from 'node:crypto';
import { bearerToken, json, type SimRequest, type SimResponse, type TokenRegistry } from '../http.ts';

export const USERINFO_PATH = '/oauth2/v3/userinfo';

const EMAIL_SCOPES = new Set(['email', 'https://www.googleapis.com/auth/userinfo.email']);
const OPENID_SCOPES = new Set(['openid', ...EMAIL_SCOPES]);

/** Google's `sub`: a stable numeric id per account (here derived from the simulator's user id). */
export function googleSubject(userId: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(userId).digest('hex').slice(0, 16)}`).toString();
  return `1${digits.padStart(20, '0')}`;
}

/** The answer of `GET /oauth2/v3/userinfo`; the simulator's user ids are the accounts' emails. */
export function googleUserinfo(req: SimRequest, tokens: TokenRegistry): SimResponse {
  if (req.method !== 'GET' && req.method !== 'POST')
    return json(405, { error: 'invalid_request', error_description: 'Method not allowed' });
  const check = tokens.check(bearerToken(req.headers));
  if (!check.ok) return json(401, { error: 'invalid_request', error_description: 'Invalid Credentials' });
  const { scopes, userId } = check.info;
  if (!scopes.some((s) => OPENID_SCOPES.has(s)))
    return json(403, {
      error: 'insufficient_scope',
      error_description: 'Request had insufficient authentication scopes.',
    });
  return json(200, {
    sub: googleSubject(userId),
    ...(scopes.some((s) => EMAIL_SCOPES.has(s)) ? { email: userId, email_verified: true } : {}),
  });
}
