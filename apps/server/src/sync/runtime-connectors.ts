import type { TableConnector } from '@lockstep/connectors';
import { type AffinitySettings, createAffinityRuntimeConnector } from '@lockstep/connectors/affinity';
import { type AirtableSettings, createAirtableRuntimeConnector } from '@lockstep/connectors/airtable';
import { type AttioSettings, createAttioRuntimeConnector } from '@lockstep/connectors/attio';
import {
  createGoogleSheetsRuntimeConnector,
  type GoogleSheetsSettings,
} from '@lockstep/connectors/google-sheets';
import { createHubSpotRuntimeConnector, type HubSpotSettings } from '@lockstep/connectors/hubspot';
import {
  createMemberstackRuntimeConnector,
  type MemberstackSettings,
} from '@lockstep/connectors/memberstack';
import { createNotionRuntimeConnector, type NotionSettings } from '@lockstep/connectors/notion';
import { createPipedriveRuntimeConnector, type PipedriveSettings } from '@lockstep/connectors/pipedrive';
import {
  createPostgresqlConnector,
  type PgErrorOptions,
  type PostgresqlConnector,
} from '@lockstep/connectors/postgresql';
import { createSalesforceRuntimeConnector, type SalesforceSettings } from '@lockstep/connectors/salesforce';
import { createStripeRuntimeConnector, type StripeSettings } from '@lockstep/connectors/stripe';
import {
  SUPABASE_DATABASE_ERRORS,
  type SupabaseTls,
  supabaseDatabaseItems,
} from '@lockstep/connectors/supabase';
import { createWebflowRuntimeConnector, type WebflowSettings } from '@lockstep/connectors/webflow';

/**
 * The connectors a run uses, by connector type, built for one connection's decrypted credentials.
 * Connectors register here as they land; tests register in-memory apps.
 */
/** Seals a connection's renewed items (OAuth tokens a run refreshed) back into the connection. */
export type SaveConnectionItems = (items: Record<string, string>) => Promise<void>;

export type RuntimeConnectors = {
  forConnection(
    type: string,
    secrets: Record<string, string>,
    save?: SaveConnectionItems,
  ): TableConnector | undefined;
};

type Factory = (secrets: Record<string, string>, save?: SaveConnectionItems) => TableConnector;

/**
 * Airtable in runs: the same settings as its port (a `baseUrl` item only for the sandbox or a local
 * server; the rate limit shared through the pool). One connector per connection's items is kept, so
 * its schema cache and the creates it made (idempotency keys) last across a run's chunks.
 */
export function airtableRuntimeFactory(
  settings: AirtableSettings,
  extra: { deleteSweepIntervalMs?: number } = {},
): Factory {
  const cache = new Map<string, TableConnector>();
  return (secrets, save) => {
    const key = JSON.stringify(Object.entries(secrets).sort());
    let c = cache.get(key);
    if (!c) {
      if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
      c = createAirtableRuntimeConnector(settings, secrets, { ...extra, ...(save ? { save } : {}) });
      cache.set(key, c);
    }
    return c;
  };
}

/** One connector per connection's items, kept across a run's chunks (caches, idempotency keys). */
function cachedFactory(
  make: (secrets: Record<string, string>, save?: SaveConnectionItems) => TableConnector,
): Factory {
  const cache = new Map<string, TableConnector>();
  return (secrets, save) => {
    const key = JSON.stringify(Object.entries(secrets).sort());
    let c = cache.get(key);
    if (!c) {
      if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
      c = make(secrets, save);
      cache.set(key, c);
    }
    return c;
  };
}

/**
 * Notion in runs: the settings of its port; the 3 requests per second shared through the pool.
 * OAuth tokens it renews (the refresh token rotates) go to the connection through `save`.
 */
export function notionRuntimeFactory(settings: NotionSettings): Factory {
  return cachedFactory((secrets, save) => createNotionRuntimeConnector(settings, secrets, save));
}

/**
 * Google Sheets in runs: the settings of its port; the per-user quota shared through the pool.
 * Access tokens it renews go to the connection through `save`.
 */
export function googleSheetsRuntimeFactory(settings: GoogleSheetsSettings): Factory {
  return cachedFactory((secrets, save) => createGoogleSheetsRuntimeConnector(settings, secrets, save));
}

/**
 * HubSpot in runs: a private app token or OAuth tokens per connection; the 100 requests per 10 s per
 * token shared through the pool. One connector per connection's items, so the creates it made
 * (idempotency keys) and its property cache last across a run's chunks. Access tokens it renews go
 * to the connection through `save`.
 */
export function hubspotRuntimeFactory(settings: HubSpotSettings): Factory {
  return cachedFactory((secrets, save) => createHubSpotRuntimeConnector(settings, secrets, save));
}

/**
 * Attio in runs: an API key per connection; the 100 reads and 25 writes per second per token shared
 * through the pool. One connector per connection's items, so the creates it made (idempotency keys)
 * and its attribute cache last across a run's chunks.
 */
export function attioRuntimeFactory(settings: AttioSettings): Factory {
  return cachedFactory((secrets) => createAttioRuntimeConnector(settings, secrets));
}

/**
 * Pipedrive in runs: the company's API token or OAuth tokens per connection; the 2 s burst window per
 * token shared through the pool. One connector per connection's items, so the creates it made
 * (idempotency keys) and its field cache last across a run's chunks. Access tokens it renews go to
 * the connection through `save`.
 */
