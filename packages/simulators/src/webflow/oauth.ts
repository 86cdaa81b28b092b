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
 * - `GET /v2/token/introspect` (any token): the authorization (`id`, `createdOn`, `lastUsed`,
 *   `grantType`, `rateLimit`, `scope`, `authorizedTo: {siteIds, workspaceIds, userIds}`) and, for a
 *   token issued to an app, the `application`; `GET /v2/token/authorized_by` (scope
 *   `authorized_user:read`): the user who authorized it (`id`, `email`, `firstName`, `lastName`).
 */
import type { SimResponse, TokenInfo } from '../http.ts';
import type { WebflowState } from './model.ts';

export type OAuthApp = {
  clientId: string;
  clientSecret: string;
  /** Shown by `/v2/token/introspect` as the application's `displayName` (default: "Simulated App"). */
  displayName?: string;
  /** The redirect URI registered for the app (default: any). */
  redirectUri?: string;
  /** Scopes the app may ask for (default: the four the simulator knows). */
  scopes?: string[];
};

export const CODE_TTL_MS = 15 * 60_000;

/** The user who authorizes apps in the simulator (what `/v2/token/authorized_by` answers). */
export type WebflowUser = { id: string; email: string; firstName: string; lastName: string };

/** An authorization as `/v2/token/introspect` shows it. */
type Authorization = { id: string; createdOn: number; lastUsed: number | null; clientId?: string };

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
  /** Token -> its authorization (made on first sight for tokens given at start). */
  private readonly authorizations = new Map<string, Authorization>();
  /** The workspace member who approves on the authorize page. */
  readonly user: WebflowUser;

  constructor(
    private readonly state: WebflowState,
    private readonly allScopes: string[],
    /** Sites the simulated user authorizes (default: every site). */
    private readonly authorizeSites: () => string[],
  ) {
    this.user = {
      id: state.newId(),
      email: 'owner@lockstep-crm.example',
      firstName: 'Sim',
      lastName: 'Owner',
    };
  }

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
    this.authorizations.set(token, {
      id: this.state.newId(),
      createdOn: this.state.clock.now(),
      lastUsed: null,
      clientId,
    });
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

  private authorizationOf(token: TokenInfo): Authorization {
    let a = this.authorizations.get(token.token);
    if (!a) {
      const clientId = this.tokenApps.get(token.token);
      a = {
        id: this.state.newId(),
        createdOn: this.state.clock.now(),
        lastUsed: null,
        ...(clientId ? { clientId } : {}),
      };
      this.authorizations.set(token.token, a);
    }
    return a;
  }

  /** A token was used (introspect shows `lastUsed`). */
  touch(token: TokenInfo): void {
    this.authorizationOf(token).lastUsed = this.state.clock.now();
  }

  /**
   * `GET /v2/token/introspect`. Webflow's reference: `application` only for tokens issued to an app;
   * site and workspace tokens have grant type `client_credentials`. The scope is comma separated as
   * the reference describes it.
   */
  introspect(token: TokenInfo): SimResponse {
    const a = this.authorizationOf(token);
    const app = a.clientId ? this.apps.get(a.clientId) : undefined;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return {
      status: 200,
      body: {
        authorization: {
          id: a.id,
          createdOn: iso(a.createdOn),
          lastUsed: iso(a.lastUsed ?? a.createdOn),
          grantType: app ? 'authorization_code' : 'client_credentials',
          rateLimit: 60,
          scope: token.scopes.join(','),
          authorizedTo: {
            siteIds: token.bases ?? this.authorizeSites(),
            workspaceIds: [this.state.workspaceId],
            userIds: app ? [this.user.id] : [],
          },
        },
        ...(app
          ? {
              application: {
                id: app.clientId.slice(0, 24),
                description: 'A simulated Webflow Data Client app',
                homepage: 'https://webflow.com',
                displayName: app.displayName ?? 'Simulated App',
              },
            }
          : {}),
      },
    };
  }

  /** `GET /v2/token/authorized_by`: the user who authorized the token. */
  authorizedBy(): SimResponse {
    return { status: 200, body: { ...this.user } };
  }
}
