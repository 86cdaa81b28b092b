/**
 * Stripe Connect for Standard accounts, OAuth as Stripe's Connect OAuth reference describes it:
 * - `GET /oauth/authorize?response_type=code&client_id=ca_…&scope=read_write|read_only&state&redirect_uri?`
 *   on connect.stripe.com: the simulated user connects an account (`authorizeAs`, else the first one
 *   given at start, else a new empty one) and is sent back (302) with `code` (`ac_…`, single use,
 *   5 minutes) and `state`, or with `error=access_denied` when `denyNext` is set.
 * - `POST /oauth/token` authenticated with the PLATFORM's secret key (Bearer, Basic, or
 *   `client_secret`): `grant_type=authorization_code&code` or `grant_type=refresh_token&refresh_token`
 *   -> `{access_token, livemode, refresh_token, token_type: "bearer", stripe_publishable_key,
 *   stripe_user_id, scope}`. The mode is the platform key's. `access_token` is the legacy way in: a
 *   secret key of the connected account.
 * - `POST /oauth/deauthorize` (`client_id`, `stripe_user_id`, platform key) -> `{stripe_user_id}`;
 *   the account is no longer reachable with `Stripe-Account` nor with its tokens.
 * Each connected account is a StripeState of its own (objects, events, idempotency): the platform's
 * key with `Stripe-Account: acct_…` reaches only accounts connected to it.
 */
import type { SimResponse } from '../http.ts';
import type { ApiKey, StripeState } from './model.ts';

export type ConnectOptions = {
  /** The platform's client id (`ca_…`; default DEFAULT_CONNECT_CLIENT_ID). */
  clientId?: string;
  /** Redirect URIs registered for the platform (the first is the default); none: any URI given. */
  redirectUris?: string[];
  /** Accounts that exist at start (they connect when a user authorizes; `seed` as the platform's). */
  accounts?: { id?: string; seed?: false | { customers?: number } }[];
};

export const DEFAULT_CONNECT_CLIENT_ID = 'ca_LockstepSimulatorPlatform00000001';
/** Stripe's authorization codes are good for 5 minutes, once. */
export const AUTHORIZATION_CODE_TTL_MS = 5 * 60_000;

type PendingCode = {
  accountId: string;
  scope: string;
  redirectUri: string | undefined;
  expiresAt: number;
};

type Grant = { accountId: string; scope: string; livemode: boolean; accessToken: string };

/** Connect's OAuth errors: `{error, error_description}`. */
const oauthError = (status: number, error: string, description: string): SimResponse => ({
  status,
  body: { error, error_description: description },
});

export class ConnectServer {
  readonly clientId: string;
  readonly redirectUris: string[];
  /** Connected (and not yet connected) accounts by id. */
  readonly accounts = new Map<string, StripeState>();
  /** Accounts connected to the platform now (authorized and not deauthorized). */
  readonly connected = new Map<string, { scope: string }>();
  /** The account the next authorization connects (default: the first account, else a new one). */
  authorizeAs: string | undefined;
  /** The next authorization is refused by the user (`error=access_denied`). */
  denyNext = false;
  private readonly codes = new Map<string, PendingCode>();
  private readonly refreshTokens = new Map<string, Grant>();

  constructor(
    private readonly platform: StripeState,
    private readonly makeAccount: (id?: string) => StripeState,
    options: ConnectOptions = {},
  ) {
    this.clientId = options.clientId ?? DEFAULT_CONNECT_CLIENT_ID;
    this.redirectUris = options.redirectUris ?? [];
  }

  /** A Standard account that may connect to the platform. */
  addAccount(id?: string): StripeState {
    const state = this.makeAccount(id);
    this.accounts.set(state.accountId, state);
    return state;
  }

  account(id: string): StripeState {
    const state = this.accounts.get(id);
    if (!state) throw new Error(`no connected account ${id}`);
    return state;
  }

  /** The connected account a platform request names with `Stripe-Account`; undefined: not reachable. */
  reachable(accountId: string): StripeState | undefined {
    return this.connected.has(accountId) ? this.accounts.get(accountId) : undefined;
  }

  /** The account whose (legacy OAuth access token) key this is. */
  ownerOfKey(key: string): { state: StripeState; key: ApiKey } | undefined {
    for (const state of this.accounts.values()) {
      const k = state.keys.get(key);
      if (k) return { state, key: k };
    }
    return undefined;
  }

