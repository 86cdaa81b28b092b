/**
 * A "Full name" made of two name parts. CRMs hold a person's first and last name (HubSpot contacts,
 * Salesforce contacts and leads, Affinity persons), while most other apps (a CRM table's
 * `full_name`, an Airtable "Name") hold one. A connector offers a writable "Full name" field read as
 * "first last" and written back split at the last space ("Mary Ann Smith" -> "Mary Ann" and
 * "Smith"); its options name the parts it writes (`madeOf`), so a check of required fields counts
 * them as written. Its remote id joins the parts with "+", which no field name of these apps holds.
 */
import type { CanonicalValue } from '@lockstep/engine';

/** The remote id of a full name made of these two fields. */
export const fullNameId = (first: string, last: string) => `${first}+${last}`;

/** "first last" from the two parts' raw values (blank parts left out); null when both are. */
export function joinName(first: unknown, last: unknown): string | null {
  const parts = [first, last].map((p) => (typeof p === 'string' ? p.trim() : '')).filter((p) => p !== '');
  return parts.length > 0 ? parts.join(' ') : null;
}

/**
 * A full name as its two parts ('' for an empty one): split at the last space. A name of one word
 * goes to the part the app requires (`oneWord`): HubSpot and Affinity need a first name, Salesforce
 * a last name.
 */
export function splitFullName(
  full: CanonicalValue,
  oneWord: 'first' | 'last' = 'first',
): { first: string; last: string } {
  const text = typeof full === 'string' ? full.trim().replace(/\s+/g, ' ') : '';
  const at = text.lastIndexOf(' ');
  if (at >= 0) return { first: text.slice(0, at), last: text.slice(at + 1) };
  return oneWord === 'first' ? { first: text, last: '' } : { first: '', last: text };
}
