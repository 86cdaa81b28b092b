import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PLAN_TIER_NAMES, tierOfProductType } from '@lockstep/contract';
import { z } from 'zod';

export const ROLES = ['api', 'worker', 'all'] as const;

/** A Google Tag Manager web container id, as the tag manager shows it: GTM- and letters or digits. */
export const GTM_ID = /^GTM-[A-Z0-9]{4,12}$/;
export type Role = (typeof ROLES)[number];

const isHttpUrl = (v: string) => /^https?:\/\/[^/]/i.test(v);

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  LOCKSTEP_DATA_DIR: z.string().optional(),
  LOCKSTEP_ENV: z.enum(['local', 'test', 'staging', 'production']).default('local'),
  LOCKSTEP_PUBLIC_URL: z.string().url().optional(),
  LOCKSTEP_TRUSTED_ORIGINS: z.string().default(''),
  LOCKSTEP_STAFF_EMAILS: z.string().default(''),
  LOCKSTEP_SECRET_KEY: z.string().optional(),
  BETTER_AUTH_SECRET: z.string().optional(),
  LOCKSTEP_SUPPORT_EMAIL: z.string().default('support@lockstep.dev'),
  LOCKSTEP_PRICING_URL: z.string().default('https://lockstep.dev/pricing'),
  LOCKSTEP_INTERCOM_SECRET: z.string().optional(),
  // Product analytics (PostHog) and the support chat (Intercom, or Chatwoot for self-hosters): off unless set.
  LOCKSTEP_POSTHOG_KEY: z.string().optional(),
  // Both reach the content security policy as sources: http(s) addresses only.
  LOCKSTEP_POSTHOG_HOST: z.string().url().refine(isHttpUrl, 'must be an http(s) address').optional(),
  // Google Tag Manager (spec: the tag manager runs in staging and production only): a container id.
  LOCKSTEP_GTM_ID: z
    .string()
    .trim()
    .refine((v) => v === '' || GTM_ID.test(v), 'must be a Google Tag Manager container id, like GTM-AB12CD3')
    .optional(),
  LOCKSTEP_INTERCOM_APP_ID: z.string().optional(),
  LOCKSTEP_CHATWOOT_WEBSITE_TOKEN: z.string().optional(),
  LOCKSTEP_CHATWOOT_BASE_URL: z
    .string()
    .trim()
    .url()
    .refine(isHttpUrl, 'must be an http(s) address')
    .optional(),
  LOCKSTEP_OIDC_PROVIDERS: z.string().default(''),
  LOCKSTEP_WEB_DIST: z.string().optional(),
  LOCKSTEP_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOCKSTEP_SUPABASE_API_URL: z.string().url().default('https://api.supabase.com'),
  LOCKSTEP_SUPABASE_CLIENT_ID: z.string().optional(),
  LOCKSTEP_SUPABASE_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_SUPABASE_ROOT_CA: z.string().optional(),
  LOCKSTEP_AIRTABLE_API_URL: z.string().url().default('https://api.airtable.com'),
  LOCKSTEP_HUBSPOT_API_URL: z.string().url().default('https://api.hubapi.com'),
  LOCKSTEP_HUBSPOT_CLIENT_ID: z.string().optional(),
  LOCKSTEP_HUBSPOT_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_HUBSPOT_OAUTH_URL: z.string().url().default('https://app.hubspot.com'),
  LOCKSTEP_ATTIO_API_URL: z.string().url().default('https://api.attio.com'),
  // Sign in with Attio: this server's Attio app and Attio's OAuth host (authorize page and token endpoint).
  LOCKSTEP_ATTIO_CLIENT_ID: z.string().optional(),
  LOCKSTEP_ATTIO_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_ATTIO_OAUTH_URL: z.string().url().default('https://app.attio.com'),
  LOCKSTEP_PIPEDRIVE_API_URL: z.string().url().default('https://api.pipedrive.com'),
  // Sign in with Pipedrive: this server's Pipedrive app and Pipedrive's OAuth server.
  LOCKSTEP_PIPEDRIVE_CLIENT_ID: z.string().optional(),
  LOCKSTEP_PIPEDRIVE_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_PIPEDRIVE_OAUTH_URL: z.string().url().default('https://oauth.pipedrive.com'),
  LOCKSTEP_AFFINITY_API_URL: z.string().url().default('https://api.affinity.co'),
  LOCKSTEP_SALESFORCE_API_URL: z.string().url().default('https://login.salesforce.com'),
  LOCKSTEP_SALESFORCE_CLIENT_ID: z.string().optional(),
  LOCKSTEP_SALESFORCE_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_STRIPE_API_URL: z.string().url().default('https://api.stripe.com'),
  LOCKSTEP_STRIPE_CONNECT_CLIENT_ID: z.string().optional(),
  LOCKSTEP_STRIPE_CONNECT_SECRET_KEY: z.string().optional(),
  LOCKSTEP_STRIPE_CONNECT_URL: z.string().url().default('https://connect.stripe.com'),
  LOCKSTEP_MEMBERSTACK_API_URL: z.string().url().default('https://admin.memberstack.com'),
  /** How long a member's email change must stay the same before Lockstep writes it to Memberstack. */
  LOCKSTEP_MEMBERSTACK_EMAIL_STABLE_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  LOCKSTEP_WEBFLOW_API_URL: z.string().url().default('https://api.webflow.com'),
  LOCKSTEP_WEBFLOW_CLIENT_ID: z.string().optional(),
  LOCKSTEP_WEBFLOW_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_WEBFLOW_OAUTH_URL: z.string().url().default('https://webflow.com'),
  LOCKSTEP_STRIPE_SECRET_KEY: z.string().optional(),
  LOCKSTEP_STRIPE_WEBHOOK_SECRET: z.string().optional(),
  LOCKSTEP_STRIPE_PRICES: z.string().optional(),
  LOCKSTEP_AIRTABLE_OAUTH_URL: z.string().url().default('https://airtable.com'),
  LOCKSTEP_AIRTABLE_CLIENT_ID: z.string().optional(),
  LOCKSTEP_AIRTABLE_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_NOTION_CLIENT_ID: z.string().optional(),
  LOCKSTEP_NOTION_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_NOTION_API_URL: z.string().url().optional(),
  LOCKSTEP_GOOGLE_CLIENT_ID: z.string().optional(),
  LOCKSTEP_GOOGLE_CLIENT_SECRET: z.string().optional(),
  LOCKSTEP_GOOGLE_API_URL: z.string().url().optional(),
  LOCKSTEP_SANDBOX: z.enum(['0', '1', '']).optional(),
  LOCKSTEP_DEMO: z.enum(['0', '1', '']).optional(),
  LOCKSTEP_PG_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  LOCKSTEP_PG_QUERY_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(60_000),
  LOCKSTEP_AUTH_RATE_LIMIT: z.enum(['on', 'off', '1', '0', 'true', 'false', '']).default('on'),
  LOCKSTEP_AUTH_RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL: z.coerce.number().int().min(1).max(100_000).default(10),
  LOCKSTEP_AUTH_RATE_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(50),
  LOCKSTEP_TRUST_PROXY: z.string().default(''),
  LOCKSTEP_SMTP_URL: z
    .string()
    .refine((v) => v === '' || /^smtps?:\/\/[^/]/i.test(v), {
      message: 'must be an smtp:// or smtps:// URL (smtps://user:password@host:465)',
    })
    .optional(),
  LOCKSTEP_MAIL_FROM: z.string().optional(),
  LOCKSTEP_EMAIL_VERIFICATION: z.enum(['on', 'off', '']).optional(),
  /** 1: the embedded PostgreSQL loads pg_stat_statements (the benches print where its time went). */
  LOCKSTEP_EMBEDDED_STATEMENT_STATS: z.enum(['0', '1', '']).optional(),
  LOCKSTEP_HISTORY_RETENTION_DAYS: z
    .union([z.literal(''), z.coerce.number().int().min(1).max(3650)])
    .optional(),
});

