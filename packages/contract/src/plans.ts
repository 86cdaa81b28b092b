import { z } from 'zod';

/**
 * Subscription tiers and their limits, in one table (spec sections 3-6). A product-type code is
 * `<tier>` or `<tier>_v<version>`; versions share their tier's limits unless listed here.
 * baseLimit null means unlimited bases.
 */
export const PLAN_TIERS = {
  personal: { displayName: 'Personal', baseLimit: 1, recordLimit: 1_000, pollIntervalSeconds: 900 },
  solo: { displayName: 'Solo', baseLimit: 2, recordLimit: 5_000, pollIntervalSeconds: 300 },
  starter: { displayName: 'Starter', baseLimit: 3, recordLimit: 10_000, pollIntervalSeconds: 300 },
  plus: { displayName: 'Plus', baseLimit: 5, recordLimit: 25_000, pollIntervalSeconds: 120 },
  project: { displayName: 'Project', baseLimit: 5, recordLimit: 50_000, pollIntervalSeconds: 120 },
  startup: { displayName: 'Startup', baseLimit: 10, recordLimit: 100_000, pollIntervalSeconds: 60 },
  pro: { displayName: 'Pro', baseLimit: 15, recordLimit: 250_000, pollIntervalSeconds: 60 },
  growth: { displayName: 'Growth', baseLimit: 25, recordLimit: 500_000, pollIntervalSeconds: 30 },
  professional: {
    displayName: 'Professional',
    baseLimit: 25,
    recordLimit: 1_000_000,
    pollIntervalSeconds: 30,
  },
  business: { displayName: 'Business', baseLimit: 50, recordLimit: 2_000_000, pollIntervalSeconds: 15 },
  operator: { displayName: 'Operator', baseLimit: null, recordLimit: 5_000_000, pollIntervalSeconds: 15 },
  enterprise: {
    displayName: 'Enterprise',
    baseLimit: null,
    recordLimit: 20_000_000,
    pollIntervalSeconds: 10,
  },
} as const satisfies Record<
  string,
  { displayName: string; baseLimit: number | null; recordLimit: number; pollIntervalSeconds: number }
>;

export type PlanTier = keyof typeof PLAN_TIERS;
export const PLAN_TIER_NAMES = Object.keys(PLAN_TIERS) as PlanTier[];

/** Parses `pro`, `pro_v2`, `PRO_V3` into its tier; null for an unknown code. */
export function tierOfProductType(productType: string): PlanTier | null {
  const match = /^([a-z]+)(?:_v(\d+))?$/.exec(productType.trim().toLowerCase());
  if (!match) return null;
  const tier = match[1] as string;
  return tier in PLAN_TIERS ? (tier as PlanTier) : null;
}

/**
 * GET /rest/plans: every plan with the limits the server enforces. `tier` is the product-type code to
 * choose it by; historyRetentionDays is the server's (its plan table, or one retention for everyone).
 */
export const PlanSummary = z.object({
  tier: z.string(),
  displayName: z.string(),
  /** Syncs the plan allows; null is unlimited. */
  baseLimit: z.number().int().nullable(),
  /** Synced records the plan allows (each record counts once). */
  recordLimit: z.number().int(),
  /** How often a sync checks its apps for changes, at least (change events and webhooks come sooner). */
  pollIntervalSeconds: z.number().int(),
  /** Days of sync history (runs, operations, traces, resolved issues) kept. */
  historyRetentionDays: z.number().int(),
});
export type PlanSummary = z.infer<typeof PlanSummary>;

export const PlanList = z.object({ items: z.array(PlanSummary) });
export type PlanList = z.infer<typeof PlanList>;

/** The dev plan of local dev mode (spec sections 6 and 9). */
export const DEV_PLAN = {
  displayName: 'Dev Plan',
  daysRemaining: 30,
  baseLimit: null,
  fallbackRecordLimit: 1000,
} as const;

export const NO_PLAN_DISPLAY_NAME = 'No Plan';
