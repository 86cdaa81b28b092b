import { Avatar } from '@mantine/core';
import {
  type SimpleIcon,
  siAirtable,
  siGooglesheets,
  siHubspot,
  siNotion,
  siPostgresql,
  siStripe,
  siSupabase,
  siWebflow,
} from 'simple-icons';
import { iconSize } from '../lib/images';

/**
 * Brand icons from simple-icons (CC0), by connector type. Salesforce, Pipedrive, Attio, Affinity and
 * Memberstack have no icon there (simple-icons 16.37): they, and any type not listed, get a letter.
 */
const ICONS: Partial<Record<string, SimpleIcon>> = {
  airtable: siAirtable,
  google_sheets: siGooglesheets,
  hubspot: siHubspot,
  notion: siNotion,
  postgresql: siPostgresql,
  stripe: siStripe,
  supabase: siSupabase,
  webflow: siWebflow,
};

/** First letter or digit of the app's name (or type), for the letter avatar: `google_sheets` → G. */
function initialOf(text: string): string {
  return (/[\p{L}\p{N}]/u.exec(text)?.[0] ?? '?').toUpperCase();
}

/**
 * An app's logo in its brand colour, or a neutral letter avatar when there is no icon for it, at an
 * icon size of spec section 9 (a size in between is rounded up: 20 draws at 32).
 * Decorative (aria-hidden): the app's name is shown beside it.
 */
export function AppLogo({ type, name, size: wanted = 16 }: { type: string; name?: string; size?: number }) {
  const size = iconSize(wanted);
  const icon = ICONS[type];
  if (!icon)
    return (
      <Avatar size={size} radius="sm" color="gray" variant="light" aria-hidden data-app-logo={type}>
        {initialOf(name ?? type)}
      </Avatar>
    );
  return (
    <svg
      aria-hidden
      viewBox="0 0 24 24"
      width={size}
      height={size}
      fill={`#${icon.hex}`}
      style={{ flexShrink: 0, display: 'block' }}
      data-app-logo={type}
      data-icon={icon.slug}
    >
      <path d={icon.path} />
    </svg>
  );
}