export type Config = {
  port: number;
  host: string;
  role: Role;
  databaseUrl: string | undefined;
  dataDir: string;
  /** The embedded PostgreSQL keeps statement statistics (pg_stat_statements), for profiling. */
  embeddedStatementStats: boolean;
  environment: 'local' | 'test' | 'staging' | 'production';
  publicUrl: string;
  trustedOrigins: string[];
  staffEmails: Set<string>;
  secretKey: string | undefined;
  authSecret: string | undefined;
  supportEmail: string;
  pricingUrl: string;
  intercomSecret: string | undefined;
  /**
   * Product analytics through PostHog: the project key and its host (PostHog Cloud US by default, or a
   * self-hosted instance); null without a key. The web app starts it only in staging and production.
   */
  analytics: { posthogKey: string; posthogHost: string } | null;
  /**
   * Google Tag Manager: the container id (LOCKSTEP_GTM_ID, `GTM-…`); null when not set. The web app
   * loads it only in staging and production, and the content security policy allows it only then.
   */
  tagManager: { gtmId: string } | null;
  /**
   * The support chat the web app loads: Intercom (its app id; identity verified with `intercomHash`),
   * else Chatwoot (a website inbox's token and the instance's address); null when neither is set.
   */
  supportChat: SupportChatConfig;
  oidcProviders: string[];
  webDist: string;
  logLevel: string;
  /**
   * Supabase's Management API and this server's OAuth app there (a simulator in tests); `rootCa`,
   * Supabase's root CA (PEM, read from LOCKSTEP_SUPABASE_ROOT_CA at start), which the certificates
   * of Supabase's databases chain to.
   */
  supabase: {
    apiUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    rootCa: string | undefined;
  };
  /** Airtable's API and OAuth hosts and this server's OAuth integration (the simulator in tests). */
  airtable: {
    apiUrl: string;
    oauthUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
  };
  /**
   * HubSpot's API host (the simulator in tests; token calls go there too), and this server's HubSpot
   * app for sign in with HubSpot: its client and the install page's host (app.hubspot.com).
   */
  hubspot: {
    apiUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    oauthUrl: string;
  };
  /**
   * Attio's API host (the simulator in tests), and this server's Attio app for sign in with Attio:
   * its client and Attio's OAuth host (app.attio.com: the authorize page and the token endpoint).
   */
  attio: {
    apiUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    oauthUrl: string;
  };
  /**
   * Pipedrive's API host (the simulator in tests) for API tokens, and this server's Pipedrive app
   * for sign in with Pipedrive: its client and Pipedrive's OAuth server (oauth.pipedrive.com:
   * the authorize page and the token endpoint). Signed-in connections call their company's host.
   */
  pipedrive: {
    apiUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    oauthUrl: string;
  };
  /** Affinity's API host (the simulator in tests); connections use a user's API key. */
  affinity: { apiUrl: string };
  /**
   * Webflow's API host (the simulator in tests; the token exchange goes there too), and this
   * server's Webflow app for sign in with Webflow: its client and the authorize page's host.
   */
  webflow: {
    apiUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    oauthUrl: string;
  };
  /**
   * Salesforce's login host (OAuth; the simulator in tests) and this server's connected app (sign in
   * with Salesforce, token refresh). Data calls go to each connection's instance URL.
   */
  salesforce: { apiUrl: string; clientId: string | undefined; clientSecret: string | undefined };
  /**
   * Stripe's API host (the simulator in tests); connections use secret or restricted keys, or sign
   * in with Stripe Connect: this server's platform (its `ca_` client id and platform secret key) and
   * the OAuth host (connect.stripe.com). Not the billing account (`billing`).
   */
  stripe: {
    apiUrl: string;
    connectClientId: string | undefined;
    connectSecretKey: string | undefined;
    connectUrl: string;
  };
  /**
   * Memberstack's Admin API host (the simulator in tests); connections use an app's secret key. An
   * email change is written once it has stayed the same `emailStableMs`.
   */
  memberstack: { apiUrl: string; emailStableMs: number };
  /**
   * Lockstep's own billing through Stripe (services/billing.ts); null when payments are not set up
   * on this server (then trials and staff assignment are the only plans). `prices` maps a product
   * type (a tier such as `pro`, or a versioned code such as `pro_v2`) to its recurring price id.
   */
  billing: StripeConfig | null;
  /**
   * This server's Google OAuth client (sign in with Google for Sheets); `apiUrl` points every Google
   * host (consent, token, Sheets, Drive) at one other server (the simulator in tests).
   */
  google: { clientId: string | undefined; clientSecret: string | undefined; apiUrl: string | undefined };
  /** This server's Notion public integration (sign in with Notion); `apiUrl` for the simulator in tests. */
  notion: { clientId: string | undefined; clientSecret: string | undefined; apiUrl: string | undefined };
  /**
   * Sandbox apps (simulators): on by LOCKSTEP_SANDBOX=1, off by 0; unset means on for the embedded
   * default in local and test mode only.
   */
  sandbox: boolean | undefined;
  /**
   * Demo databases outside local and test mode (LOCKSTEP_DEMO=1): each user then gets demo
   * databases of their own, reached through a role that can touch nothing else. Off by default there.
   */
  demo: boolean;
  /**
   * Time limits on the users' PostgreSQL databases as the REST side reaches them (checking a
   * connection, listing schemas, discovering tables): connecting, and each query.
   */
  postgresTimeouts: { connectMs: number; queryMs: number };
  /** Days of sync history every user keeps, whatever their plan; unset means each plan's own. */
  historyRetentionDays: number | undefined;
  /**
   * Limits on sign-in, sign-up, password reset and the public temporary-connection route, per email
   * and per client address, each within one sliding window (shared by every api process).
   */
  authRateLimit: { enabled: boolean; windowMs: number; perEmail: number; perAddress: number };
  /**
   * Whom to believe about the client's address (X-Forwarded-For): nobody by default (the socket's
   * address); `true`, a number of hops, or a list of proxy addresses/CIDRs (Fastify's trustProxy).
   */
  trustProxy: boolean | number | string[];
  /**
   * Outgoing mail (LOCKSTEP_SMTP_URL, LOCKSTEP_MAIL_FROM) and LOCKSTEP_EMAIL_VERIFICATION (`on`,
   * `off` or unset); emailVerificationMode in auth/email-verification.ts decides from these.
   */
  mail: { smtpUrl: string | undefined; from: string | undefined; verification: 'on' | 'off' | undefined };
};

