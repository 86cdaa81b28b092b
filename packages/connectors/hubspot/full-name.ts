/**
 * HubSpot contacts hold a first and a last name and no full name, while most other apps (a CRM
 * table's `full_name`, an Airtable "Name") hold one. The connector offers a "Full name" field made of
 * both: read as "first last", written back split at the last space ("Mary Ann Smith" -> "Mary Ann"
 * and "Smith"; one word is a first name). Its remote id cannot be a HubSpot property name (they
 * take no "+"). The joining and splitting are the SDK's (sdk/full-name.ts).
 */
import type { CanonicalValue } from '@lockstep/engine';
import { fullNameId, joinName, splitFullName } from '../sdk/full-name';

export { joinName };

export const FULL_NAME = fullNameId('firstname', 'lastname');
export const FULL_NAME_PARTS = ['firstname', 'lastname'] as const;

/** A full name as the two properties' values ('' clears one): split at the last space. */
export function splitName(full: CanonicalValue): { firstname: string; lastname: string } {
  const { first, last } = splitFullName(full, 'first');
  return { firstname: first, lastname: last };
}

/** Property names with the full name replaced by the two it is made of. */
export function withNameParts(names: string[]): string[] {
  return names.includes(FULL_NAME)
    ? [...new Set([...names.filter((n) => n !== FULL_NAME), ...FULL_NAME_PARTS])]
    : names;
}
