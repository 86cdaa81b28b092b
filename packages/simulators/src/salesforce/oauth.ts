/**
 * OAuth 2.0 web server flow with PKCE, as a connected app sees it (REST API Developer Guide,
 * "OAuth 2.0 Web Server Flow for Web App Integration"):
 *
 * - `GET /services/oauth2/authorize?response_type=code&client_id&redirect_uri[&code_challenge][&state][&scope]`
 *   stands for the login and approval pages: the user approves at once and is redirected to the
 *   callback with `code` (single use, valid 15 minutes) and `state`.
 * - `POST /services/oauth2/token` (form-encoded) with `grant_type=authorization_code` (code,
 *   client_id, client_secret, redirect_uri, code_verifier) or `grant_type=refresh_token`,
 *   answering `access_token`, `refresh_token` (code grant only), `signature` (base64
 *   HMAC-SHA256 of `id + issued_at` keyed with the client secret), `scope`, `instance_url`, `id`
 *   (the identity URL), `token_type`, `issued_at` (ms).
 * - `POST /services/oauth2/revoke` with `token` (an access or refresh token; revoking a refresh
 *   token also ends the sessions it issued).
 *
 * Access tokens are sessions: they expire after `sessionTimeoutMs` without use (default 2 hours);
 * refresh tokens last until revoked (the connected app's default policy).
 */
import { createHash, createHmac } from 'node:crypto';
import { json, randomAlphanumeric, type SimResponse } from '../http.ts';
import type { SalesforceState } from './model.ts';

export type OAuthClient = {
  clientId: string;
  clientSecret: string;
  /** Callback URLs; `redirect_uri` must equal one of them. */
  redirectUris: string[];
  /** "Require Secret for Web Server Flow" (default true). */
  requireSecret?: boolean;
};

export const DEFAULT_OAUTH_CLIENT: OAuthClient = {
  clientId: '3MVG9LockstepSimulatorConsumerKey000000000000000000000000000000000000000000000',
  clientSecret: 'E2A4C1F0B9D8LOCKSTEPSIMSECRET0000000000000000000000000000000000000',
  redirectUris: ['http://localhost:3000/oauth/callback', 'http://127.0.0.1:3000/oauth/callback'],
};

export const DEFAULT_SESSION_TIMEOUT_MS = 2 * 3_600_000;
const CODE_TTL_MS = 15 * 60_000;

type Code = {
  clientId: string;
  redirectUri: string;
  challenge?: string;
  scope: string;
  expiresAt: number;
};

type RefreshToken = { clientId: string; scope: string; accessTokens: Set<string> };

export type OAuthOptions = {
  clients?: OAuthClient[];
  sessionTimeoutMs?: number;
};

const oauthError = (error: string, description: string, status = 400) =>
  json(status, { error, error_description: description });

