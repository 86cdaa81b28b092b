import { ConnectorError } from '@lockstep/connectors';
import { type AffinitySettings, createAffinityPort } from '@lockstep/connectors/affinity';
import { type AirtableSettings, createAirtablePort } from '@lockstep/connectors/airtable';
import { type AttioSettings, createAttioPort } from '@lockstep/connectors/attio';
import { createGoogleSheetsPort, type GoogleSheetsSettings } from '@lockstep/connectors/google-sheets';
import { createHubSpotPort, type HubSpotSettings } from '@lockstep/connectors/hubspot';
import { createMemberstackPort, type MemberstackSettings } from '@lockstep/connectors/memberstack';
import { createNotionPort, type NotionSettings } from '@lockstep/connectors/notion';
import { createPipedrivePort, type PipedriveSettings } from '@lockstep/connectors/pipedrive';
import {
  assertPostgresqlHostAllowed,
  createPostgresqlPort,
  type PgTimeouts,
} from '@lockstep/connectors/postgresql';
import { createSalesforcePort, type SalesforceSettings } from '@lockstep/connectors/salesforce';
import { createStripePort, type StripeSettings } from '@lockstep/connectors/stripe';
import {
  createSupabasePort,
  SUPABASE_API_URL,
  type SupabaseSettings,
  supabaseAuthorizeUrl,
} from '@lockstep/connectors/supabase';
import { createWebflowPort, type WebflowSettings } from '@lockstep/connectors/webflow';
import type { ConnectorType } from '@lockstep/contract';
import { EMBEDDED_ITEM } from '../demo/embedded-items';
import {
  ConnectionProblem,
  type ConnectorPort,
  type ConnectorRegistry,
  type PortCallContext,
} from './connector-port';

/** Connector errors become connection problems with the connector's user-facing text. */
async function guarded<T>(call: () => Promise<T>, keepRateLimited = false): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ConnectorError) {
      const code =
        error.code === 'rate_limited' && keepRateLimited
          ? 'rate_limited'
          : error.code === 'rate_limited' ||
              error.code === 'version_conflict' ||
              error.code === 'cursor_invalid'
            ? 'transient'
            : error.code;
      throw new ConnectionProblem(code, error.userFacingMessage);
    }
    throw error;
  }
}

type Save = PortCallContext['saveItems'];
/** What every app port signed in to by OAuth or a token offers (renewed tokens saved via `save`). */
type AppPort = {
  check(secrets: Record<string, string>, save?: Save): ReturnType<ConnectorPort['check']>;
  listBases(secrets: Record<string, string>, save?: Save): ReturnType<ConnectorPort['listBases']>;
  discoverSchema(
    secrets: Record<string, string>,
    base: string,
    save?: Save,
  ): ReturnType<ConnectorPort['discoverSchema']>;
  exchangeCode(
    input: Parameters<NonNullable<ConnectorPort['exchangeOAuthCode']>>[0],
  ): Promise<Record<string, string>>;
};

/** The schema-generation calls of an app port that has them, guarded. */
type SchemaPort = {
  createTables(
    secrets: Record<string, string>,
    base: string,
    tables: Parameters<NonNullable<ConnectorPort['createTables']>>[2],
    save?: Save,
  ): ReturnType<NonNullable<ConnectorPort['createTables']>>;
  addFields(
    secrets: Record<string, string>,
    table: string,
    columns: Parameters<NonNullable<ConnectorPort['addFields']>>[2],
    save?: Save,
  ): ReturnType<NonNullable<ConnectorPort['addFields']>>;
};
const schemaCalls = (port: SchemaPort) => ({
  createTables: (
    secrets: Record<string, string>,
    base: string,
    tables: Parameters<SchemaPort['createTables']>[2],
    context?: PortCallContext,
  ) => guarded(() => port.createTables(secrets, base, tables, context?.saveItems)),
  addFields: (
    secrets: Record<string, string>,
    table: string,
    columns: Parameters<SchemaPort['addFields']>[2],
    context?: PortCallContext,
  ) => guarded(() => port.addFields(secrets, table, columns, context?.saveItems)),
});

