/**
 * Salesforce for the REST layer and the runtime. A connection holds an OAuth session: `accessToken`,
 * `refreshToken` and `instanceUrl` (the org's host, where data calls go), from the web-server flow
 * with PKCE on the login host (https://login.salesforce.com, LOCKSTEP_SALESFORCE_API_URL); a test
 * or a script may give `accessToken` + `instanceUrl` directly (the server's Salesforce Sandbox does,
 * with a session that does not time out). When Salesforce refuses the session
 * (INVALID_SESSION_ID) it is renewed once with the refresh token and the new items saved. The one
 * base is the org; its tables are the standard objects Account, Contact, Lead and Opportunity and
 * the org's custom objects (`__c`), each table's remote id the object's API name.
 */
import type pg from 'pg';
import { type ApiUrlSettings, trimUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import { HttpClient } from '../sdk/http-client';
import {
  type ApiUsage,
  createSalesforceClient,
  mapSalesforceError,
  SALESFORCE_LOGIN_URL,
  type SalesforceClient,
  type SalesforceClientOptions,
  type SalesforceUserInfo,
  salesforceLimits,
} from './salesforce-api';
import {
  createSalesforceConnector,
  SALESFORCE_STANDARD_OBJECTS,
  type SalesforceConnector,
  type SalesforceConnectorOptions,
} from './salesforce-connector';
import { type SalesforceDescribe, salesforceFields } from './salesforce-values';

export type SalesforceItems = Record<string, string>;
type SaveItems = (items: Record<string, string>) => Promise<void>;

export type SalesforceSettings = ApiUrlSettings & {
  /** The login host (https://login.salesforce.com; the simulator in tests): OAuth's endpoints. */
  apiUrl?: string;
  /** The connected app's consumer key and secret (sign in with Salesforce, token refresh). */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  pool?: pg.Pool | null;
  /** Client and connector tuning (tests). */
  client?: Pick<
    SalesforceConnectorOptions,
    | 'rateLimitWaitMs'
    | 'dailyLimitWaitMs'
    | 'maxAttempts'
    | 'maxRetryAfterMs'
    | 'sleep'
    | 'perSecond'
    | 'overlapMs'
    | 'bulkWriteThreshold'
    | 'bulkQueryThreshold'
    | 'bulkPollMs'
    | 'apiVersion'
  >;
};

const loginUrlOf = (settings: SalesforceSettings) => trimUrl(settings.apiUrl ?? SALESFORCE_LOGIN_URL);

/** Salesforce's own hosts (production, sandboxes, My Domain, government cloud). */
const SALESFORCE_HOST =
  /(^|\.)(salesforce\.com|force\.com|cloudforce\.com|salesforce\.mil|site\.com|sfcrmproducts\.cn)$/i;

/**
 * The org's instance URL from the items: a Salesforce host over https, the server's own login host
 * (the simulator it is pointed at), one of its sandboxes, or any http(s) URL on a local server. A
 * sandbox connection (`sandbox: 'true'`) whose simulator is gone (the server restarted) is told to
 * connect the sandbox again.
 */
export function instanceUrlOf(settings: SalesforceSettings, items: SalesforceItems): string {
  const raw = (items.instanceUrl ?? items.baseUrl ?? '').trim();
  if (!raw) {
    throw new ConnectorError(
      'auth_invalid',
      'no Salesforce instance URL',
      'Sign in to Salesforce again (the connection has no org address).',
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConnectorError(
      'validation',
      `bad Salesforce instanceUrl ${raw}`,
      'The Salesforce org address is not a valid URL.',
    );
  }
  const normalized = trimUrl(url.origin);
  if (url.protocol === 'https:' && SALESFORCE_HOST.test(url.hostname)) return normalized;
  const allowed = [loginUrlOf(settings), ...(settings.sandboxUrls?.() ?? [])].map((u) => {
    try {
      return new URL(u).origin;
    } catch {
      return u;
    }
  });
  if (allowed.includes(normalized)) return normalized;
  if (items.sandbox === 'true') {
    // The sandbox lives in the server's memory: a restart ends it (and moves its port).
    throw new ConnectorError(
      'auth_invalid',
      `Salesforce sandbox ${normalized} is gone`,
      'This Salesforce sandbox was reset when the server restarted. Connect the Salesforce sandbox again.',
    );
  }
  if (settings.allowCustomBaseUrl && (url.protocol === 'http:' || url.protocol === 'https:'))
    return normalized;
  throw new ConnectorError(
    'permission_denied',
    `Salesforce instanceUrl refused: ${normalized}`,
    'The Salesforce org address is not a Salesforce host.',
  );
}

function tokenOf(items: SalesforceItems): string {
  const token = (items.accessToken ?? '').trim();
  if (!token && !items.refreshToken) {
    throw new ConnectorError(
      'auth_invalid',
      'no Salesforce access token',
      'Sign in to Salesforce to connect.',
    );
  }
  return token;
}

type TokenAnswer = { access_token: string; refresh_token?: string; instance_url?: string; id?: string };

function oauthClient(settings: SalesforceSettings) {
  return new HttpClient({
    baseUrl: loginUrlOf(settings),
    maxAttempts: 3,
    mapError: (status, body, headers) => mapSalesforceError(status, body, headers),
  });
}

async function tokenRequest(
  settings: SalesforceSettings,
  form: Record<string, string>,
): Promise<TokenAnswer> {
  const { body } = await oauthClient(settings).request<TokenAnswer>({
    method: 'POST',
    path: '/services/oauth2/token',
    body: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (!body?.access_token)
    throw new ConnectorError(
      'auth_invalid',
      'Salesforce token answer without access_token',
      'Sign in to Salesforce again.',
    );
  return body;
}

/**
 * A session on a connection's items: the token to send and, with a refresh token and a client, its
 * renewal (once per refusal); renewed items go to `save`.
 */
export function salesforceSession(settings: SalesforceSettings, start: SalesforceItems, save?: SaveItems) {
  let items = { ...start };
  let renewing: Promise<boolean> | null = null;
  return {
    items: () => items,
    token: () => items.accessToken ?? '',
    async renew(): Promise<boolean> {
      if (!items.refreshToken || !settings.clientId) return false;
      renewing ??= (async () => {
        const answer = await tokenRequest(settings, {
          grant_type: 'refresh_token',
          refresh_token: items.refreshToken as string,
          client_id: settings.clientId as string,
          ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
        });
        items = {
          ...items,
          accessToken: answer.access_token,
          ...(answer.refresh_token ? { refreshToken: answer.refresh_token } : {}),
          ...(answer.instance_url ? { instanceUrl: answer.instance_url } : {}),
        };
        await save?.(items);
        return true;
      })().finally(() => {
        renewing = null;
      });
      return renewing;
    },
  };
}

function clientFor(settings: SalesforceSettings, items: SalesforceItems, save?: SaveItems): SalesforceClient {
  tokenOf(items);
  const session = salesforceSession(settings, items, save);
  return createSalesforceClient({
    instanceUrl: instanceUrlOf(settings, items),
    token: session.token,
    onAuthFailure: session.renew,
    pool: settings.pool ?? null,
    // A person is waiting: a rate limit is not slept through for long.
    maxRetryAfterMs: 10_500,
    maxAttempts: 3,
    ...(settings.client as Partial<SalesforceClientOptions>),
  });
}

/** Discovery of one object: its synced fields as canonical fields. */
export function salesforceDiscoveredTable(d: SalesforceDescribe) {
  const fields = salesforceFields(d);
  const synced = new Set(fields.map((f) => f.remoteId));
  return {
    remoteId: d.name,
    name: d.labelPlural || d.label || d.name,
    extras: {
      salesforceObject: d.name,
      custom: d.custom === true,
      unsupportedFields: d.fields.filter((f) => f.name !== 'Id' && !synced.has(f.name)).map((f) => f.name),
    },
    fields,
  };
}

/**
 * Who the session belongs to: the identity URL the token answer gave (`identityUrl`, asked on the
 * instance), else `/services/oauth2/userinfo`; null when neither answers.
 */
async function whoAmI(client: SalesforceClient, items: SalesforceItems) {
  const paths: string[] = [];
  if (items.identityUrl) {
    try {
      paths.push(new URL(items.identityUrl).pathname);
    } catch {
      // not a URL: skipped
    }
  }
  paths.push('/services/oauth2/userinfo');
  for (const path of paths) {
    try {
      const { body } = await client.request<SalesforceUserInfo & { username?: string }>({
        method: 'GET',
        path,
      });
      if (body && typeof body === 'object') return body;
    } catch (error) {
      if (
        !(error instanceof ConnectorError) ||
        error.code === 'auth_invalid' ||
        error.code === 'rate_limited'
      )
        throw error;
    }
  }
  return null;
}

type GlobalDescribe = {
  sobjects: {
    name: string;
    label?: string;
    custom?: boolean;
    queryable?: boolean;
    deprecatedAndHidden?: boolean;
  }[];
};

/** The objects Lockstep syncs: the standard four the org has, and its queryable custom objects. */
export function syncedObjects(global: GlobalDescribe): string[] {
  const names = new Set(global.sobjects.map((o) => o.name));
  const standard = SALESFORCE_STANDARD_OBJECTS.filter((o) => names.has(o));
  const custom = global.sobjects
    .filter((o) => o.name.endsWith('__c') && o.queryable !== false && !o.deprecatedAndHidden)
    .map((o) => o.name)
    .sort();
  return [...standard, ...custom];
}

export function createSalesforcePort(settings: SalesforceSettings = {}) {
  return {
    type: 'salesforce' as const,
    /** The user the session belongs to, and the org's daily API allocation left. */
    async check(
      items: SalesforceItems,
      save?: SaveItems,
    ): Promise<{ accountEmail: string | null; apiUsage: ApiUsage | null }> {
      const client = clientFor(settings, items, save);
      // `/limits` is authenticated and tells the allocation left: the check itself.
      const apiUsage = await salesforceLimits(client);
      const user = await whoAmI(client, items);
      return { accountEmail: user?.email ?? user?.preferred_username ?? user?.username ?? null, apiUsage };
    },
    /** One base: the org. */
    async listBases(items: SalesforceItems, save?: SaveItems) {
      const client = clientFor(settings, items, save);
      const user = await whoAmI(client, items);
      let org: { Id: string; Name?: string } | undefined;
      try {
        const { body } = await client.request<{ records: { Id: string; Name?: string }[] }>({
          method: 'GET',
          path: '/query',
          query: { q: 'SELECT Id, Name FROM Organization' },
        });
        org = body.records[0];
      } catch (error) {
        if (!(error instanceof ConnectorError) || error.code === 'auth_invalid') throw error;
      }
      const id = user?.organization_id ?? org?.Id ?? new URL(instanceUrlOf(settings, items)).host;
      return [{ remoteId: id, name: org?.Name ? `Salesforce: ${org.Name}` : `Salesforce org ${id}` }];
    },
    /** Account, Contact, Lead, Opportunity and the custom objects, described. */
    async discoverSchema(items: SalesforceItems, _orgId: string, save?: SaveItems) {
      const client = clientFor(settings, items, save);
      const { body } = await client.request<GlobalDescribe>({ method: 'GET', path: '/sobjects' });
      const tables = [];
      for (const name of syncedObjects(body)) {
        try {
          const { body: d } = await client.request<SalesforceDescribe>({
            method: 'GET',
            path: `/sobjects/${name}/describe`,
          });
          tables.push(salesforceDiscoveredTable(d));
        } catch (error) {
          // An object the user may not see is left out.
          if (
            error instanceof ConnectorError &&
            (error.code === 'permission_denied' || error.code === 'not_found')
          )
            continue;
          throw error;
        }
      }
      return tables;
    },
    /** Sign in with Salesforce: the authorize URL of the web-server flow with PKCE. */
    authorizeUrl(input: { redirectUri: string; state: string; codeChallenge: string }): string {
      if (!settings.clientId)
        throw new ConnectorError(
          'validation',
          'no Salesforce client id',
          'Signing in with Salesforce is not set up on this server (LOCKSTEP_SALESFORCE_CLIENT_ID).',
        );
      const url = new URL(`${loginUrlOf(settings)}/services/oauth2/authorize`);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', settings.clientId);
      url.searchParams.set('redirect_uri', input.redirectUri);
      url.searchParams.set('state', input.state);
      url.searchParams.set('code_challenge', input.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      url.searchParams.set('scope', 'api refresh_token');
      return url.toString();
    },
    /** The authorization code (with its PKCE verifier) for the session items to store. */
    async exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }) {
      if (!settings.clientId)
        throw new ConnectorError(
          'validation',
          'no Salesforce client id',
          'Signing in with Salesforce is not set up on this server (LOCKSTEP_SALESFORCE_CLIENT_ID).',
        );
      const answer = await tokenRequest(settings, {
        grant_type: 'authorization_code',
        code: input.code,
        client_id: settings.clientId,
        ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
        redirect_uri: input.redirectUri,
        code_verifier: input.codeVerifier,
      });
      if (!answer.instance_url)
        throw new ConnectorError(
          'auth_invalid',
          'Salesforce token answer without instance_url',
          'Sign in to Salesforce again.',
        );
      const items: SalesforceItems = { accessToken: answer.access_token, instanceUrl: answer.instance_url };
      if (answer.refresh_token) items.refreshToken = answer.refresh_token;
      if (answer.id) items.identityUrl = answer.id;
      // The instance URL must be one this server accepts.
      instanceUrlOf(settings, items);
      return items;
    },
  };
}

export type SalesforcePort = ReturnType<typeof createSalesforcePort>;

/** The connector a run uses for one connection (tables are sObjects); renewed sessions go to `save`. */
export function createSalesforceRuntimeConnector(
  settings: SalesforceSettings,
  items: SalesforceItems,
  save?: SaveItems,
): SalesforceConnector {
  tokenOf(items);
  const session = salesforceSession(settings, items, save);
  return createSalesforceConnector({
    instanceUrl: instanceUrlOf(settings, items),
    token: session.token,
    onAuthFailure: session.renew,
    pool: settings.pool ?? null,
    ...settings.client,
  });
}