  authorize(query: URLSearchParams): SimResponse {
    if (query.get('response_type') !== 'code')
      return oauthError(400, 'invalid_request', "Invalid response_type: only 'code' is supported");
    if (query.get('client_id') !== this.clientId)
      return oauthError(400, 'invalid_client', 'No application matches the supplied client identifier');
    const scope = query.get('scope') ?? 'read_only';
    if (scope !== 'read_write' && scope !== 'read_only')
      return oauthError(400, 'invalid_scope', `Invalid scope: ${scope}`);
    const given = query.get('redirect_uri') ?? undefined;
    if (given !== undefined && this.redirectUris.length > 0 && !this.redirectUris.includes(given))
      return oauthError(
        400,
        'invalid_redirect_uri',
        'Invalid redirect URI: it must match one set for the platform',
      );
    const target = given ?? this.redirectUris[0];
    if (!target) return oauthError(400, 'invalid_redirect_uri', 'No redirect URI');
    const location = new URL(target);
    const state = query.get('state');
    if (this.denyNext) {
      this.denyNext = false;
      location.searchParams.set('error', 'access_denied');
      location.searchParams.set('error_description', 'The user denied your request');
    } else {
      const accountId = this.authorizeAs ?? [...this.accounts.keys()][0] ?? this.addAccount().accountId;
      const code = `ac_${this.platform.randomId(32)}`;
      this.codes.set(code, {
        accountId,
        scope,
        redirectUri: given,
        expiresAt: this.platform.clock.now() + AUTHORIZATION_CODE_TTL_MS,
      });
      location.searchParams.set('scope', scope);
      location.searchParams.set('code', code);
    }
    if (state !== null) location.searchParams.set('state', state);
    return { status: 302, headers: { location: location.toString() }, text: '' };
  }

  /** The platform's secret key from the request; a restricted or publishable key does not do. */
  private platformKey(authorization: string | undefined, params: Record<string, string>) {
    const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
    const basic = authorization ? /^Basic\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
    const fromBasic = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':')[0] : undefined;
    const text = bearer ?? fromBasic ?? params.client_secret;
    const key = text ? this.platform.keys.get(text) : undefined;
    return key?.key.startsWith('sk_') ? key : undefined;
  }

  token(authorization: string | undefined, params: Record<string, string>): SimResponse {
    const key = this.platformKey(authorization, params);
    if (!key) return oauthError(401, 'invalid_client', 'No valid platform secret key was provided');
    const grantType = params.grant_type;
    let grant: Omit<Grant, 'accessToken' | 'livemode'>;
    if (grantType === 'authorization_code') {
      const code = params.code ?? '';
      const pending = this.codes.get(code);
      if (!pending) return oauthError(400, 'invalid_grant', `Authorization code does not exist: ${code}`);
      this.codes.delete(code);
      if (this.platform.clock.now() >= pending.expiresAt)
        return oauthError(400, 'invalid_grant', `Authorization code expired: ${code}`);
      grant = { accountId: pending.accountId, scope: pending.scope };
      this.connected.set(pending.accountId, { scope: pending.scope });
    } else if (grantType === 'refresh_token') {
      const token = params.refresh_token ?? '';
      const prior = this.refreshTokens.get(token);
      if (!prior || !this.connected.has(prior.accountId))
        return oauthError(400, 'invalid_grant', `Refresh token does not exist: ${token}`);
      grant = { accountId: prior.accountId, scope: params.scope ?? prior.scope };
    } else {
      return oauthError(
        400,
        'unsupported_grant_type',
        `Unsupported grant type: ${grantType ?? ''} (authorization_code or refresh_token)`,
      );
    }
    const account = this.account(grant.accountId);
    const mode = key.livemode ? 'live' : 'test';
    const accessToken = `sk_${mode}_${this.platform.randomId(99)}`;
    account.addKey({ key: accessToken, livemode: key.livemode });
    const refreshToken = `rt_${this.platform.randomId(48)}`;
    this.refreshTokens.set(refreshToken, { ...grant, livemode: key.livemode, accessToken });
    return {
      status: 200,
      body: {
        access_token: accessToken,
        livemode: key.livemode,
        refresh_token: refreshToken,
        token_type: 'bearer',
        stripe_publishable_key: `pk_${mode}_${this.platform.randomId(99)}`,
        stripe_user_id: grant.accountId,
        scope: grant.scope,
      },
    };
  }

  deauthorize(authorization: string | undefined, params: Record<string, string>): SimResponse {
    const key = this.platformKey(authorization, params);
    if (!key) return oauthError(401, 'invalid_client', 'No valid platform secret key was provided');
    if (params.client_id !== this.clientId)
      return oauthError(400, 'invalid_client', `No such application: '${params.client_id ?? ''}'`);
    const accountId = params.stripe_user_id ?? '';
    if (!this.connected.has(accountId))
      return oauthError(
        401,
        'invalid_client',
        `This application is not connected to stripe account ${accountId}, or that account does not exist.`,
      );
    this.revoke(accountId);
    return { status: 200, body: { stripe_user_id: accountId } };
  }

  /** The account leaves the platform (its user disconnects, or the platform deauthorizes). */
  revoke(accountId: string): void {
    this.connected.delete(accountId);
    const account = this.accounts.get(accountId);
    for (const [token, grant] of this.refreshTokens) {
      if (grant.accountId !== accountId) continue;
      account?.keys.delete(grant.accessToken);
      this.refreshTokens.delete(token);
    }
  }
}