/** An app port's calls as the registry offers them: guarded, renewed tokens saved on the connection. */
const appCalls = (port: AppPort) => ({
  check: (secrets: Record<string, string>, context?: PortCallContext) =>
    guarded(() => port.check(secrets, context?.saveItems)),
  listBases: (secrets: Record<string, string>, context?: PortCallContext) =>
    guarded(() => port.listBases(secrets, context?.saveItems)),
  discoverSchema: (secrets: Record<string, string>, base: string, context?: PortCallContext) =>
    guarded(() => port.discoverSchema(secrets, base, context?.saveItems)),
  exchangeOAuthCode: (input: Parameters<AppPort['exchangeCode']>[0]) =>
    guarded(() => port.exchangeCode(input)),
});

type AuthorizeInput = Parameters<NonNullable<ConnectorPort['authorizeUrl']>>[0];

/** The app's sign-in page; a port that cannot make it (sign-in not set up here) says so as bad input. */
const signInUrl =
  (port: { authorizeUrl(input: AuthorizeInput): string }) =>
  (input: AuthorizeInput): string => {
    try {
      return port.authorizeUrl(input);
    } catch (error) {
      if (error instanceof ConnectorError) throw new ConnectionProblem('validation', error.userFacingMessage);
      throw error;
    }
  };

/** The calls of an app connected by a key or token only (no sign-in): its connector errors guarded. */
const tokenCalls = (port: {
  check(items: Record<string, string>): Promise<{ accountEmail: string | null }>;
  listBases(items: Record<string, string>): Promise<{ remoteId: string; name: string }[]>;
  discoverSchema(items: Record<string, string>, base: string): ReturnType<ConnectorPort['discoverSchema']>;
}) => ({
  check: (secrets: Record<string, string>) => guarded(() => port.check(secrets)),
  listBases: (secrets: Record<string, string>) => guarded(() => port.listBases(secrets)),
  discoverSchema: (secrets: Record<string, string>, base: string) =>
    guarded(() => port.discoverSchema(secrets, base)),
});

type ResolveItems = (items: Record<string, string>) => Record<string, string>;

/**
 * Outside local mode, a database on Lockstep's own machine or network is refused when it is checked.
 * `resolve` turns stored items into an address at each call (a demo database's embedded server).
 */
const postgresql = (allowPrivate: boolean, resolve: ResolveItems, timeouts: PgTimeouts): ConnectorPort => {
  const postgresqlPort = createPostgresqlPort(timeouts);
  return {
    type: 'postgresql',
    check: (secrets) =>
      guarded(async () => {
        const items = resolve(secrets);
        // A demo database is on the embedded server by the server's own choice (users cannot set
        // the embedded items: assertNoReservedItems), so its private address is not a user's SSRF.
        await assertPostgresqlHostAllowed(items, { allowPrivate: allowPrivate || EMBEDDED_ITEM in secrets });
        return postgresqlPort.check(items);
      }),
    listBases: (secrets) => guarded(() => postgresqlPort.listBases(resolve(secrets))),
    discoverSchema: (secrets, base) => guarded(() => postgresqlPort.discoverSchema(resolve(secrets), base)),
    releaseChangeCapture: (secrets) => guarded(() => postgresqlPort.releaseChangeCapture(resolve(secrets))),
    // A logical decoding slot left behind would keep WAL on the user's server until its disk fills.
    onConnectionDeleted: async (secrets) => {
      try {
        await guarded(() => postgresqlPort.releaseChangeCapture(resolve(secrets)));
        return { leftBehind: null };
      } catch (error) {
        const why = error instanceof ConnectionProblem ? error.userFacingMessage : 'an unexpected error';
        return {
          leftBehind: `Lockstep could not drop its replication slot (${why}). Drop it by hand: SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'lockstep\\_%';`,
        };
      }
    },
  };
};

