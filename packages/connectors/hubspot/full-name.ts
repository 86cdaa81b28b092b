/**
 * HubSpot contacts hold a first and a last name and no full name, while most other apps (a CRM
 * table's `full_name`, an Airtable "Name") hold one. The connector offers a "Full name" field made of
 * both: read as "first last", written back split at the last space ("Mary Ann Smith" -> "Mary Ann"
 * and "Smith"). Its remote id cannot be a HubSpot property name (they take no "+").
 */
import type { CanonicalValue } from '@lockstep/engine';

export const FULL_NAME = 'firstname+lastname';
export const FULL_NAME_PARTS = ['firstname', 'lastname'] as const;

/** "first last" from the two properties' raw values (blank parts left out); null when both are. */
export function joinName(first: unknown, last: unknown): string | null {
  const parts = [first, last].map((p) => (typeof p === 'string' ? p.trim() : '')).filter((p) => p !== '');
  return parts.length > 0 ? parts.join(' ') : null;
}

/** A full name as the two properties' values ('' clears one): split at the last space. */
export function splitName(full: CanonicalValue): { firstname: string; lastname: string } {
  const text = typeof full === 'string' ? full.trim().replace(/\s+/g, ' ') : '';
  const at = text.lastIndexOf(' ');
  return at < 0
    ? { firstname: text, lastname: '' }
    : { firstname: text.slice(0, at), lastname: text.slice(at + 1) };
}

/** Property names with the full name replaced by the two it is made of. */
export function withNameParts(names: string[]): string[] {
  return names.includes(FULL_NAME)
    ? [...new Set([...names.filter((n) => n !== FULL_NAME), ...FULL_NAME_PARTS])]
    : names;
}
