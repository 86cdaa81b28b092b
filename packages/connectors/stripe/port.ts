/**
 * Stripe for the REST layer and the runtime. A connection holds a secret key (`sk_…`) or a
 * restricted key (`rk_…`, as `secretKey`), sent as a bearer token; OAuth (Stripe Connect) is not
 * built. The one base is the Stripe account the key belongs to; its tables are the object types
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
      'Enter a Stripe secret key (sk_…) or restricted key (rk_…) from Developers > API keys.',
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

/** The app's API, or a `baseUrl` item the server honours (its Stripe sandbox, a local server). */
const apiUrlOf = (settings: StripeSettings, items: StripeItems) =>
  resolveApiUrl('Stripe', settings.apiUrl ?? STRIPE_API_URL, settings, items);

function clientFor(settings: StripeSettings, items: StripeItems) {
  return createStripeClient({
    baseUrl: apiUrlOf(settings, items),
    apiKey: keyOf(items),
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

export function createStripePort(settings: StripeSettings = {}) {
  return {
    type: 'stripe' as const,
    /**
     * The key works: the account it belongs to (a restricted key that may not read the account
     * reads one object instead). Shown on the connection: the account and test or live mode.
     */
    async check(items: StripeItems): Promise<{ accountEmail: string | null }> {
      const key = keyOf(items);
      const client = clientFor(settings, items);
      const account = await accountOrNull(client);
      if (!account) await probe(client);
      const restricted = isRestrictedKey(key) ? ', restricted key' : '';
      return { accountEmail: `${accountName(account) ?? 'Stripe account'} · ${modeLabel(key)}${restricted}` };
    },
    /** One base: the Stripe account (its id; `account` when a restricted key may not read it). */
    async listBases(items: StripeItems) {
      const key = keyOf(items);
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
    apiKey: keyOf(items),
    pool: settings.pool ?? null,
    ...(settings.overlapSeconds !== undefined ? { overlapSeconds: settings.overlapSeconds } : {}),
    ...settings.client,
  });
}