export function base64url(buf: Buffer): string {
  return buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class OAuthServer {
  readonly clients: OAuthClient[];
  readonly sessionTimeoutMs: number;
  private readonly codes = new Map<string, Code>();
  private readonly refreshTokens = new Map<string, RefreshToken>();

  constructor(
    private readonly state: SalesforceState,
    options: OAuthOptions = {},
  ) {
    this.clients = options.clients ?? [DEFAULT_OAUTH_CLIENT];
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
  }

  private client(id: string | undefined): OAuthClient | undefined {
    return this.clients.find((c) => c.clientId === id);
  }

  identityUrl(origin: string): string {
    return `${origin}/id/${this.state.orgId}/${this.state.userId}`;
  }

  /** A new session for this client (also used by tests that skip the browser step). */
  issueAccessToken(clientId: string | undefined, scope: string): string {
    const token = `${this.state.orgId.slice(0, 15)}!${randomAlphanumeric(96)}`;
    this.state.tokens.add({
      token,
      scopes: scope.split(' ').filter((s) => s !== ''),
      kind: 'oauth',
      userId: this.state.userId,
      expiresAt: this.state.clock.now() + this.sessionTimeoutMs,
      ...(clientId ? { bases: [clientId] } : {}),
    });
    return token;
  }

  /** Sessions stay alive while used: each call pushes expiry `sessionTimeoutMs` ahead. */
  touch(token: string): void {
    const info = this.state.tokens.get(token);
    if (info?.kind === 'oauth' && info.expiresAt !== undefined) {
      info.expiresAt = this.state.clock.now() + this.sessionTimeoutMs;
    }
  }

  authorize(query: URLSearchParams): SimResponse {
    const client = this.client(query.get('client_id') ?? undefined);
    const redirectUri = query.get('redirect_uri') ?? '';
    if (!client)
      return { status: 400, text: 'error=invalid_client_id&error_description=client%20identifier%20invalid' };
    if (!client.redirectUris.includes(redirectUri)) {
      return {
        status: 400,
        text: 'error=redirect_uri_mismatch&error_description=redirect_uri%20must%20match%20configuration',
      };
    }
    const target = new URL(redirectUri);
    const state = query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    if (query.get('response_type') !== 'code') {
      target.searchParams.set('error', 'unsupported_response_type');
      target.searchParams.set('error_description', 'response type not supported');
      return { status: 302, headers: { location: target.toString() } };
    }
    const method = query.get('code_challenge_method');
    if (method !== null && method !== 'S256') {
      target.searchParams.set('error', 'invalid_request');
      target.searchParams.set('error_description', 'invalid code_challenge_method');
      return { status: 302, headers: { location: target.toString() } };
    }
    const code = `aPrx${randomAlphanumeric(80)}==`;
    const challenge = query.get('code_challenge') ?? undefined;
    this.codes.set(code, {
      clientId: client.clientId,
      redirectUri,
      scope: query.get('scope') ?? 'api refresh_token',
      expiresAt: this.state.clock.now() + CODE_TTL_MS,
      ...(challenge ? { challenge } : {}),
    });
    target.searchParams.set('code', code);
    return { status: 302, headers: { location: target.toString() } };
  }

  token(body: unknown, origin: string): SimResponse {
    const p = (body && typeof body === 'object' ? body : {}) as Record<string, string | undefined>;
    const client = this.client(p.client_id);
    if (!client) return oauthError('invalid_client_id', 'client identifier invalid');
    const secretOk = p.client_secret === client.clientSecret;
    if (p.client_secret !== undefined && !secretOk)
      return oauthError('invalid_client', 'invalid client credentials');

    if (p.grant_type === 'authorization_code') {
      const code = p.code ? this.codes.get(p.code) : undefined;
      if (!code || code.clientId !== client.clientId || code.expiresAt <= this.state.clock.now()) {
        if (p.code) this.codes.delete(p.code);
        return oauthError('invalid_grant', 'invalid authorization code');
      }
      if (p.redirect_uri !== code.redirectUri) {
        return oauthError('redirect_uri_mismatch', 'redirect_uri must match configuration');
      }
      if (!secretOk && client.requireSecret !== false)
        return oauthError('invalid_client', 'invalid client credentials');
      if (code.challenge !== undefined) {
        if (!p.code_verifier) return oauthError('invalid_grant', 'invalid code verifier');
        const computed = base64url(createHash('sha256').update(p.code_verifier).digest());
        if (computed !== code.challenge) return oauthError('invalid_request', 'invalid code verifier');
      }
      this.codes.delete(p.code as string);
      const accessToken = this.issueAccessToken(client.clientId, code.scope);
      const scopes = code.scope.split(' ');
      let refreshToken: string | undefined;
      if (scopes.includes('refresh_token') || scopes.includes('offline_access') || scopes.includes('full')) {
        refreshToken = `5Aep861${randomAlphanumeric(80)}`;
        this.refreshTokens.set(refreshToken, {
          clientId: client.clientId,
          scope: code.scope,
          accessTokens: new Set([accessToken]),
        });
      }
      return json(200, this.tokenResponse(client, accessToken, code.scope, origin, refreshToken));
    }

    if (p.grant_type === 'refresh_token') {
      const rt = p.refresh_token ? this.refreshTokens.get(p.refresh_token) : undefined;
      if (!rt || rt.clientId !== client.clientId)
        return oauthError('invalid_grant', 'expired access/refresh token');
      if (p.client_secret !== undefined && !secretOk)
        return oauthError('invalid_client', 'invalid client credentials');
      const accessToken = this.issueAccessToken(client.clientId, rt.scope);
      rt.accessTokens.add(accessToken);
      return json(200, this.tokenResponse(client, accessToken, rt.scope, origin));
    }

    return oauthError('unsupported_grant_type', 'grant type not supported');
  }

  private tokenResponse(
    client: OAuthClient,
    accessToken: string,
    scope: string,
    origin: string,
    refreshToken?: string,
  ): Record<string, unknown> {
    const id = this.identityUrl(origin);
    const issuedAt = String(this.state.clock.now());
    return {
      access_token: accessToken,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      signature: createHmac('sha256', client.clientSecret)
        .update(id + issuedAt)
        .digest('base64'),
      scope,
      instance_url: origin,
      id,
      token_type: 'Bearer',
      issued_at: issuedAt,
    };
  }

  revoke(body: unknown, query: URLSearchParams): SimResponse {
    const p = (body && typeof body === 'object' ? body : {}) as Record<string, string | undefined>;
    const token = p.token ?? query.get('token') ?? undefined;
    if (!token) return oauthError('unsupported_token_type', 'this token type is not supported');
    const rt = this.refreshTokens.get(token);
    if (rt) {
      for (const t of rt.accessTokens) this.state.tokens.revoke(t);
      this.refreshTokens.delete(token);
      return { status: 200 };
    }
    if (this.state.tokens.get(token)) {
      this.state.tokens.revoke(token);
      return { status: 200 };
    }
    return oauthError('invalid_token', 'invalid token');
  }
}