/** Supabase: the Management API with OAuth (or a personal access token), data through PostgreSQL. */
const supabase = (settings: SupabaseSettings): ConnectorPort => {
  const port = createSupabasePort(settings);
  return {
    type: 'supabase',
    ...appCalls(port),
    signInConfigured: Boolean(settings.clientId),
    onConnectionDeleted: (secrets) => guarded(() => port.removeAccess(secrets)),
    authorizeUrl: (input) => {
      if (!settings.clientId)
        throw new ConnectionProblem(
          'validation',
          'Signing in with Supabase is not set up on this server (LOCKSTEP_SUPABASE_CLIENT_ID). Use a personal access token.',
        );
      return supabaseAuthorizeUrl({ apiUrl: settings.apiUrl, clientId: settings.clientId }, input);
    },
  };
};

/** Airtable: a personal access token or OAuth with PKCE; `baseUrl` only for the sandbox or a local server. */
const airtable = (settings: AirtableSettings): ConnectorPort => {
  const port = createAirtablePort(settings);
  return {
    ensureWebhook: (secrets, baseId, url, known, context) =>
      guarded(() =>
        port.ensureWebhook(
          secrets,
          baseId,
          url,
          known?.macSecretBase64 && known.expirationTime
            ? {
                id: known.id,
                macSecretBase64: known.macSecretBase64,
                expirationTime: known.expirationTime,
                notificationUrl: known.notificationUrl,
              }
            : null,
          context?.saveItems,
        ),
      ),
    type: 'airtable',
    ...appCalls(port),
    ...schemaCalls(port),
    signInConfigured: Boolean(settings.clientId),
    authorizeUrl: signInUrl(port),
  };
};

/**
 * HubSpot: sign in with HubSpot (this server's app, OAuth with PKCE; renewed access tokens saved on
 * the connection) or a private app token; the API host is the server's (LOCKSTEP_HUBSPOT_API_URL),
 * the install page's LOCKSTEP_HUBSPOT_OAUTH_URL.
 */
const hubspot = (settings: HubSpotSettings): ConnectorPort => {
  const port = createHubSpotPort(settings);
  return {
    type: 'hubspot',
    ...appCalls(port),
    signInConfigured: Boolean(settings.clientId && settings.clientSecret),
    authorizeUrl: signInUrl(port),
  };
};

/**
 * Attio: sign in with Attio (this server's app on LOCKSTEP_ATTIO_OAUTH_URL; Attio's access tokens do
 * not expire) or an API key; the API host is the server's (LOCKSTEP_ATTIO_API_URL). Its webhook
 * (record events) is made by API.
 */
const attio = (settings: AttioSettings): ConnectorPort => {
  const port = createAttioPort(settings);
  return {
    type: 'attio',
    signInConfigured: Boolean(settings.clientId && settings.clientSecret),
    // Attio documents no PKCE: the code challenge is not sent (the state is).
    authorizeUrl: signInUrl(port),
    exchangeOAuthCode: (input) => guarded(() => port.exchangeCode(input)),
    ensureWebhook: (secrets, baseId, url, known) =>
      guarded(() =>
        port.ensureWebhook(
          secrets,
          baseId,
          url,
          known?.secret
            ? { id: known.id, secret: known.secret, notificationUrl: known.notificationUrl }
            : null,
        ),
      ),
    ...tokenCalls(port),
  };
};

/**
 * Pipedrive: sign in with Pipedrive (this server's app on LOCKSTEP_PIPEDRIVE_OAUTH_URL; the API on
 * the company's host from the token answer; renewed access tokens saved on the connection) or the
 * company's API token on LOCKSTEP_PIPEDRIVE_API_URL. Its webhooks (v2, one per object) are made by API.
 */
const pipedrive = (settings: PipedriveSettings): ConnectorPort => {
  const port = createPipedrivePort(settings);
  return {
    type: 'pipedrive',
    ensureWebhook: (secrets, baseId, url, known, context) =>
      guarded(() =>
        port.ensureWebhook(
          secrets,
          baseId,
          url,
          known?.secret
            ? { id: known.id, secret: known.secret, notificationUrl: known.notificationUrl }
            : null,
          context?.saveItems,
        ),
      ),
    ...appCalls(port),
    signInConfigured: Boolean(settings.clientId && settings.clientSecret),
    // Pipedrive documents no PKCE: the code challenge is not sent (the state is).
    authorizeUrl: signInUrl(port),
  };
};

