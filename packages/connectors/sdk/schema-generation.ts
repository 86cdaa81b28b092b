import type { FieldType } from '@lockstep/engine';

/**
 * Schema generation into apps (spec section 7, /rest/generate-schema): the tables and fields of the
 * sync's other app, described with canonical types, to be created in an app with that app's own
 * types and naming rules. A name the app would refuse (too long, a forbidden character, taken) is
 * made valid, and the answer says so (`requestedName` differs from `name`).
 */
export type SchemaColumn = {
  name: string;
  type: FieldType;
  options?: { choices?: string[]; currencyDigits?: number; currencyCode?: string; precision?: number };
};
export type SchemaTable = { name: string; columns: SchemaColumn[] };

/** A field made in the app: its id there and its name, with the name it was asked for. */
export type CreatedSchemaField = { remoteId: string; name: string; requestedName: string; appType: string };
/** A table made in the app; `columns` follow the order of the request. */
export type CreatedSchemaTable = {
  remoteId: string;
  name: string;
  requestedName: string;
  columns: CreatedSchemaField[];
};

export type NameRules = {
  /** Longest name the app takes, in UTF-16 code units (as its API counts string length). */
  maxLength?: number;
  /** Characters the app refuses in a name; each is replaced by `replacement`. */
  forbidden?: RegExp;
  replacement?: string;
  /** Names compared case-insensitively for uniqueness (Airtable, Google Sheets). */
  caseInsensitive?: boolean;
};

/** Cut to `max` code units without splitting a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  let out = s.slice(0, max);
  const last = out.charCodeAt(out.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  return out;
}

/**
 * Hands out valid, unique names in one scope (a table's fields, a base's tables): trimmed, forbidden
 * characters replaced, never empty (`fallback`), cut to the app's limit, and a suffix " 2", " 3", …
 * when taken (the suffix fits inside the limit).
 */
export function nameAllocator(rules: NameRules, taken: Iterable<string> = []) {
  const key = (s: string) => (rules.caseInsensitive ? s.toLowerCase() : s);
  const used = new Set([...taken].map(key));
  const max = rules.maxLength ?? Number.POSITIVE_INFINITY;
  return (requested: string, fallback: string): string => {
    let base = requested;
    if (rules.forbidden) base = base.replace(rules.forbidden, rules.replacement ?? ' ');
    base = base.replaceAll(/\s+/g, ' ').trim();
    if (base === '') base = fallback;
    base = cut(base, max).trim();
    let name = base;
    for (let k = 2; used.has(key(name)); k++) {
      const suffix = ` ${k}`;
      name = `${cut(base, max - suffix.length).trimEnd()}${suffix}`;
    }
    used.add(key(name));
    return name;
  };
}

/** ISO 4217 code -> the symbol apps show (Airtable's currency field takes a symbol). */
export const CURRENCY_SYMBOLS: Record<string, string> = {
  USD: '$',
  EUR: '€',
  GBP: '£',
  JPY: '¥',
  CHF: 'CHF',
};
