/**
 * Stripe for the REST layer and the runtime. A connection holds a secret key (`sk_…`) or a
 * restricted key (`rk_…`, as `secretKey`), sent as a bearer token, or is signed in with Stripe
 * Connect (OAuth for Standard accounts, this server's platform): then it holds the connected
 * account's id (`stripeUserId`, `acct_…`) and every call is made with the PLATFORM's secret key and
 * `Stripe-Account: acct_…`, Stripe's recommended way (the legacy access token of the OAuth answer is
 * not kept). The one base is the Stripe account; its tables are the object types
 * (stripe-objects.ts). Whether the key is a test or live key is shown with the account.
 */
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createStripeClient,
  isRestrictedKey,
  keyMode,
  STRIPE_API_URL,
  type StripeAccount,
  type StripeClient,
  type StripeClientOptions,
  type StripeList,
  stripeAccount,
} from './stripe-api';
import { createStripeConnector, type StripeConnector } from './stripe-connector';
import {
  discoveredFields,
  metadataKeys,
  objectPath,
  STRIPE_TABLES,
  type StripeObject,
  type StripeTable,
  TABLE_NAMES,
} from './stripe-objects';

export type StripeItems = Record<string, string>;

export type StripeSettings = ApiUrlSettings & {
  /** The API every connection uses (https://api.stripe.com; the simulator in tests). */
  apiUrl?: string;
  /** This server's Connect platform: its client id (`ca_…`); without it Stripe connects with keys only. */
  connectClientId?: string;
  /** The platform's secret key: the token exchange, and every call made for a connected account. */
  connectSecretKey?: string;
  /** Stripe's Connect OAuth host (https://connect.stripe.com; the simulator in tests). */
  connectUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** Client tuning (tests): attempts, backoff, sleep, requests per second. */
  client?: Pick<
    StripeClientOptions,
    'maxAttempts' | 'baseDelayMs' | 'maxDelayMs' | 'sleep' | 'perSecond' | 'apiVersion'
  >;
  /** Connector tuning (tests): the read overlap. */
  overlapSeconds?: number;
};

function keyOf(items: StripeItems): string {
  const key = (items.secretKey ?? items.apiKey ?? '').trim();
  if (!key) {
    throw new ConnectorError(
      'auth_invalid',
      'no Stripe key',
      'Sign in with Stripe, or enter a Stripe secret key (sk_…) or restricted key (rk_…) from Developers > API keys.',
    );
  }
  if (key.startsWith('pk_')) {
    throw new ConnectorError(
      'auth_invalid',
      'a Stripe publishable key',
      'This is a publishable key (pk_…): it cannot read or write data. Enter a secret key (sk_…) or a restricted key (rk_…).',
    );
  }
  return key;
}

export const STRIPE_CONNECT_URL = 'https://connect.stripe.com';

/** A connection signed in with Stripe Connect (an account connected to this server's platform). */
export const isStripeConnect = (items: StripeItems) => Boolean(items.stripeUserId?.trim());

/**
 * The key a connection's calls are made with and, for a Connect connection, the account they act
 * on (`Stripe-Account`): the platform's secret key, which a connection never holds itself.
 */
export function credentialsOf(
  settings: StripeSettings,
  items: StripeItems,
): { apiKey: string; stripeAccount?: string } {
  if (!isStripeConnect(items)) return { apiKey: keyOf(items) };
  if (!settings.connectSecretKey?.trim())
    throw new ConnectorError(
      'auth_invalid',
      'Stripe Connect platform key is not configured',
      'This connection signed in with Stripe, which is no longer set up on this server (LOCKSTEP_STRIPE_CONNECT_SECRET_KEY). Enter a secret or restricted key instead.',
    );
  return { apiKey: settings.connectSecretKey.trim(), stripeAccount: (items.stripeUserId as string).trim() };
}

/** The app's API, or a `baseUrl` item the server honours (its Stripe sandbox, a local server). */
const apiUrlOf = (settings: StripeSettings, items: StripeItems) =>
  resolveApiUrl('Stripe', settings.apiUrl ?? STRIPE_API_URL, settings, items);