export type SupportChatConfig =
  | { kind: 'intercom'; appId: string }
  | { kind: 'chatwoot'; websiteToken: string; baseUrl: string }
  | null;

export const DEFAULT_POSTHOG_HOST = 'https://us.i.posthog.com';

/**
 * The support chat from the environment: Intercom when its app id is set, else Chatwoot when both its
 * website token and base URL are; one of the two Chatwoot settings without the other stops the server.
 */
export function supportChatOf(e: {
  LOCKSTEP_INTERCOM_APP_ID?: string | undefined;
  LOCKSTEP_CHATWOOT_WEBSITE_TOKEN?: string | undefined;
  LOCKSTEP_CHATWOOT_BASE_URL?: string | undefined;
}): SupportChatConfig {
  const appId = e.LOCKSTEP_INTERCOM_APP_ID?.trim() ?? '';
  if (appId) return { kind: 'intercom', appId };
  const websiteToken = e.LOCKSTEP_CHATWOOT_WEBSITE_TOKEN?.trim() ?? '';
  const baseUrl = e.LOCKSTEP_CHATWOOT_BASE_URL?.trim().replace(/\/$/, '') ?? '';
  if (!websiteToken && !baseUrl) return null;
  if (!websiteToken || !baseUrl)
    throw new Error(
      'The Chatwoot support chat needs LOCKSTEP_CHATWOOT_WEBSITE_TOKEN and LOCKSTEP_CHATWOOT_BASE_URL together, or neither.',
    );
  return { kind: 'chatwoot', websiteToken, baseUrl };
}