/** Affinity: a user's API key (no OAuth yet); the API host is the server's (LOCKSTEP_AFFINITY_API_URL). */
const affinity = (settings: AffinitySettings): ConnectorPort => {
  const port = createAffinityPort(settings);
  return {
    type: 'affinity',
    ...tokenCalls(port),
    ensureWebhook: (secrets, baseId, url, known) =>
      guarded(() =>
        port.ensureWebhook(
          secrets,
          baseId,
          url,
          known ? { id: known.id, notificationUrl: known.notificationUrl } : null,
        ),
      ),
  };
};

/**
 * Salesforce: sign in with Salesforce (OAuth web-server flow with PKCE on the login host,
 * LOCKSTEP_SALESFORCE_API_URL), or `accessToken` + `instanceUrl` items; renewed sessions are saved.
 */
const salesforce = (settings: SalesforceSettings): ConnectorPort => {
  const port = createSalesforcePort(settings);
  return {
    type: 'salesforce',
    ...appCalls(port),
    signInConfigured: Boolean(settings.clientId),
    authorizeUrl: signInUrl(port),
  };
};

/**
 * Stripe: a secret or restricted key, or sign in with Stripe Connect (this server's platform,
 * LOCKSTEP_STRIPE_CONNECT_*; calls made with the platform key and Stripe-Account, the account
 * disconnected when the connection is deleted); the API host is the server's
 * (LOCKSTEP_STRIPE_API_URL). The connection shows the account and whether it is test or live.
 */
const stripe = (settings: StripeSettings): ConnectorPort => {
  const port = createStripePort(settings);
  return {
    type: 'stripe',
    ...appCalls(port),
    signInConfigured: Boolean(settings.connectClientId && settings.connectSecretKey),
    // Connect's OAuth takes no PKCE: the code challenge is not sent (the state is).
    authorizeUrl: signInUrl(port),
    onConnectionDeleted: (secrets) => guarded(() => port.removeAccess(secrets)),
  };
};

/**
 * Memberstack: an app's secret key (test or live mode by its prefix); the API host is the server's
 * (LOCKSTEP_MEMBERSTACK_API_URL). Its webhooks are set up by the user in the dashboard, with this
 * server's address (shown on the base) and the signing secret pasted on the connection.
 */
const memberstack = (settings: MemberstackSettings): ConnectorPort => {
  const port = createMemberstackPort(settings);
  return {
    type: 'memberstack',
    ...tokenCalls(port),
  };
};

/**
 * Webflow: sign in with Webflow (this server's app; no PKCE, tokens that do not expire) or a site
 * token; the API host is the server's (LOCKSTEP_WEBFLOW_API_URL), the authorize page's
 * LOCKSTEP_WEBFLOW_OAUTH_URL. A base is a site; publishing it is offered
 * (POST /rest/connector/webflow/publishSite/{externalBaseId}).
 */
const webflow = (settings: WebflowSettings): ConnectorPort => {
  const port = createWebflowPort(settings);
  return {
    type: 'webflow',
    ...appCalls(port),
    signInConfigured: Boolean(settings.clientId && settings.clientSecret),
    // Webflow's apps take no PKCE: the code challenge is not sent (the state is).
    authorizeUrl: signInUrl(port),
    // The site's item webhooks are made by API (one per trigger type); their secrets kept sealed.
    ensureWebhook: (secrets, siteId, url, known) =>
      guarded(() =>
        port.ensureWebhook(
          secrets,
          siteId,
          url,
          known
            ? {
                id: known.id,
                notificationUrl: known.notificationUrl,
                ...(known.secret ? { secret: known.secret } : {}),
              }
            : null,
        ),
      ),
    // A refused publish (Webflow's one a minute) keeps its code: the route answers 429 with the wait.
    publishSite: (secrets, siteId) => guarded(() => port.publishSite(secrets, siteId), true),
  };
};

/**
 * Notion: an internal integration token or sign in with Notion (renewed tokens saved on the
 * connection); `baseUrl` only for the sandbox or a local server.
 */
