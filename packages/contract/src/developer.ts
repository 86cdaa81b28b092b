import { z } from 'zod';
import { AbsoluteUrl, IsoTimestamp, Uuid } from './formats';

/** What a personal API token may do: `read` (GET) and `write` (POST, PUT, PATCH, DELETE). */
export const TokenScope = z.enum(['read', 'write']);
export type TokenScope = z.infer<typeof TokenScope>;

/** Personal API tokens start with this, so the server tells them from session JWTs at a glance. */
export const API_TOKEN_PREFIX = 'lst_';

export const CreateApiTokenBody = z.strictObject({
  name: z.string().trim().min(1, 'Give the token a name').max(100),
  scopes: z
    .array(TokenScope)
    .min(1, 'Choose at least one scope')
    .max(2)
    .refine((s) => new Set(s).size === s.length, 'Each scope once'),
});

export const ApiToken = z.object({
  id: Uuid,
  name: z.string(),
  scopes: z.array(TokenScope),
  /** The token's first characters, to recognise it; the token itself is shown once. */
  prefix: z.string(),
  createdAt: IsoTimestamp,
  lastUsedAt: IsoTimestamp.nullable(),
});
export type ApiToken = z.infer<typeof ApiToken>;

/** The answer to creating a token: the token itself, shown this once. */
export const CreatedApiToken = ApiToken.extend({ token: z.string() });
export type CreatedApiToken = z.infer<typeof CreatedApiToken>;

export const WebhookEventType = z.enum([
  'sync.run.finished',
  'issue.opened',
  'issue.resolved',
  'record.changed',
]);
export type WebhookEventType = z.infer<typeof WebhookEventType>;
export const WEBHOOK_EVENT_TYPES = WebhookEventType.options;

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'Lockstep-Signature';

export const CreateWebhookBody = z.strictObject({
  url: z
    .string()
    .trim()
    .max(2000)
    .url('Give a full URL, like https://example.com/hooks/lockstep')
    .refine((u) => /^https?:\/\//i.test(u), 'The URL must start with http:// or https://'),
  events: z
    .array(WebhookEventType)
    .min(1, 'Choose at least one event')
    .max(WEBHOOK_EVENT_TYPES.length)
    .refine((e) => new Set(e).size === e.length, 'Each event once'),
});

export const PatchWebhookBody = z.strictObject({
  paused: z.boolean().optional(),
  events: CreateWebhookBody.shape.events.optional(),
});

export const WebhookSubscription = z.object({
  id: Uuid,
  url: AbsoluteUrl,
  events: z.array(WebhookEventType),
  paused: z.boolean(),
  createdAt: IsoTimestamp,
});
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

/** The answer to creating a subscription: its signing secret, shown this once. */
export const CreatedWebhookSubscription = WebhookSubscription.extend({ secret: z.string() });
export type CreatedWebhookSubscription = z.infer<typeof CreatedWebhookSubscription>;

export const WebhookDeliveryAttempt = z.object({
  id: Uuid,
  eventId: z.string(),
  eventType: z.string(),
  attempt: z.number().int(),
  /** The receiver's HTTP status; null when no answer came (timeout, refused address, network). */
  statusCode: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  createdAt: IsoTimestamp,
});
export type WebhookDeliveryAttempt = z.infer<typeof WebhookDeliveryAttempt>;