export type StripeConfig = {
  secretKey: string;
  webhookSecret: string;
  apiUrl: string;
  prices: Record<string, string>;
};

/**
 * LOCKSTEP_STRIPE_PRICES: `tier=price_id,...` (for example `starter=price_123,pro=price_456`). A key
 * is a tier or a versioned product type (`pro_v2`); a key that is neither stops the server.
 */
export function parseStripePrices(value: string): Record<string, string> {
  const prices: Record<string, string> = {};
  for (const part of value.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : entry.slice(0, eq).trim().toLowerCase();
    const price = eq < 0 ? '' : entry.slice(eq + 1).trim();
    if (!key || !price || /\s/.test(price))
      throw new Error(`LOCKSTEP_STRIPE_PRICES: "${entry}" is not tier=price_id (for example pro=price_123).`);
    if (!tierOfProductType(key))
      throw new Error(
        `LOCKSTEP_STRIPE_PRICES: "${key}" is not a plan tier (one of ${PLAN_TIER_NAMES.join(', ')}, or a version such as pro_v2).`,
      );
    prices[key] = price;
  }
  return prices;
}

/**
 * Payments are set up when the secret key, the webhook secret and at least one price are given; some
 * of them without the others stops the server, saying which are missing (a checkout whose webhooks
 * cannot be checked would take money without giving the plan).
 */
