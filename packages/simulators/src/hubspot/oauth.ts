/**
 * HubSpot's OAuth 2.0 for apps (developers.hubspot.com "Working with OAuth" and the OAuth v1 API
 * reference), as one app's install flow sees it:
 *
 * - `GET /oauth/authorize?client_id&redirect_uri&scope[&optional_scope][&state][&code_challenge
 *   &code_challenge_method=S256]` stands for HubSpot's install page (the account chooser and
 *   consent): the user approves at once and is redirected to `redirect_uri` with `code` (and
 *   `state`). Scopes are space-separated; an unknown required scope, client or redirect URI is an
 *   error page (400), as HubSpot shows one instead of redirecting. Optional scopes the simulator
 *   knows are granted, others left out.
 * - `POST /oauth/v1/token` (form-encoded) with `grant_type=authorization_code` (client_id,
 *   client_secret, redirect_uri, code, and code_verifier when the authorize step had a challenge)
 *   or `grant_type=refresh_token` (client_id, client_secret, refresh_token), answering
 *   `{token_type: "bearer", access_token, refresh_token, expires_in: 1800, hub_id, user_id, scopes}`.
 *   Refresh tokens do not rotate: a refresh answers the same refresh token, which lasts until the
 *   app is uninstalled (`DELETE /oauth/v1/refresh-tokens/{token}` here). Errors are 400
 *   `{status: "BAD_AUTH_CODE" | "BAD_REFRESH_TOKEN" | "BAD_CLIENT_ID" | "BAD_CLIENT_SECRET" |
 *   "BAD_REDIRECT_URI" | "BAD_GRANT_TYPE" | "BAD_CODE_VERIFIER", message, correlationId}`.
 * - `GET /oauth/v1/access-tokens/{token}`: the token's metadata (`token`, `user`, `hub_domain`,
 *   `scopes`, `hub_id`, `app_id`, `expires_in`, `user_id`, `token_type: "access"`).
 *
 * Access tokens last `accessTokenTtlSeconds` (HubSpot: 1800) on the simulator's clock; then the API
 * answers 401 `EXPIRED_AUTHENTICATION`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { json, randomAlphanumeric, type SimResponse } from '../http.ts';
import type { HubSpotState } from './model.ts';

export type HubSpotOAuthApp = {
  clientId: string;
  clientSecret: string;
  /** The app's redirect URLs; `redirect_uri` must equal one of them. */
  redirectUris: string[];
  appId?: number;
};

export const DEFAULT_OAUTH_APP: HubSpotOAuthApp = {
  clientId: '5f1d2c3b-0000-4000-8000-00000000abcd',
  clientSecret: '9a8b7c6d-0000-4000-8000-00000000dcba',
  redirectUris: ['http://localhost:3000/oauth/callback', 'http://127.0.0.1:3000/oauth/callback'],
  appId: 1_234_567,
};

/** HubSpot documents 30 minutes. */
export const HUBSPOT_ACCESS_TOKEN_TTL_SECONDS = 1800;
/** Not documented by HubSpot; the simulator keeps a code 10 minutes, single use. */
const CODE_TTL_MS = 10 * 60_000;

export const HUBSPOT_USER_EMAIL = 'owner@lockstep-sim.example';

type Code = {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  challenge?: string;
  expiresAt: number;
};

type Grant = { clientId: string; scopes: string[] };

export type HubSpotOAuthOptions = {
  oauthApps?: HubSpotOAuthApp[];
  accessTokenTtlSeconds?: number;
};

const base64url = (buf: Buffer) =>
  buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

function tokenError(status: string, message: string): SimResponse {
  return json(400, { status, message, correlationId: randomUUID() });
}

function errorPage(message: string): SimResponse {
  return { status: 400, text: `HubSpot: ${message}` };
}

export class HubSpotOAuthServer {
  readonly apps: HubSpotOAuthApp[];
  accessTokenTtlSeconds: number;
  /** `deny`: the next installs are cancelled on the consent page (redirect with error=access_denied). */
  consent: 'allow' | 'deny' = 'allow';
  private readonly codes = new Map<string, Code>();
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokenApps = new Map<string, string>();

  constructor(
    private readonly state: HubSpotState,
    private readonly knownScopes: readonly string[],
    options: HubSpotOAuthOptions = {},
  ) {
    this.apps = options.oauthApps ?? [DEFAULT_OAUTH_APP];
    this.accessTokenTtlSeconds = options.accessTokenTtlSeconds ?? HUBSPOT_ACCESS_TOKEN_TTL_SECONDS;
  }

  private app(clientId: string | undefined): HubSpotOAuthApp | undefined {
    return this.apps.find((a) => a.clientId === clientId);
  }

  /** A new access token for an app (tests that skip the install page use it too). */
  issueAccessToken(clientId: string, scopes: string[]): string {
    const token = `C${randomAlphanumeric(11)}${base64url(Buffer.from(randomAlphanumeric(60)))}`;
    this.state.tokens.add({
      token,
      scopes,
      kind: 'oauth',
      userId: '1000001',
      expiresAt: this.state.clock.now() + this.accessTokenTtlSeconds * 1000,
    });
    this.accessTokenApps.set(token, clientId);
    return token;
  }

  /** Ends an install: its refresh token stops working (access tokens already issued run out). */
  revokeRefreshToken(refreshToken: string): boolean {
    const grant = this.grants.get(refreshToken);
    if (!grant) return false;
    this.grants.delete(refreshToken);
    return true;
  }

