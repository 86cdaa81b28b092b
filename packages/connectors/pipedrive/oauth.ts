/**
 * Sign in with Pipedrive: this server's Pipedrive app (OAuth 2.0 authorization code grant, as
 * Pipedrive's Marketplace documentation describes it).
 *
 * - The person is sent to `https://oauth.pipedrive.com/oauth/authorize` with `client_id`,
 *   `redirect_uri` and `state` (Pipedrive documents no PKCE; the state binds the popup).
 * - `POST https://oauth.pipedrive.com/oauth/token`, the client's id and secret by HTTP Basic auth,
 *   a form body `grant_type=authorization_code&code&redirect_uri` (or
 *   `grant_type=refresh_token&refresh_token`), answers `{access_token, token_type: "Bearer",
 *   refresh_token, scope, expires_in: 3599, api_domain}`. `api_domain` is the company's own host
 *   (`https://{company}.pipedrive.com`): the API is called there, with `Authorization: Bearer`.
 * - Access tokens last about an hour: when Pipedrive refuses one (401) it is renewed once with the
 *   refresh token and the new items (`accessToken`, `refreshToken`, `accessTokenExpiresAt`,
 *   `apiDomain`, `scope`) handed to `save`, so the connection keeps them.
 */
import { ConnectorError } from '../sdk/connector';

export const PIPEDRIVE_OAUTH_URL = 'https://oauth.pipedrive.com';

export type PipedriveOAuthItems = Record<string, string>;
export type SavePipedriveItems = (items: PipedriveOAuthItems) => Promise<void>;

export type PipedriveOAuthClient = { clientId: string; clientSecret: string };

/** A connection signed in with Pipedrive (not the company's API token): it has a refresh token. */
export const isPipedriveOAuth = (items: PipedriveOAuthItems): boolean =>
  !items.apiToken?.trim() && Boolean(items.refreshToken?.trim());

type TokenAnswer =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; error: string; detail: string };

/** POST {oauthUrl}/oauth/token with HTTP Basic client authentication and a form body. */
export async function requestPipedriveTokens(
  oauthUrl: string,
  client: PipedriveOAuthClient,
  form: Record<string, string>,
): Promise<TokenAnswer> {
  let res: Response;
  try {
    res = await fetch(new URL('/oauth/token', oauthUrl), {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Pipedrive token endpoint unreachable: ${(error as Error).message}`,
      'Pipedrive is not answering right now; Lockstep will try again.',
    );
  }
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof answer.access_token === 'string') return { ok: true, body: answer };
  // OAuth errors: {error, error_description}; Pipedrive's API shape has {success: false, error, message}.
  return {
    ok: false,
    status: res.status,
    error: typeof answer.error === 'string' ? answer.error : `HTTP ${res.status}`,
    detail: String(answer.error_description ?? answer.message ?? ''),
  };
}

/** The items a token answer gives (the refresh token and API domain stay when an answer lacks them). */
export function pipedriveTokenItems(body: Record<string, unknown>, now: number): PipedriveOAuthItems {
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: String(body.access_token),
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    ...(Number.isFinite(expiresIn)
      ? { accessTokenExpiresAt: new Date(now + expiresIn * 1000).toISOString() }
      : {}),
    ...(typeof body.api_domain === 'string' && body.api_domain
      ? { apiDomain: body.api_domain.replace(/\/+$/, '') }
      : {}),
    ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
  };
}

/** A token refusal as the SDK's error: a refused grant means the person signs in again. */
export function pipedriveTokenError(
  answer: Extract<TokenAnswer, { ok: false }>,
  what: 'exchange' | 'refresh',
): ConnectorError {
  const code = answer.status === 429 ? 'rate_limited' : answer.status >= 500 ? 'transient' : 'auth_invalid';
  const technical = `Pipedrive token ${what} failed: ${answer.status} ${answer.error}${answer.detail ? `: ${answer.detail}` : ''}`;
  if (code !== 'auth_invalid')
    return new ConnectorError(
      code,
      technical,
      'Pipedrive is not answering right now; Lockstep will try again.',
    );
  if (what === 'exchange')
    return new ConnectorError(
      answer.error === 'invalid_client' ? 'auth_invalid' : 'validation',
      technical,
      'Pipedrive did not accept the authorization. Please sign in with Pipedrive again.',
    );
  return new ConnectorError(
    'auth_invalid',
    technical,
    'Pipedrive no longer accepts Lockstep’s sign-in (the app was uninstalled or its access revoked). Sign in with Pipedrive again.',
  );
}

/**
 * A signed-in connection's credentials: the access token to send and its renewal with the refresh
 * token when Pipedrive refuses it (one renewal shared by the requests refused together; a request
 * refused with a token already renewed just tries again with the new one).
 */
export function pipedriveSession(
  settings: {
    clientId?: string | undefined;
    clientSecret?: string | undefined;
    oauthUrl?: string | undefined;
  },
  start: PipedriveOAuthItems,
  save?: SavePipedriveItems,
) {
  let items = start;
  let renewing: Promise<boolean> | null = null;
  const renew = async (refused?: string): Promise<boolean> => {
    if (!items.refreshToken) return false;
    if (refused !== undefined && refused !== items.accessToken) return true;
    if (!settings.clientId || !settings.clientSecret) return false;
    const client = { clientId: settings.clientId, clientSecret: settings.clientSecret };
    renewing ??= (async () => {
      try {
        const answer = await requestPipedriveTokens(settings.oauthUrl ?? PIPEDRIVE_OAUTH_URL, client, {
          grant_type: 'refresh_token',
          refresh_token: items.refreshToken as string,
        });
        if (!answer.ok) throw pipedriveTokenError(answer, 'refresh');
        items = { ...items, ...pipedriveTokenItems(answer.body, Date.now()) };
        await save?.(items);
        return true;
      } finally {
        renewing = null;
      }
    })();
    return renewing;
  };
  return {
    token: () => {
      const token = items.accessToken?.trim();
      if (!token)
        throw new ConnectorError(
          'auth_invalid',
          'no Pipedrive access token',
          'Sign in with Pipedrive again, or enter your Pipedrive API token.',
        );
      return token;
    },
    renew,
    get items() {
      return items;
    },
  };
}