export function stripeConfigOf(e: {
  LOCKSTEP_STRIPE_SECRET_KEY?: string | undefined;
  LOCKSTEP_STRIPE_WEBHOOK_SECRET?: string | undefined;
  LOCKSTEP_STRIPE_PRICES?: string | undefined;
  LOCKSTEP_STRIPE_API_URL: string;
}): StripeConfig | null {
  const secretKey = e.LOCKSTEP_STRIPE_SECRET_KEY?.trim() ?? '';
  const webhookSecret = e.LOCKSTEP_STRIPE_WEBHOOK_SECRET?.trim() ?? '';
  const prices = parseStripePrices(e.LOCKSTEP_STRIPE_PRICES ?? '');
  const given = {
    LOCKSTEP_STRIPE_SECRET_KEY: secretKey !== '',
    LOCKSTEP_STRIPE_WEBHOOK_SECRET: webhookSecret !== '',
    LOCKSTEP_STRIPE_PRICES: Object.keys(prices).length > 0,
  };
  const missing = Object.entries(given)
    .filter(([, set]) => !set)
    .map(([name]) => name);
  if (missing.length === 3) return null;
  if (missing.length > 0)
    throw new Error(
      `Payments are half set up: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing. Set LOCKSTEP_STRIPE_SECRET_KEY, LOCKSTEP_STRIPE_WEBHOOK_SECRET and LOCKSTEP_STRIPE_PRICES together, or none of them.`,
    );
  return { secretKey, webhookSecret, apiUrl: e.LOCKSTEP_STRIPE_API_URL.replace(/\/$/, ''), prices };
}

