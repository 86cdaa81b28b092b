/**
 * Memberstack for the REST layer and the runtime. A connection holds the app's secret key
 * (`secretKey`: `sk_sb_...` opens the app's test mode, `sk_...` its live mode) and, for webhooks,
 * the endpoint's signing secret (`webhookSecret`, `whsec_...`). The one base is the app in that
 * mode; its tables are `members` and `plans`.
 *
 * The Admin API has no call that lists the app's custom fields: discovery takes the custom field
 * and metadata keys members hold (the first pages of members), plus the keys the connection's
 * optional `customFields` item lists (comma-separated, for fields no member has filled yet).
 */
import type { FieldType } from '@lockstep/engine';
import type pg from 'pg';
import { type ApiUrlSettings, resolveApiUrl } from '../sdk/api-url';
import { ConnectorError } from '../sdk/connector';
import {
  createMemberstackClient,
  listMembers,
  MEMBERSTACK_API_URL,
  MEMBERSTACK_MAX_PAGE_SIZE,
  type MemberstackClientOptions,
  memberstackKeyMode,
} from './memberstack-api';
import {
  createMemberstackConnector,
  type MemberstackConnector,
  type MemberstackConnectorOptions,
} from './memberstack-connector';
import { discoveredMemberFields, metaTypeOf, PLAN_FIELDS, plansOf } from './memberstack-values';

export type MemberstackItems = Record<string, string>;

export type MemberstackSettings = ApiUrlSettings & {
  /** The API every connection uses (https://admin.memberstack.com; the simulator in tests). */
  apiUrl?: string;
  /** Shares the rate-limit budget between worker processes (PostgreSQL store). */
  pool?: pg.Pool | null;
  /** How long an email change must stay the same before it is written (60 s). */
  emailStableMs?: number;
  /** Client tuning (tests): attempts, waits, pacing. */
  client?: Pick<
    MemberstackClientOptions,
    'maxAttempts' | 'maxRetryAfterMs' | 'sleep' | 'perSecond' | 'rateLimitWaitMs'
  > &
    Pick<MemberstackConnectorOptions, 'queryPageSize'>;
};

/** Pages of members discovery looks at for custom field and metadata keys. */
export const MEMBERSTACK_DISCOVERY_PAGES = 10;

function keyOf(items: MemberstackItems): string {
  const key = (items.secretKey ?? items.apiKey ?? '').trim();
  if (!key) {
    throw new ConnectorError(
      'auth_invalid',
      'no Memberstack secret key',
      'Enter the secret key of your Memberstack app (dashboard: Dev Tools > API keys; sk_sb_... for test mode, sk_... for live).',
    );
  }
  return key;
}

/** The app's API, or a `baseUrl` item the server honours (its sandbox simulators, a local server). */
const apiUrlOf = (settings: MemberstackSettings, items: MemberstackItems) =>
  resolveApiUrl('Memberstack', settings.apiUrl ?? MEMBERSTACK_API_URL, settings, items);

function clientFor(settings: MemberstackSettings, items: MemberstackItems) {
  return createMemberstackClient({
    baseUrl: apiUrlOf(settings, items),
    secretKey: keyOf(items),
    pool: settings.pool ?? null,
    // A person is waiting: a 429 is not slept through for long.
    maxRetryAfterMs: 5_000,
    maxAttempts: 4,
    ...settings.client,
  });
}

/** `Memberstack (test mode)` or `Memberstack (live)`, as the key's prefix says. */
export function memberstackBaseName(items: MemberstackItems): string {
  const mode = memberstackKeyMode(items.secretKey ?? items.apiKey);
  return mode === 'test' ? 'Memberstack (test mode)' : mode === 'live' ? 'Memberstack (live)' : 'Memberstack';
}

export function createMemberstackPort(settings: MemberstackSettings = {}) {
  return {
    type: 'memberstack' as const,
    /** One member (`GET /members?limit=1`): a cheap authenticated call. */
    async check(items: MemberstackItems): Promise<{ accountEmail: string | null }> {
      await listMembers(clientFor(settings, items), null, 1);
      return { accountEmail: null };
    },
    /** One base: the app in the key's mode (test or live). */
    async listBases(items: MemberstackItems) {
      await listMembers(clientFor(settings, items), null, 1);
      return [{ remoteId: memberstackKeyMode(keyOf(items)) ?? 'app', name: memberstackBaseName(items) }];
    },
    /** Members (custom fields and metadata keys found on members, and listed ones) and plans. */
    async discoverSchema(items: MemberstackItems, _base: string) {
      const client = clientFor(settings, items);
      const custom = new Map<string, { label?: string }>();
      const meta = new Map<string, Set<FieldType>>();
      for (const k of (items.customFields ?? '').split(',')) if (k.trim()) custom.set(k.trim(), {});
      const plans = plansOf([]);
      let after: string | null = null;
      for (let i = 0; i < MEMBERSTACK_DISCOVERY_PAGES; i++) {
        const page = await listMembers(client, after, MEMBERSTACK_MAX_PAGE_SIZE);
        plansOf(page.members, plans);
        for (const m of page.members) {
          for (const k of Object.keys(m.customFields ?? {})) if (!custom.has(k)) custom.set(k, {});
          for (const [k, v] of Object.entries(m.metaData ?? {})) {
            const types = meta.get(k) ?? new Set<FieldType>();
            const t = metaTypeOf(v);
            if (t) types.add(t);
            meta.set(k, types);
          }
        }
        if (!page.hasMore) break;
        after = page.next;
      }
      const memberFields = discoveredMemberFields(custom, meta).map((f) =>
        f.remoteId === 'plans' ? { ...f, options: { ...f.options, choices: [...plans.keys()].sort() } } : f,
      );
      return [
        {
          remoteId: 'members',
          name: 'Members',
          extras: { memberstackMode: memberstackKeyMode(keyOf(items)) },
          fields: memberFields,
        },
        { remoteId: 'plans', name: 'Plans', extras: { readOnly: true }, fields: PLAN_FIELDS },
      ];
    },
  };
}

export type MemberstackPort = ReturnType<typeof createMemberstackPort>;

/** The connector a run uses for one connection. */
export function createMemberstackRuntimeConnector(
  settings: MemberstackSettings,
  items: MemberstackItems,
): MemberstackConnector {
  return createMemberstackConnector({
    baseUrl: apiUrlOf(settings, items),
    secretKey: keyOf(items),
    pool: settings.pool ?? null,
    ...(settings.emailStableMs !== undefined ? { emailStableMs: settings.emailStableMs } : {}),
    ...settings.client,
  });
}
