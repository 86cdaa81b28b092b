/**
 * Webflow's OAuth 2.0 authorization code flow (no PKCE, no refresh tokens; access tokens do
 * not expire until revoked):
 * - `GET /oauth/authorize?response_type=code&client_id&redirect_uri?&scope&state?`: the simulated
 *   user approves at once and is redirected (302) to the redirect URI with `code` (single use,
 *   valid 15 minutes) and `state`. Scopes must be among the app's.
 * - `POST /oauth/access_token` (JSON or form) with `client_id`, `client_secret`, `code`,
 *   `grant_type=authorization_code` and `redirect_uri` (required when the authorize request had
 *   one) -> `{access_token, token_type: "bearer", scope}`.
 * - `POST /oauth/revoke_authorization` with `client_id`, `client_secret`, `access_token` ->
 *   `{did_revoke: true}`.
 */
import type { SimResponse } from '../http.ts';
import type { WebflowState } from './model.ts';

export type OAuthApp = {
  clientId: string;
  clientSecret: string;
  /** The redirect URI registered for the app (default: any). */
  redirectUri?: string;
  /** Scopes the app may ask for (default: the four the simulator knows). */
  scopes?: string[];
};

export const CODE_TTL_MS = 15 * 60_000;

type PendingCode = {
  clientId: string;
  scopes: string[];
  redirectUri: string | undefined;
  siteIds: string[];
  expiresAt: number;
};

const oauthError = (status: number, error: string, description: string): SimResponse => ({
  status,
  body: { error, error_description: description },
});

export class OAuthServer {
  readonly apps = new Map<string, OAuthApp>();
  private readonly codes = new Map<string, PendingCode>();
  /** Access token -> the app it was issued to. */
  private readonly tokenApps = new Map<string, string>();

  constructor(
    private readonly state: WebflowState,
    private readonly allScopes: string[],
    /** Sites the simulated user authorizes (default: every site). */
    private readonly authorizeSites: () => string[],
  ) {}

  addApp(app: OAuthApp): void {
    this.apps.set(app.clientId, app);
  }

  /** The app an access token was issued to (its client secret signs that app's webhooks). */
  appOfToken(token: string): OAuthApp | undefined {
    const clientId = this.tokenApps.get(token);
    return clientId === undefined ? undefined : this.apps.get(clientId);
  }

  bindToken(token: string, clientId: string): void {
    this.tokenApps.set(token, clientId);
  }

  authorize(query: URLSearchParams): SimResponse {
    const clientId = query.get('client_id') ?? '';
    const app = this.apps.get(clientId);
    if (query.get('response_type') !== 'code')
      return oauthError(400, 'unsupported_response_type', 'response_type must be "code"');
    if (!app) return oauthError(400, 'invalid_client', 'Unknown client_id');
    const redirectUri = query.get('redirect_uri') ?? undefined;
    if (redirectUri !== undefined && app.redirectUri !== undefined && redirectUri !== app.redirectUri)
      return oauthError(400, 'invalid_request', 'redirect_uri does not match the one registered for the app');
    const target = redirectUri ?? app.redirectUri;
    if (!target) return oauthError(400, 'invalid_request', 'No redirect_uri');
    const scopes = (query.get('scope') ?? '').split(/[\s,+]+/).filter((s) => s !== '');
    const allowed = app.scopes ?? this.allScopes;
    const extra = scopes.filter((s) => !allowed.includes(s));
    if (scopes.length === 0 || extra.length > 0)
      return oauthError(400, 'invalid_scope', `Scopes not configured for this app: ${extra.join(' ')}`);
    const code = this.state.newSecret(64);
    this.codes.set(code, {
      clientId,
      scopes,
      redirectUri,
      siteIds: this.authorizeSites(),
      expiresAt: this.state.clock.now() + CODE_TTL_MS,
    });
    const location = new URL(target);
    location.searchParams.set('code', code);
    const st = query.get('state');
    if (st !== null) location.searchParams.set('state', st);
    return { status: 302, headers: { location: location.toString() }, text: '' };
  }

  accessToken(body: unknown): SimResponse {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const clientId = typeof b.client_id === 'string' ? b.client_id : '';
    const secret = typeof b.client_secret === 'string' ? b.client_secret : '';
    const code = typeof b.code === 'string' ? b.code : '';
    if (!clientId || !secret || !code)
      return oauthError(400, 'invalid_request', 'client_id, client_secret and code are required');
    if (b.grant_type !== undefined && b.grant_type !== 'authorization_code')
      return oauthError(400, 'unsupported_grant_type', 'Only authorization_code is supported');
    const app = this.apps.get(clientId);
    if (!app || app.clientSecret !== secret)
      return oauthError(401, 'invalid_client', 'Invalid client credentials');
    const pending = this.codes.get(code);
    if (!pending || pending.clientId !== clientId || this.state.clock.now() >= pending.expiresAt) {
      this.codes.delete(code);
      return oauthError(400, 'invalid_grant', 'The authorization code is invalid, expired or already used');
    }
    const redirectUri = typeof b.redirect_uri === 'string' ? b.redirect_uri : undefined;
    if (pending.redirectUri !== undefined && redirectUri !== pending.redirectUri)
      return oauthError(400, 'invalid_grant', 'redirect_uri does not match the authorization request');
    this.codes.delete(code);
    const token = this.state.newSecret(64);
    this.state.tokens.add({
      token,
      scopes: pending.scopes,
      bases: pending.siteIds,
      kind: 'oauth',
      userId: this.state.workspaceId,
    });
    this.tokenApps.set(token, clientId);
    return {
      status: 200,
      body: { access_token: token, token_type: 'bearer', scope: pending.scopes.join(' ') },
    };
  }

  revoke(body: unknown): SimResponse {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const app = typeof b.client_id === 'string' ? this.apps.get(b.client_id) : undefined;
    if (!app || app.clientSecret !== b.client_secret)
      return oauthError(401, 'invalid_client', 'Invalid client credentials');
    const token = typeof b.access_token === 'string' ? b.access_token : '';
    if (!token) return oauthError(400, 'invalid_request', 'access_token is required');
    const check = this.state.tokens.check(token);
    if (!check.ok || this.tokenApps.get(token) !== app.clientId)
      return oauthError(400, 'invalid_token', 'The access token does not exist or was already revoked');
    this.state.tokens.revoke(token);
    return { status: 200, body: { did_revoke: true } };
  }
}
