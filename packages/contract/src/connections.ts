import { z } from 'zod';
import { EmailAddress, IsoTimestamp, Uuid } from './formats';

export const ConnectorType = z.enum([
  'airtable',
  'google_sheets',
  'notion',
  'hubspot',
  'salesforce',
  'pipedrive',
  'attio',
  'affinity',
  'webflow',
  'stripe',
  'postgresql',
  'supabase',
  'memberstack',
  /** Lockstep's own virtual connector: the user's blended tables (made by Lockstep, not by users). */
  'blended',
]);
export type ConnectorType = z.infer<typeof ConnectorType>;

export const RequiredItem = z.object({
  name: z.string(),
  label: z.string(),
  /** `multiline`: text of several lines (a PEM certificate). */
  kind: z.enum(['text', 'password', 'url', 'number', 'select', 'multiline']),
  secret: z.boolean(),
  optional: z.boolean(),
  placeholder: z.string().optional(),
  help: z.string().optional(),
  options: z.array(z.string()).optional(),
});
export type RequiredItem = z.infer<typeof RequiredItem>;

export const ConnectorInfo = z.object({
  displayName: z.string(),
  connectorType: ConnectorType,
  auth: z.object({
    type: z.enum(['connection_items', 'oauth2']),
    requiredItems: z.array(RequiredItem),
    /** OAuth connectors: false when this server has no client id for the app (sign-in would fail). */
    signInAvailable: z.boolean().optional(),
  }),
  requiredBaseExtras: z.array(RequiredItem),
  isInBeta: z.boolean(),
  /** False until the connector is built: shown, but it cannot be chosen. */
  available: z.boolean(),
  unavailableReason: z.string().nullable(),
});
export type ConnectorInfo = z.infer<typeof ConnectorInfo>;

export const ExternalConnection = z.object({
  id: Uuid,
  type: ConnectorType,
  name: z.string(),
  status: z.enum(['ok', 'broken']),
  brokenReason: z.string().nullable(),
  /** Non-secret connection items only; secrets never leave the server. */
  connectionItems: z.record(z.string(), z.string()),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type ExternalConnection = z.infer<typeof ExternalConnection>;

export const CreateExternalConnectionBody = z.strictObject({
  type: ConnectorType,
  name: z.string().trim().min(1).max(200).optional(),
  connectionItems: z.record(z.string().max(100), z.string().max(10_000)).default({}),
  oAuthAuthorizationData: z.record(z.string(), z.unknown()).optional(),
});

export const PatchExternalConnectionBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  /** Items to set; an item sent as null is removed. Items not sent stay as they are. */
  connectionItems: z.record(z.string().max(100), z.string().max(10_000).nullable()).optional(),
});

const DISPLAY_NAMES: Record<ConnectorType, string> = {
  airtable: 'Airtable',
  google_sheets: 'Google Sheets',
  notion: 'Notion',
  hubspot: 'HubSpot',
  salesforce: 'Salesforce',
  pipedrive: 'Pipedrive',
  attio: 'Attio',
  affinity: 'Affinity',
  webflow: 'Webflow',
  stripe: 'Stripe',
  postgresql: 'PostgreSQL',
  supabase: 'Supabase',
  memberstack: 'Memberstack',
  blended: 'Blended tables',
};

export function connectorDisplayName(type: ConnectorType): string {
  return DISPLAY_NAMES[type];
}

/** Spec section 5: the text shown for an OAuth error of access_denied. */
export function oauthDeniedMessage(type: ConnectorType): string {
  return `${DISPLAY_NAMES[type]} authorization was denied. Please try again.`;
}

/**
 * POST /rest/external-connections/oauth/{connectorType}/authorize-callback: what the OAuth redirect
 * brought back (code, or error such as access_denied) and the PKCE verifier the web app kept.
 */
export const OAuthAuthorizeCallbackBody = z.strictObject({
  code: z.string().min(1).max(2000).optional(),
  codeVerifier: z.string().min(43).max(128).optional(),
  connectionItems: z.record(z.string().max(100), z.string().max(10_000)).default({}),
  /** The redirect URI used at the authorize step; defaults to {publicUrl}/oauth/{connectorType}/callback. */
  redirectUri: z.string().url().max(2000).optional(),
  error: z.string().max(200).optional(),
  errorDescription: z.string().max(2000).optional(),
  name: z.string().trim().min(1).max(200).optional(),
});

/** GET /rest/connector-rpc/get-user-email?externalConnectionId=… */
export const ConnectorUserEmail = z.object({
  externalConnectionId: Uuid,
  email: z.string().nullable(),
});

/** POST /rest/temporary-external-connections/create (no sign-in needed). */
export const CreateTemporaryConnectionBody = z.strictObject({
  email: z.string().trim().toLowerCase().email().max(320),
  connectorType: ConnectorType,
  connectionItems: z.record(z.string().max(100), z.string().max(10_000)).default({}),
  name: z.string().trim().min(1).max(200).optional(),
});

/** A connection made before sign-in: the token is all the client keeps, and it is opaque. */
export const TemporaryConnection = z.object({
  token: z.string(),
  email: EmailAddress,
  connectorType: ConnectorType,
  accountEmail: z.string().nullable(),
  expiresAt: IsoTimestamp,
});
export type TemporaryConnection = z.infer<typeof TemporaryConnection>;

/** POST /rest/temporary-external-connections/claim */
export const ClaimTemporaryConnectionBody = z.strictObject({ token: z.string().min(1).max(50_000) });