export function pipedriveRuntimeFactory(settings: PipedriveSettings): Factory {
  return cachedFactory((secrets, save) => createPipedriveRuntimeConnector(settings, secrets, save));
}

/**
 * Affinity in runs: a user's API key per connection; the 900 requests a minute per user shared
 * through the pool. One connector per connection's items, so the creates it made (idempotency keys)
 * and its field cache last across a run's chunks.
 */
export function affinityRuntimeFactory(settings: AffinitySettings): Factory {
  return cachedFactory((secrets) => createAffinityRuntimeConnector(settings, secrets));
}

/**
 * Salesforce in runs: an OAuth session per connection (access token, refresh token, instance URL);
 * sessions it renews go to the connection through `save`. One connector per connection's items, so
 * the creates it made (idempotency keys), its describe cache and a bulk query's results in hand
 * last across a run's chunks.
 */
export function salesforceRuntimeFactory(settings: SalesforceSettings): Factory {
  return cachedFactory((secrets, save) => createSalesforceRuntimeConnector(settings, secrets, save));
}

/**
 * Stripe in runs: a secret or restricted key per connection; the 25 (test) or 100 (live) requests
 * per second per key shared through the pool. One connector per connection's items, kept across a
 * run's chunks.
 */
export function stripeRuntimeFactory(settings: StripeSettings): Factory {
  return cachedFactory((secrets) => createStripeRuntimeConnector(settings, secrets));
}

/**
 * Memberstack in runs: an app's secret key per connection; the 25 requests a second per key shared
 * through the pool. One connector per connection's items, so the writes it made (idempotency keys)
 * and the email changes waiting to be stable last across a run's chunks and its retries.
 */
export function memberstackRuntimeFactory(settings: MemberstackSettings): Factory {
  return cachedFactory((secrets) => createMemberstackRuntimeConnector(settings, secrets));
}

/**
 * Webflow in runs: a site token per connection; the 60 requests a minute per token shared through the
 * pool. One connector per connection's items, so the creates it made (idempotency keys) and its
 * collection cache last across a run's chunks; the connection's `publish` item says whether written
 * items are published at once ('live') or wait for the next site publish ('staged').
 */
export function webflowRuntimeFactory(settings: WebflowSettings): Factory {
  return cachedFactory((secrets) => createWebflowRuntimeConnector(settings, secrets));
}

export function createRuntimeConnectors(
  factories: Record<string, Factory> = {},
  options: {
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
    /** Supabase's root CA (LOCKSTEP_SUPABASE_ROOT_CA), for TLS to the projects' databases. */
    supabase?: SupabaseTls;
    /** Stored PostgreSQL items to the items to connect with, at each use (demo/embedded-items.ts). */
    resolveItems?: (items: Record<string, string>) => Record<string, string>;
  } = {},
): RuntimeConnectors & {
  register: (type: string, factory: Factory) => void;
  close: () => Promise<void>;
} {
  // One pool per database, kept across runs (a run must not open new connections every chunk).
  const pools = new Map<string, PostgresqlConnector>();
  const postgresql = (stored: Record<string, string>, kind?: { type: string; errors: PgErrorOptions }) => {
    // Keyed by the resolved address: a demo database's server on a new port gets a new pool.
    const secrets = options.resolveItems ? options.resolveItems(stored) : stored;
    const key = JSON.stringify([kind?.type ?? 'postgresql', ...Object.entries(secrets).sort()]);
    let c = pools.get(key);
    if (!c) {
      c = createPostgresqlConnector(secrets, kind?.errors);
      pools.set(key, c);
    }
    return c;
  };
  const all: Record<string, Factory> = {
    postgresql: (secrets) => postgresql(secrets),
    // Supabase's data path is PostgreSQL, as the role Lockstep set up in the project; a certificate
    // that does not check out says how to give Supabase's root CA.
    supabase: (secrets) =>
      postgresql(supabaseDatabaseItems(secrets, options.supabase) as Record<string, string>, {
        type: 'supabase',
        errors: SUPABASE_DATABASE_ERRORS,
      }),
    airtable: airtableRuntimeFactory(options.airtable ?? {}),
    hubspot: hubspotRuntimeFactory(options.hubspot ?? {}),
    attio: attioRuntimeFactory(options.attio ?? {}),
    pipedrive: pipedriveRuntimeFactory(options.pipedrive ?? {}),
    affinity: affinityRuntimeFactory(options.affinity ?? {}),
    salesforce: salesforceRuntimeFactory(options.salesforce ?? {}),
    stripe: stripeRuntimeFactory(options.stripe ?? {}),
    memberstack: memberstackRuntimeFactory(options.memberstack ?? {}),
    webflow: webflowRuntimeFactory(options.webflow ?? {}),
    notion: notionRuntimeFactory(options.notion ?? {}),
    google_sheets: googleSheetsRuntimeFactory(options.googleSheets ?? {}),
    ...factories,
  };
  return {
    forConnection: (type, secrets, save) => all[type]?.(secrets, save),
    register: (type, factory) => {
      all[type] = factory;
    },
    close: async () => {
      await Promise.all([...pools.values()].map((p) => p.end()));
      pools.clear();
    },
  };
}