  authorize(query: URLSearchParams): SimResponse {
    const app = this.app(query.get('client_id') ?? undefined);
    if (!app) return errorPage('this app could not be found (unknown client_id).');
    const redirectUri = query.get('redirect_uri') ?? '';
    if (!app.redirectUris.includes(redirectUri))
      return errorPage("the redirect_uri does not match the app's redirect URLs.");
    const split = (v: string | null) => (v ?? '').split(/[\s+]+/).filter((s) => s !== '');
    const required = split(query.get('scope'));
    const unknown = required.filter((s) => !this.knownScopes.includes(s));
    if (unknown.length > 0) return errorPage(`unknown or unavailable scopes: ${unknown.join(', ')}`);
    const optional = split(query.get('optional_scope')).filter((s) => this.knownScopes.includes(s));
    const method = query.get('code_challenge_method');
    const challenge = query.get('code_challenge') ?? undefined;
    if (challenge !== undefined && method !== null && method !== 'S256')
      return errorPage('code_challenge_method must be S256.');
    const target = new URL(redirectUri);
    if (this.consent === 'deny') {
      target.searchParams.set('error', 'access_denied');
      const state = query.get('state');
      if (state !== null) target.searchParams.set('state', state);
      return { status: 302, headers: { location: target.toString() } };
    }
    const code = randomUUID();
    this.codes.set(code, {
      clientId: app.clientId,
      redirectUri,
      scopes: [...new Set([...required, ...optional])],
      expiresAt: this.state.clock.now() + CODE_TTL_MS,
      ...(challenge ? { challenge } : {}),
    });
    target.searchParams.set('code', code);
    const state = query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    return { status: 302, headers: { location: target.toString() } };
  }

  token(body: unknown): SimResponse {
    const p = (body && typeof body === 'object' ? body : {}) as Record<string, string | undefined>;
    const app = this.app(p.client_id);
    if (p.grant_type !== 'authorization_code' && p.grant_type !== 'refresh_token')
      return tokenError('BAD_GRANT_TYPE', 'grant_type must be authorization_code or refresh_token');
    if (!app) return tokenError('BAD_CLIENT_ID', 'missing or invalid client id');
    if (p.client_secret !== app.clientSecret)
      return tokenError('BAD_CLIENT_SECRET', 'missing or invalid client secret');

    if (p.grant_type === 'authorization_code') {
      const code = p.code ? this.codes.get(p.code) : undefined;
      if (!code || code.clientId !== app.clientId || code.expiresAt <= this.state.clock.now()) {
        if (p.code) this.codes.delete(p.code);
        return tokenError('BAD_AUTH_CODE', 'missing or unknown auth code');
      }
      if (p.redirect_uri !== code.redirectUri)
        return tokenError('BAD_REDIRECT_URI', 'redirect_uri does not match the one the code was issued for');
      if (code.challenge !== undefined) {
        const computed = p.code_verifier
          ? base64url(createHash('sha256').update(p.code_verifier).digest())
          : undefined;
        if (computed !== code.challenge)
          return tokenError('BAD_CODE_VERIFIER', 'missing or invalid code_verifier');
      }
      this.codes.delete(p.code as string);
      const refreshToken = `na1-${randomUUID()}`;
      this.grants.set(refreshToken, { clientId: app.clientId, scopes: code.scopes });
      return this.tokenAnswer(app, refreshToken, code.scopes);
    }

    const grant = p.refresh_token ? this.grants.get(p.refresh_token) : undefined;
    if (!grant || grant.clientId !== app.clientId)
      return tokenError('BAD_REFRESH_TOKEN', 'missing or invalid refresh token');
    // HubSpot's refresh tokens do not rotate: the same one comes back.
    return this.tokenAnswer(app, p.refresh_token as string, grant.scopes);
  }

  private tokenAnswer(app: HubSpotOAuthApp, refreshToken: string, scopes: string[]): SimResponse {
    const accessToken = this.issueAccessToken(app.clientId, scopes);
    return json(200, {
      token_type: 'bearer',
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_in: this.accessTokenTtlSeconds,
      hub_id: this.state.portalId,
      user_id: 1_000_001,
      scopes,
    });
  }

  /** GET /oauth/v1/access-tokens/{token}. */
  accessTokenInfo(token: string): SimResponse {
    const check = this.state.tokens.check(token);
    const clientId = this.accessTokenApps.get(token);
    if (!clientId || (!check.ok && check.reason !== 'expired')) {
      return json(404, {
        status: 'error',
        message: 'access token not found',
        correlationId: randomUUID(),
        category: 'OBJECT_NOT_FOUND',
      });
    }
    if (!check.ok) {
      return json(401, {
        status: 'error',
        message: 'The OAuth token used to make this call expired.',
        correlationId: randomUUID(),
        category: 'EXPIRED_AUTHENTICATION',
      });
    }
    const info = check.info;
    return json(200, {
      token,
      user: HUBSPOT_USER_EMAIL,
      hub_domain: `lockstep-sim-${this.state.portalId}.com`,
      scopes: info.scopes,
      hub_id: this.state.portalId,
      app_id: this.app(clientId)?.appId ?? 0,
      expires_in: Math.max(0, Math.floor(((info.expiresAt ?? 0) - this.state.clock.now()) / 1000)),
      user_id: Number(info.userId),
      token_type: 'access',
    });
  }
}
