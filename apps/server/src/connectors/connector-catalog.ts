import type { ConnectorInfo, ConnectorType, RequiredItem } from '@lockstep/contract';
import type { ConnectorRegistry } from './connector-port';

const item = (
  name: string,
  label: string,
  kind: RequiredItem['kind'],
  extra: Partial<Omit<RequiredItem, 'name' | 'label' | 'kind'>> = {},
): RequiredItem => ({ name, label, kind, secret: kind === 'password', optional: false, ...extra });

const NOT_BUILT = 'Coming soon: this connector is not built yet.';

type Entry = Omit<ConnectorInfo, 'available' | 'unavailableReason'>;

/**
 * The thirteen connectors as users choose them (GET /rest/connector-info). A connector is available
 * once it is registered (built, its conformance suite passing); until then it is listed but cannot be chosen.
 */
const CATALOG: Entry[] = [
  {
    displayName: 'PostgreSQL',
    connectorType: 'postgresql',
    auth: {
      type: 'connection_items',
      requiredItems: [
        item('connectionString', 'Connection string', 'password', {
          placeholder: 'postgres://user:password@host:5432/database',
          help: 'Or leave empty and fill in host, port, database, user and password.',
          optional: true,
        }),
        item('host', 'Host', 'text', { optional: true }),
        item('port', 'Port', 'number', { optional: true, placeholder: '5432' }),
        item('database', 'Database', 'text', { optional: true }),
        item('user', 'User', 'text', { optional: true }),
        item('password', 'Password', 'password', { optional: true }),
        item('ssl', 'TLS', 'select', {
          optional: true,
          options: ['disable', 'require', 'verify-full', 'verify-ca', 'no-verify'],
          placeholder: 'As the connection string says (none by default)',
          help: 'require and verify-full check the certificate and the host name; verify-ca the certificate only; no-verify encrypts without checking anything (not safe on networks you do not control).',
        }),
        item('sslRootCert', 'CA certificate (PEM)', 'multiline', {
          optional: true,
          placeholder: '-----BEGIN CERTIFICATE-----',
          help: "Only if the server's certificate chains to a CA of your own (not one your system knows).",
        }),
        item('changeCapture', 'Change capture', 'select', {
          optional: true,
          options: ['triggers', 'logical'],
          placeholder: 'triggers',
          help: 'Triggers (the default) work on any server. Logical decoding adds nothing to your writes; it needs wal_level = logical and a user with REPLICATION.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: false,
  },
  {
    displayName: 'Supabase',
    connectorType: 'supabase',
    // Available once registered: OAuth to the Management API, or a personal access token instead.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('accessToken', 'Personal access token', 'password', {
          optional: true,
          placeholder: 'sbp_…',
          help: 'Instead of signing in with Supabase: a token from supabase.com/dashboard/account/tokens.',
        }),
        // TLS to the project's database, as PostgreSQL's items (no disable: Supabase requires TLS).
        item('ssl', 'Database TLS', 'select', {
          optional: true,
          options: ['verify-full', 'no-verify'],
          placeholder: 'verify-full (checks the certificate)',
          help: "verify-full (the default) checks the database's certificate and host name, against Supabase's root CA. no-verify: Encrypt without checking the certificate (not safe on networks you do not control).",
        }),
        item('sslRootCert', 'CA certificate (PEM)', 'multiline', {
          optional: true,
          placeholder: '-----BEGIN CERTIFICATE-----',
          help: "Supabase's root CA, unless this server's administrator set it up (LOCKSTEP_SUPABASE_ROOT_CA): in the Supabase dashboard, Project Settings > Database > SSL Configuration > Download certificate, then paste the file's text here.",
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
  {
    displayName: 'Airtable',
    connectorType: 'airtable',
    // Available once registered: sign in with Airtable (OAuth with PKCE), or a personal access token.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('apiKey', 'Personal access token', 'password', {
          optional: true,
          placeholder: 'pat…',
          help: 'Instead of signing in with Airtable: a token from airtable.com/create/tokens with the scopes data.records:read, data.records:write and schema.bases:read (and schema.bases:write to let Lockstep create tables and fields), and access to your bases.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: false,
  },
  {
    displayName: 'Google Sheets',
    connectorType: 'google_sheets',
    // Available once registered: an OAuth access token (sign in with Google; the sandbox gives one).
    // A base is a spreadsheet, chosen from the account's spreadsheets.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('accessToken', 'Access token', 'password', {
          optional: true,
          placeholder: 'ya29.…',
          help: 'An OAuth access token with the drive.file (or spreadsheets) scope, as Google sign-in gives.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
  {
    displayName: 'Notion',
    connectorType: 'notion',
    // Sign in with Notion (a public integration, when this server has one) or an internal token.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('internalToken', 'Internal integration token', 'password', {
          optional: true,
          placeholder: 'ntn_…',
          help: 'From notion.so/profile/integrations; share your databases with the integration (••• → Connections).',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: false,
  },
  {
    displayName: 'HubSpot',
    connectorType: 'hubspot',
    // Sign in with HubSpot (this server's app, when it has one) or a private app token.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('accessToken', 'Private app token', 'password', {
          optional: true,
          placeholder: 'pat-na1-…',
          help: 'Instead of signing in with HubSpot: in HubSpot, Settings > Integrations > Private apps > Create a private app, with the scopes crm.objects.contacts.read/write, crm.objects.companies.read/write, crm.objects.deals.read/write and crm.schemas.contacts.read, crm.schemas.companies.read, crm.schemas.deals.read; then copy its access token.',
        }),
        item('clientSecret', 'Client secret (for webhooks)', 'password', {
          optional: true,
          help: "Optional: changes in HubSpot then reach the sync within seconds instead of at its next check. In the private app's Webhooks tab, set the target URL that Lockstep shows on the sync's developer tools page and subscribe to contact, company and deal creation, deletion, merge and property changes; copy the client secret from the app's Auth tab.",
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: false,
  },
  {
    displayName: 'Salesforce',
    connectorType: 'salesforce',
    // Available once registered: sign in with Salesforce (OAuth with PKCE, when this server has a
    // connected app), or a session's access token with its org's address.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('accessToken', 'Access token', 'password', {
          optional: true,
          placeholder: '00D…!…',
          help: "Instead of signing in with Salesforce: a session's access token (for example from `sf org display`), with the org's instance URL below. Lockstep syncs Accounts, Contacts, Leads, Opportunities and custom objects with that user's permissions; the user needs API Enabled. Each sync uses the org's daily API allocation (Setup > Company Information shows it): large first syncs go through Bulk API 2.0 to spare it.",
        }),
        item('instanceUrl', 'Instance URL', 'text', {
          optional: true,
          placeholder: 'https://yourcompany.my.salesforce.com',
          help: "Your org's My Domain address, as in the browser's address bar when you are signed in to Salesforce (Setup > My Domain).",
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
  {
    displayName: 'Pipedrive',
    connectorType: 'pipedrive',
    // Sign in with Pipedrive (this server's app, when it has one) or the company's API token.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('apiToken', 'API token', 'password', {
          optional: true,
          placeholder: '40 hexadecimal characters',
          help: 'Instead of signing in with Pipedrive: in Pipedrive, Settings > Personal preferences > API, then copy your personal API token. Lockstep reads and writes persons, organizations and deals (custom fields included) with the permissions of that user.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: false,
  },
  {
    displayName: 'Attio',
    connectorType: 'attio',
    // Sign in with Attio (this server's app, when it has one) or an API key.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('apiKey', 'API key', 'password', {
          optional: true,
          help: 'Instead of signing in with Attio: in Attio, Workspace settings > Developers > New access token, with Records read-write, Object configuration read and Webhooks read-write (changes in Attio then wake the sync at once), and List entries read-write with List configuration read for lists; then copy its token. Lockstep syncs the objects (People, Companies, Deals and custom objects) and the lists.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
  {
    displayName: 'Affinity',
    connectorType: 'affinity',
    // Available once registered: a user's API key (sign in with Affinity is not built yet).
    auth: {
      type: 'connection_items',
      requiredItems: [
        item('apiKey', 'API key', 'password', {
          help: 'In Affinity: Settings > API > Generate an API key, then copy it. Lockstep reads and writes people, companies, opportunities and list entries (with their fields) with the permissions of the user the key belongs to; every request counts against that user’s 900 a minute and the account’s monthly API budget.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
  {
    displayName: 'Webflow',
    connectorType: 'webflow',
    // Sign in with Webflow (this server's app, when it has one) or a site token. A base is a site;
    // its tables are the site's CMS collections.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('apiToken', 'Site token', 'password', {
          optional: true,
          help: 'Instead of signing in with Webflow: in Webflow, Site settings > Apps & integrations > API access > Generate API token, with CMS read and write and Sites read and write (Sites write lets Lockstep publish the site when you ask). Lockstep syncs the site’s CMS collections; every request counts against the site plan’s 60 (or 120) a minute.',
        }),
        item('publish', 'Publishing', 'select', {
          optional: true,
          options: ['staged', 'live'],
          placeholder: 'staged',
          help: 'Staged (the default): items Lockstep writes wait for the next site publish (the Publish button on the sync’s overview, or Webflow’s). Live: each item Lockstep writes is published at once.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
  {
    displayName: 'Stripe',
    connectorType: 'stripe',
    // Sign in with Stripe (Stripe Connect, when this server is a platform) or a secret or restricted key.
    auth: {
      type: 'oauth2',
      requiredItems: [
        item('secretKey', 'Secret or restricted key', 'password', {
          optional: true,
          placeholder: 'sk_live_… or rk_live_…',
          help: 'Instead of signing in with Stripe: in Stripe, Developers > API keys. A restricted key is safest: create one with Write access to Customers, Products and Prices (Coupons are under Billing), and Read access to Subscriptions, Invoices and Events (Lockstep reads changes from events). A test key (sk_test_… or rk_test_…) syncs your test-mode data; the connection shows which mode it is in.',
        }),
        item('webhookSecret', 'Webhook signing secret', 'password', {
          optional: true,
          placeholder: 'whsec_…',
          help: "Optional: changes in Stripe then reach the sync within seconds instead of at its next check. In Stripe's Developers > Webhooks, add an endpoint with the URL that Lockstep shows on the sync's developer tools page, listening to customer, product, price, coupon, subscription and invoice events; copy its signing secret here.",
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: false,
  },
  {
    displayName: 'Memberstack',
    connectorType: 'memberstack',
    auth: {
      type: 'connection_items',
      requiredItems: [
        item('secretKey', 'Secret key', 'password', {
          placeholder: 'sk_sb_… (test mode) or sk_… (live)',
          help: 'In the Memberstack dashboard: Dev Tools > API keys, copy the secret key. A test mode key (sk_sb_…) syncs the app’s test members, a live key (sk_…) its real members; the connection shows which. Lockstep reads and writes members (email, custom fields, metadata) and reads plans; Memberstack allows 25 requests a second. A member made by Lockstep gets a random password (they sign in by a passwordless link or reset it), and an email change is written once it has stayed the same for a minute, since members sign in with it.',
        }),
        item('webhookSecret', 'Webhook signing secret', 'password', {
          optional: true,
          placeholder: 'whsec_…',
          help: 'Optional, for changes to reach Lockstep at once: in Dev Tools > Webhooks, add an endpoint with the address Lockstep shows on this app’s base, choose the member events, and paste the endpoint’s signing secret here. Without it Lockstep finds changes when it polls.',
        }),
        item('customFields', 'Custom field keys', 'text', {
          optional: true,
          placeholder: 'first-name, company',
          help: 'Optional: the keys of custom fields no member has filled in yet (Memberstack’s API lists only the values members hold), comma-separated.',
        }),
      ],
    },
    requiredBaseExtras: [],
    isInBeta: true,
  },
];

/**
 * Lockstep's own connector for the user's blended tables: not offered in the catalog (its one
 * connection is made by Lockstep with the first blended table), and it takes no items.
 */
const BLENDED: Entry = {
  displayName: 'Blended tables',
  connectorType: 'blended',
  auth: { type: 'connection_items', requiredItems: [] },
  requiredBaseExtras: [],
  isInBeta: true,
};

export function connectorCatalog(registry: ConnectorRegistry): ConnectorInfo[] {
  return CATALOG.map((info) => {
    const port = registry.get(info.connectorType);
    const built = port !== undefined;
    const signIn =
      info.auth.type === 'oauth2' && port ? { signInAvailable: port.signInConfigured !== false } : {};
    return {
      ...info,
      auth: { ...info.auth, ...signIn },
      available: built,
      unavailableReason: built ? null : NOT_BUILT,
    };
  });
}

/** The static description of one connector (what it needs to connect). */
export function connectorInfo(type: ConnectorType): Entry {
  if (type === 'blended') return BLENDED;
  const info = CATALOG.find((c) => c.connectorType === type);
  if (!info) throw new Error(`No connector ${type}`);
  return info;
}