function clientFor(settings: StripeSettings, items: StripeItems) {
  return createStripeClient({
    baseUrl: apiUrlOf(settings, items),
    ...credentialsOf(settings, items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is retried a few times only.
    maxAttempts: 3,
    ...settings.client,
  });
}

/** "test mode" or "live mode" by the key (what a person must see before syncing real customers). */
export function modeLabel(key: string): string {
  const mode = keyMode(key);
  return mode === 'live' ? 'live mode' : mode === 'test' ? 'test mode' : 'unknown mode';
}

/** The account, or null when a restricted key may not read it (the key still works for its objects). */
async function accountOrNull(client: StripeClient): Promise<StripeAccount | null> {
  try {
    return await stripeAccount(client);
  } catch (error) {
    if (error instanceof ConnectorError && (error.code === 'permission_denied' || error.code === 'not_found'))
      return null;
    throw error;
  }
}

/** A cheap call any key that syncs anything can make: the first object of the first table it may read. */
async function probe(client: StripeClient): Promise<void> {
  let refused: ConnectorError | undefined;
  for (const table of STRIPE_TABLES) {
    try {
      await client.get(objectPath(table), { limit: 1 });
      return;
    } catch (error) {
      if (error instanceof ConnectorError && error.code === 'permission_denied') {
        refused ??= error;
        continue;
      }
      throw error;
    }
  }
  if (refused) throw refused;
}

const accountName = (a: StripeAccount | null) =>
  a?.settings?.dashboard?.display_name || a?.business_profile?.name || a?.email || a?.id || null;

type ConnectAnswer =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; error: string; detail: string };

/**
 * A form POST to Stripe's Connect OAuth host with the platform's secret key as the bearer token.
 * Connect answers errors as `{error, error_description}`.
 */