const notion = (settings: NotionSettings): ConnectorPort => {
  const port = createNotionPort(settings);
  return {
    type: 'notion',
    ...appCalls(port),
    ...schemaCalls(port),
    signInConfigured: Boolean(settings.clientId),
    // Notion's public integrations take no PKCE: the code challenge is not sent (the state is).
    authorizeUrl: (input) => {
      if (!settings.clientId)
        throw new ConnectionProblem(
          'validation',
          'Signing in with Notion is not set up on this server (LOCKSTEP_NOTION_CLIENT_ID). Use an internal integration token.',
        );
      return port.authorizeUrl(input);
    },
  };
};

/**
 * Google Sheets: an OAuth access token (renewed with a refresh token when a client is configured,
 * and saved on the connection).
 */
const googleSheets = (settings: GoogleSheetsSettings): ConnectorPort => {
  const port = createGoogleSheetsPort(settings);
  return {
    type: 'google_sheets',
    ...appCalls(port),
    ...schemaCalls(port),
    signInConfigured: Boolean(settings.clientId),
    authorizeUrl: (input) => {
      if (!settings.clientId)
        throw new ConnectionProblem(
          'validation',
          'Signing in with Google is not set up on this server (LOCKSTEP_GOOGLE_CLIENT_ID). Use an access token.',
        );
      return port.authorizeUrl(input);
    },
  };
};

/**
 * The connectors this server can use. A connector is registered here once it is built and passes
 * its tests; connector-info shows the others as not available.
 */
export function createConnectorRegistry(options: {
  allowPrivateHosts: boolean;
  supabase?: {
    apiUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    /** Supabase's root CA (LOCKSTEP_SUPABASE_ROOT_CA), for TLS to the projects' databases. */
    rootCa?: string | undefined;
  };
  airtable?: AirtableSettings;
  hubspot?: HubSpotSettings;
  attio?: AttioSettings;
  pipedrive?: PipedriveSettings;
  affinity?: AffinitySettings;
  salesforce?: SalesforceSettings;
  stripe?: StripeSettings;
  memberstack?: MemberstackSettings;
  webflow?: WebflowSettings;
  notion?: NotionSettings;
  googleSheets?: GoogleSheetsSettings;
  /** Connect and query timeouts on users' PostgreSQL databases (LOCKSTEP_PG_*_TIMEOUT_MS). */
  postgresTimeouts?: PgTimeouts;
  /** Stored PostgreSQL items to the items to connect with (see demo/embedded-items.ts). */
  resolveItems?: ResolveItems;
}): ConnectorRegistry {
  const ports = new Map<ConnectorType, ConnectorPort>([
    [
      'postgresql',
      postgresql(
        options.allowPrivateHosts,
        options.resolveItems ?? ((items) => items),
        options.postgresTimeouts ?? {},
      ),
    ],
    [
      'supabase',
      supabase({
        ...options.supabase,
        allowPrivateHosts: options.allowPrivateHosts,
        // Supabase's databases take TLS, verified; the simulator (another API URL) has none.
        databaseSsl: options.supabase && options.supabase.apiUrl !== SUPABASE_API_URL ? 'disable' : 'require',
      }),
    ],
    ['airtable', airtable({ allowCustomBaseUrl: options.allowPrivateHosts, ...options.airtable })],
    ['hubspot', hubspot(options.hubspot ?? {})],
    ['attio', attio(options.attio ?? {})],
    ['pipedrive', pipedrive(options.pipedrive ?? {})],
    ['affinity', affinity(options.affinity ?? {})],
    ['salesforce', salesforce({ allowCustomBaseUrl: options.allowPrivateHosts, ...options.salesforce })],
    ['stripe', stripe(options.stripe ?? {})],
    ['memberstack', memberstack(options.memberstack ?? {})],
    ['webflow', webflow(options.webflow ?? {})],
    ['notion', notion({ allowCustomBaseUrl: options.allowPrivateHosts, ...options.notion })],
    [
      'google_sheets',
      googleSheets({ allowCustomBaseUrl: options.allowPrivateHosts, ...options.googleSheets }),
    ],
  ]);
  return { get: (type) => ports.get(type) };
}
