import type { CreatedSchemaField, CreatedSchemaTable, SchemaColumn, SchemaTable } from '@lockstep/connectors';
import type { ConnectorType } from '@lockstep/contract';

/** What the REST layer needs from a connector to connect an app and learn its schema. */
export type DiscoveredField = {
  remoteId: string;
  name: string;
  fieldType: string;
  readOnly: boolean;
  options: Record<string, unknown>;
};
export type DiscoveredTable = {
  remoteId: string;
  name: string;
  fields: DiscoveredField[];
  extras: Record<string, unknown>;
};
export type BasePreview = { remoteId: string; name: string };

/**
 * Given to a port call by its caller: a port whose calls renew credentials (OAuth refresh) or set
 * something up in the app (Supabase's database role) stores the connection's new items with it.
 */
export type PortCallContext = { saveItems(items: Record<string, string>): Promise<void> };

/**
 * A webhook an app made for Lockstep (kept sealed on the connection, per base): its id in the app,
 * the address it sends to, and what checks its deliveries. Airtable: `macSecretBase64` and
 * `expirationTime` (its webhooks last 7 days). Attio: `secret`, the key of its `Attio-Signature`.
 * Pipedrive: one webhook per object, `id` their ids comma-separated, and `secret` the HTTP Basic
 * password they send (user `lockstep`).
 */
export type AppWebhook = {
  id: string;
  notificationUrl: string;
  macSecretBase64?: string;
  expirationTime?: string;
  secret?: string;
};

export type ConnectorPort = {
  type: ConnectorType;
  /** Throws a ConnectionProblem when the app refuses the credentials or cannot be reached. */
  check(secrets: Record<string, string>, context?: PortCallContext): Promise<{ accountEmail: string | null }>;
  listBases(secrets: Record<string, string>, context?: PortCallContext): Promise<BasePreview[]>;
  discoverSchema(
    secrets: Record<string, string>,
    baseRemoteId: string,
    context?: PortCallContext,
  ): Promise<DiscoveredTable[]>;
  /**
   * Apps with webhooks made by API (Airtable, Attio, Pipedrive): makes sure the base's webhook to
   * `notificationUrl` exists (and has time left); `known` is what the last call returned (kept
   * sealed by the caller). Answers `known` itself when nothing changed.
   */
  ensureWebhook?(
    secrets: Record<string, string>,
    baseRemoteId: string,
    notificationUrl: string,
    known: AppWebhook | null,
    context?: PortCallContext,
  ): Promise<AppWebhook>;
  /**
   * Connectors that set something up in the app on connect (Supabase: Lockstep's database role)
   * undo it here, before the connection is deleted. Best effort: `leftBehind` is a sentence telling
   * the user what is left to remove by hand (null: nothing); the deletion goes on either way.
   */
  onConnectionDeleted?(secrets: Record<string, string>): Promise<{ leftBehind: string | null }>;
  /**
   * Connectors whose change capture keeps something in the app while unread (PostgreSQL's logical
   * decoding slot holds WAL): let it go. Called when no sync of the connection is on.
   */
  releaseChangeCapture?(secrets: Record<string, string>): Promise<{ released: boolean }>;
  /**
   * OAuth connectors: whether signing in with the app is set up on this server (its client id is
   * configured); when not, the web app says what to configure instead of offering a button that fails.
   */
  signInConfigured?: boolean;
  /** OAuth connectors: the app's authorize URL for a PKCE sign-in (the web app opens it in a popup). */
  authorizeUrl?(input: { redirectUri: string; state: string; codeChallenge: string }): string;
  /** OAuth connectors: an authorization code (with its PKCE verifier) for the connection items to store. */
  /**
   * Webflow: publishes a site (base) so its staged CMS items go live. Webflow allows one publish a
   * minute; a refused one throws with how long to wait.
   */
  publishSite?(
    secrets: Record<string, string>,
    baseRemoteId: string,
  ): Promise<{ siteId: string; publishedTo: string[]; queuedAt: string }>;
  /**
   * Schema generation into an app (Airtable, Notion, Google Sheets): new tables in a base, with
   * fields in the app's own types; names the app refuses or that are taken are changed (each
   * created field says the name it was asked for).
   */
  createTables?(
    secrets: Record<string, string>,
    baseRemoteId: string,
    tables: SchemaTable[],
    context?: PortCallContext,
  ): Promise<CreatedSchemaTable[]>;
  /** Schema generation: fields added to one table (by its remote id), in request order. */
  addFields?(
    secrets: Record<string, string>,
    tableRemoteId: string,
    columns: SchemaColumn[],
    context?: PortCallContext,
  ): Promise<CreatedSchemaField[]>;
  exchangeOAuthCode?(input: {
    code: string;
    codeVerifier: string;
    redirectUri: string;
  }): Promise<Record<string, string>>;
};

/** A connection that does not work, with a message a user can act on. */
export class ConnectionProblem extends Error {
  constructor(
    readonly code:
      | 'auth_invalid'
      | 'permission_denied'
      | 'not_found'
      | 'transient'
      | 'validation'
      | 'rate_limited',
    readonly userFacingMessage: string,
  ) {
    super(userFacingMessage);
    this.name = 'ConnectionProblem';
  }
}

export type ConnectorRegistry = {
  get(type: ConnectorType): ConnectorPort | undefined;
};