/** LOCKSTEP_TRUST_PROXY: empty or false (off), true, a hop count, or a comma-separated list of addresses. */
export function parseTrustProxy(value: string): boolean | number | string[] {
  const v = value.trim().toLowerCase();
  if (v === '' || v === 'false' || v === '0' || v === 'off') return false;
  if (v === 'true' || v === 'on') return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * LOCKSTEP_SUPABASE_ROOT_CA: the path of a PEM file holding Supabase's root CA, read once. A file
 * that cannot be read or holds no valid certificate stops the server with what to do (rather than
 * every Supabase connection failing later on its certificate).
 */
export function readSupabaseRootCa(file: string | undefined): string | undefined {
  if (!file?.trim()) return undefined;
  const fix =
    "Give the path of Supabase's root CA certificate (PEM), downloaded once from Supabase's documentation or dashboard (Project Settings > Database > SSL Configuration > Download certificate), or unset the variable.";
  let text: string;
  try {
    text = readFileSync(file.trim(), 'utf8');
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`LOCKSTEP_SUPABASE_ROOT_CA: cannot read ${file.trim()} (${why}). ${fix}`);
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0)
    throw new Error(`LOCKSTEP_SUPABASE_ROOT_CA: ${file.trim()} holds no PEM certificate. ${fix}`);
  for (const pem of certificates) {
    try {
      new X509Certificate(pem);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(
        `LOCKSTEP_SUPABASE_ROOT_CA: ${file.trim()} holds a certificate that cannot be read (${why}). ${fix}`,
      );
    }
  }
  return certificates.join('\n');
}

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** Reads the configuration from the environment and the command line; every variable is in the README. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const roleArg = argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all';
  if (!(ROLES as readonly string[]).includes(roleArg)) {
    throw new Error(`Unknown role "${roleArg}": use --role=api, --role=worker or --role=all.`);
  }
  const publicUrl = (e.LOCKSTEP_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  const trustedOrigins = [
    publicUrl,
    `http://localhost:${e.PORT}`,
    `http://127.0.0.1:${e.PORT}`,
    // The Vite dev server proxies to the API during development.
    'http://localhost:5173',
    ...e.LOCKSTEP_TRUSTED_ORIGINS.split(',').map((s) => s.trim()),
  ].filter((s) => s !== '');
  return {
    port: e.PORT,
    // On the embedded default (no DATABASE_URL: one person's machine) only this machine may connect
    // until HOST says otherwise; a deployment with its own PostgreSQL listens on every address.
    host: e.HOST || (e.DATABASE_URL ? '0.0.0.0' : '127.0.0.1'),
    role: roleArg as Role,
    databaseUrl: e.DATABASE_URL || undefined,
    dataDir: path.resolve(e.LOCKSTEP_DATA_DIR ?? path.join(repoRoot, '.data')),
    embeddedStatementStats: e.LOCKSTEP_EMBEDDED_STATEMENT_STATS === '1',
    environment: e.LOCKSTEP_ENV,
    publicUrl,
    trustedOrigins: [...new Set(trustedOrigins)],
    staffEmails: new Set(
      e.LOCKSTEP_STAFF_EMAILS.split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    ),
    secretKey: e.LOCKSTEP_SECRET_KEY,
    authSecret: e.BETTER_AUTH_SECRET,
    supportEmail: e.LOCKSTEP_SUPPORT_EMAIL,
    pricingUrl: e.LOCKSTEP_PRICING_URL,
    intercomSecret: e.LOCKSTEP_INTERCOM_SECRET,
    analytics: e.LOCKSTEP_POSTHOG_KEY?.trim()
      ? {
          posthogKey: e.LOCKSTEP_POSTHOG_KEY.trim(),
          posthogHost: (e.LOCKSTEP_POSTHOG_HOST ?? DEFAULT_POSTHOG_HOST).replace(/\/$/, ''),
        }
      : null,
    tagManager: e.LOCKSTEP_GTM_ID ? { gtmId: e.LOCKSTEP_GTM_ID } : null,
    supportChat: supportChatOf(e),
    oidcProviders: e.LOCKSTEP_OIDC_PROVIDERS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    webDist: path.resolve(e.LOCKSTEP_WEB_DIST ?? path.join(repoRoot, 'apps/web/dist')),
    logLevel: e.LOCKSTEP_LOG_LEVEL,
    supabase: {
      apiUrl: e.LOCKSTEP_SUPABASE_API_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_SUPABASE_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_SUPABASE_CLIENT_SECRET || undefined,
      rootCa: readSupabaseRootCa(e.LOCKSTEP_SUPABASE_ROOT_CA),
    },
    airtable: {
      apiUrl: e.LOCKSTEP_AIRTABLE_API_URL.replace(/\/$/, ''),
      oauthUrl: e.LOCKSTEP_AIRTABLE_OAUTH_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_AIRTABLE_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_AIRTABLE_CLIENT_SECRET || undefined,
    },
    hubspot: {
      apiUrl: e.LOCKSTEP_HUBSPOT_API_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_HUBSPOT_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_HUBSPOT_CLIENT_SECRET || undefined,
      oauthUrl: e.LOCKSTEP_HUBSPOT_OAUTH_URL.replace(/\/$/, ''),
    },
    attio: {
      apiUrl: e.LOCKSTEP_ATTIO_API_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_ATTIO_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_ATTIO_CLIENT_SECRET || undefined,
      oauthUrl: e.LOCKSTEP_ATTIO_OAUTH_URL.replace(/\/$/, ''),
    },
    pipedrive: {
      apiUrl: e.LOCKSTEP_PIPEDRIVE_API_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_PIPEDRIVE_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_PIPEDRIVE_CLIENT_SECRET || undefined,
      oauthUrl: e.LOCKSTEP_PIPEDRIVE_OAUTH_URL.replace(/\/$/, ''),
    },
    affinity: { apiUrl: e.LOCKSTEP_AFFINITY_API_URL.replace(/\/$/, '') },
    salesforce: {
      apiUrl: e.LOCKSTEP_SALESFORCE_API_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_SALESFORCE_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_SALESFORCE_CLIENT_SECRET || undefined,
    },
    stripe: {
      apiUrl: e.LOCKSTEP_STRIPE_API_URL.replace(/\/$/, ''),
      connectClientId: e.LOCKSTEP_STRIPE_CONNECT_CLIENT_ID || undefined,
      connectSecretKey: e.LOCKSTEP_STRIPE_CONNECT_SECRET_KEY || undefined,
      connectUrl: e.LOCKSTEP_STRIPE_CONNECT_URL.replace(/\/$/, ''),
    },
    memberstack: {
      apiUrl: e.LOCKSTEP_MEMBERSTACK_API_URL.replace(/\/$/, ''),
      emailStableMs: Math.round(e.LOCKSTEP_MEMBERSTACK_EMAIL_STABLE_SECONDS * 1000),
    },
    webflow: {
      apiUrl: e.LOCKSTEP_WEBFLOW_API_URL.replace(/\/$/, ''),
      clientId: e.LOCKSTEP_WEBFLOW_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_WEBFLOW_CLIENT_SECRET || undefined,
      oauthUrl: e.LOCKSTEP_WEBFLOW_OAUTH_URL.replace(/\/$/, ''),
    },
    billing: stripeConfigOf(e),
    notion: {
      clientId: e.LOCKSTEP_NOTION_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_NOTION_CLIENT_SECRET || undefined,
      apiUrl: e.LOCKSTEP_NOTION_API_URL?.replace(/\/$/, '') || undefined,
    },
    google: {
      clientId: e.LOCKSTEP_GOOGLE_CLIENT_ID || undefined,
      clientSecret: e.LOCKSTEP_GOOGLE_CLIENT_SECRET || undefined,
      apiUrl: e.LOCKSTEP_GOOGLE_API_URL?.replace(/\/$/, '') || undefined,
    },
    sandbox: e.LOCKSTEP_SANDBOX === '1' ? true : e.LOCKSTEP_SANDBOX === '0' ? false : undefined,
    demo: e.LOCKSTEP_DEMO === '1',
    postgresTimeouts: {
      connectMs: e.LOCKSTEP_PG_CONNECT_TIMEOUT_MS,
      queryMs: e.LOCKSTEP_PG_QUERY_TIMEOUT_MS,
    },
    historyRetentionDays:
      typeof e.LOCKSTEP_HISTORY_RETENTION_DAYS === 'number' ? e.LOCKSTEP_HISTORY_RETENTION_DAYS : undefined,
    authRateLimit: {
      enabled: !['off', '0', 'false'].includes(e.LOCKSTEP_AUTH_RATE_LIMIT),
      windowMs: e.LOCKSTEP_AUTH_RATE_LIMIT_WINDOW_SECONDS * 1000,
      perEmail: e.LOCKSTEP_AUTH_RATE_LIMIT_PER_EMAIL,
      perAddress: e.LOCKSTEP_AUTH_RATE_LIMIT_PER_ADDRESS,
    },
    trustProxy: parseTrustProxy(e.LOCKSTEP_TRUST_PROXY),
    mail: {
      smtpUrl: e.LOCKSTEP_SMTP_URL?.trim() || undefined,
      from: e.LOCKSTEP_MAIL_FROM?.trim() || undefined,
      verification: e.LOCKSTEP_EMAIL_VERIFICATION || undefined,
    },
  };
}