async function connectRequest(
  settings: StripeSettings,
  path: string,
  form: Record<string, string>,
): Promise<ConnectAnswer> {
  let res: Response;
  try {
    res = await fetch(new URL(path, settings.connectUrl ?? STRIPE_CONNECT_URL), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${settings.connectSecretKey?.trim() ?? ''}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new ConnectorError(
      'transient',
      `Stripe Connect unreachable: ${(error as Error).message}`,
      'Stripe is not answering right now; please try again.',
    );
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok) return { ok: true, body };
  return {
    ok: false,
    status: res.status,
    error: typeof body.error === 'string' ? body.error : `HTTP ${res.status}`,
    detail: typeof body.error_description === 'string' ? body.error_description : '',
  };
}

export function createStripePort(settings: StripeSettings = {}) {
  const platform = () => {
    if (!settings.connectClientId || !settings.connectSecretKey)
      throw new ConnectorError(
        'validation',
        'Stripe Connect platform is not configured',
        'Signing in with Stripe is not set up on this server (LOCKSTEP_STRIPE_CONNECT_CLIENT_ID and LOCKSTEP_STRIPE_CONNECT_SECRET_KEY). Use a secret or restricted key instead.',
      );
    return { clientId: settings.connectClientId };
  };
  return {
    type: 'stripe' as const,
    /**
     * Stripe's Connect authorize page (connect.stripe.com/oauth/authorize) for this server's
     * platform: the person signs in to (or creates) their Stripe account and connects it with
     * read_write access. Connect's OAuth takes no PKCE: the state alone binds the answer.
     */
    authorizeUrl(input: { redirectUri: string; state: string }): string {
      const url = new URL('/oauth/authorize', settings.connectUrl ?? STRIPE_CONNECT_URL);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', platform().clientId);
      url.searchParams.set('scope', 'read_write');
      url.searchParams.set('state', input.state);
      url.searchParams.set('redirect_uri', input.redirectUri);
      return url.toString();
    },
    /**
     * POST /oauth/token with the platform's secret key: the code for the connected account's id
     * (`stripe_user_id`), the scope and the mode. The legacy access and refresh tokens in the
     * answer are not kept: calls go with the platform key and `Stripe-Account`.
     */
    async exchangeCode(input: { code: string }): Promise<StripeItems> {
      platform();
      const answer = await connectRequest(settings, '/oauth/token', {
        grant_type: 'authorization_code',
        code: input.code,
      });
      if (!answer.ok || typeof answer.body.stripe_user_id !== 'string')
        throw new ConnectorError(
          !answer.ok && answer.status >= 500
            ? 'transient'
            : !answer.ok && answer.error === 'invalid_client'
              ? 'auth_invalid'
              : 'validation',
          answer.ok ? 'Stripe Connect answered without stripe_user_id' : `${answer.error}: ${answer.detail}`,
          'Stripe did not accept the authorization. Please sign in with Stripe again.',
        );
      return {
        stripeUserId: answer.body.stripe_user_id,
        livemode: String(answer.body.livemode === true),
        scope: String(answer.body.scope ?? 'read_write'),
      };
    },
    /**
     * A deleted Connect connection disconnects the account from the platform
     * (POST /oauth/deauthorize). Already disconnected (Stripe's invalid_client) is done too.
     */
    async removeAccess(items: StripeItems): Promise<{ leftBehind: string | null }> {
      if (!isStripeConnect(items) || !settings.connectClientId || !settings.connectSecretKey)
        return { leftBehind: null };
      const answer = await connectRequest(settings, '/oauth/deauthorize', {
        client_id: settings.connectClientId,
        stripe_user_id: (items.stripeUserId as string).trim(),
      }).catch((error: unknown) => ({
        ok: false as const,
        status: 0,
        error: 'unreachable',
        detail: (error as Error).message,
      }));
      if (answer.ok || answer.error === 'invalid_client') return { leftBehind: null };
      return {
        leftBehind: `Stripe did not disconnect the account from Lockstep (${answer.error}). Disconnect it in your Stripe Dashboard: Settings > Connected accounts and apps (Authorized applications).`,
      };
    },
    /**
     * The key works: the account it belongs to (a restricted key that may not read the account
     * reads one object instead). Shown on the connection: the account and test or live mode.
     */
    async check(items: StripeItems): Promise<{ accountEmail: string | null }> {
      const key = credentialsOf(settings, items).apiKey;
      const client = clientFor(settings, items);
      const account = await accountOrNull(client);
      if (!account) await probe(client);
      const restricted = isRestrictedKey(key) ? ', restricted key' : '';
      return { accountEmail: `${accountName(account) ?? 'Stripe account'} · ${modeLabel(key)}${restricted}` };
    },
    /** One base: the Stripe account (its id; `account` when a restricted key may not read it). */
    async listBases(items: StripeItems) {
      const key = credentialsOf(settings, items).apiKey;
      const account = await accountOrNull(clientFor(settings, items));
      const name = accountName(account);
      return [
        {
          remoteId: account?.id ?? 'account',
          name: `Stripe${name ? ` ${name}` : ''} (${modeLabel(key)})`,
        },
      ];
    },
    /**
     * The object types as tables: fixed fields plus the metadata keys found on the first page of
     * each. A type the key may not read (a restricted key) is left out; all refused: the error.
     */
    async discoverSchema(items: StripeItems, _accountId: string) {
      const client = clientFor(settings, items);
      const tables = [];
      let refused: ConnectorError | undefined;
      for (const table of STRIPE_TABLES) {
        try {
          const { body } = await client.get<StripeList<StripeObject>>(objectPath(table), { limit: 100 });
          tables.push(stripeDiscoveredTable(table, metadataKeys(body.data)));
        } catch (error) {
          if (error instanceof ConnectorError && error.code === 'permission_denied') {
            refused ??= error;
            continue;
          }
          throw error;
        }
      }
      if (tables.length === 0 && refused) throw refused;
      return tables;
    },
  };
}

export function stripeDiscoveredTable(table: StripeTable, keys: string[]) {
  return {
    remoteId: table,
    name: TABLE_NAMES[table],
    extras: { stripeObject: table, metadataKeys: keys },
    fields: discoveredFields(table, keys),
  };
}

export type StripePort = ReturnType<typeof createStripePort>;

/** The connector a run uses for one connection (tables are object types). */
export function createStripeRuntimeConnector(settings: StripeSettings, items: StripeItems): StripeConnector {
  return createStripeConnector({
    baseUrl: apiUrlOf(settings, items),
    ...credentialsOf(settings, items),
    pool: settings.pool ?? null,
    ...(settings.overlapSeconds !== undefined ? { overlapSeconds: settings.overlapSeconds } : {}),
    ...settings.client,
  });
}
