import { z } from 'zod';
import { EmailAddress, IsoTimestamp } from './formats';

/**
 * Subscription status: active, trialing and past_due (a payment failed; usable for a grace period)
 * allow everything within limits; expired and none do not.
 */
export const SubscriptionStatus = z.enum(['active', 'trialing', 'past_due', 'expired', 'none']);
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;

export const Subscription = z.object({
  status: SubscriptionStatus,
  daysRemaining: z.number().int().nullable(),
  planDisplayName: z.string(),
  productType: z.string().nullable(),
  /** Paid through Stripe: the plan ends when the period paid for does (canceled, not renewed). */
  cancelAtPeriodEnd: z.boolean().optional(),
  /** Paid through Stripe (the billing portal manages it), rather than a trial or a staff assignment. */
  billedByStripe: z.boolean().optional(),
});
export type Subscription = z.infer<typeof Subscription>;

/** Experiment flags are booleans, or lists checked for membership. */
export const ExperimentFlagValue = z.union([z.boolean(), z.array(z.string())]);
export const ExperimentFlags = z.record(z.string(), ExperimentFlagValue);
export type ExperimentFlags = z.infer<typeof ExperimentFlags>;

/** The product's own record of a user (spec section 3). */
export const ProductUser = z.object({
  id: z.string(),
  intercomHash: z.string(),
  createdAt: IsoTimestamp,
  mostRecentEmail: EmailAddress,
  experimentFlags: ExperimentFlags,
  subscription: Subscription,
});

export const CurrentUser = z.object({
  id: z.string(),
  displayName: z.string(),
  email: EmailAddress,
  role: z.enum(['user', 'staff']),
  impersonatedBy: z.string().nullable(),
  identityUser: z.object({
    id: z.string(),
    email: EmailAddress,
    name: z.string(),
    emailVerified: z.boolean(),
  }),
  lockstepUser: ProductUser,
});
export type CurrentUser = z.infer<typeof CurrentUser>;

export const LimitData = z.object({
  baseCount: z.number().int(),
  recordCount: z.number().int(),
  baseLimit: z.number().int().nullable(),
  recordLimit: z.number().int(),
});
export type LimitData = z.infer<typeof LimitData>;

export const UserSummary = z.object({
  id: z.string(),
  displayName: z.string(),
  email: EmailAddress,
  role: z.enum(['user', 'staff']),
  createdAt: IsoTimestamp,
  subscription: Subscription,
});
export type UserSummary = z.infer<typeof UserSummary>;

export const Paged = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), total: z.number().int(), skip: z.number().int(), take: z.number().int() });

export const PageQuery = z.object({
  skip: z.coerce.number().int().min(0).max(1_000_000).default(0),
  take: z.coerce.number().int().min(1).max(200).default(50),
});

export const UserSearchQuery = PageQuery.extend({ q: z.string().max(200).default('') });

export const AssignPlanBody = z.strictObject({
  productType: z.string().min(1).max(40),
  days: z.number().int().min(1).max(3650).nullable().default(null),
});

export const FlagsBody = z.strictObject({ experimentFlags: ExperimentFlags });

/** Experiment flags the product reads; staff edit them per user on /settings/flags. */
export const KNOWN_FLAGS = [
  {
    name: 'SELECT_A_PLAN_URL',
    kind: 'boolean',
    description:
      'Choose Plan opens the in-app plan chooser (/account/signup) instead of the external pricing page.',
  },
  {
    name: 'AI_MAPPER',
    kind: 'boolean',
    description: 'Use the configured LLM provider, when there is one, to explain automap suggestions.',
  },
  {
    name: 'INVISIBLE_DEV_TOOLBOX',
    kind: 'boolean',
    description:
      'Ctrl+Shift+D opens the hidden developer toolbox (user, plan, flags, version, debug bundle).',
  },
  {
    name: 'BETA_CONNECTORS',
    kind: 'list',
    description: 'Connector types in beta that this user may choose (for example "hubspot").',
  },
] as const satisfies readonly { name: string; kind: 'boolean' | 'list'; description: string }[];
