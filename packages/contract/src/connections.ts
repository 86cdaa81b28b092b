import { z } from 'zod';

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
]);
export type ConnectorType = z.infer<typeof ConnectorType>;

export const RequiredItem = z.object({
  name: z.string(),
  label: z.string(),
  kind: z.enum(['text', 'password', 'url', 'number', 'select']),
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
  }),
  requiredBaseExtras: z.array(RequiredItem),
  isInBeta: z.boolean(),
  /** False until the connector is built: shown, but it cannot be chosen. */
  available: z.boolean(),
  unavailableReason: z.string().nullable(),
});
export type ConnectorInfo = z.infer<typeof ConnectorInfo>;

export const ExternalConnection = z.object({
  id: z.string(),
  type: ConnectorType,
  name: z.string(),
  status: z.enum(['ok', 'broken']),
  brokenReason: z.string().nullable(),
  /** Non-secret connection items only; secrets never leave the server. */
  connectionItems: z.record(z.string(), z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
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
  connectionItems: z.record(z.string().max(100), z.string().max(10_000)).optional(),
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
};

export function connectorDisplayName(type: ConnectorType): string {
  return DISPLAY_NAMES[type];
}

/** Spec section 5: the text shown for an OAuth error of access_denied. */
export function oauthDeniedMessage(type: ConnectorType): string {
  return `${DISPLAY_NAMES[type]} authorization was denied. Please try again.`;
}
