/** The canonical field types every connector maps its app's fields into. */
export const FIELD_TYPES = [
  'text',
  'rich_text',
  'number',
  'currency',
  'boolean',
  'date',
  'datetime',
  'duration',
  'single_select',
  'multi_select',
  'email',
  'url',
  'phone',
  'attachments',
  'relations',
  'json',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export type Side = 'left' | 'right';
export type Direction = 'both' | 'left_to_right' | 'right_to_left';
export const otherSide = (side: Side): Side => (side === 'left' ? 'right' : 'left');

/** Money in minor units (cents) as an exact integer string, with its ISO currency code. */
export type Currency = { minor: string; code: string };
export type Attachment = { url: string; filename: string; size: number | null; type: string | null };
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A canonical value. Its shape follows the field type: text-like types are strings, number is an
 * exact decimal string, date is YYYY-MM-DD, datetime is ISO UTC with 3, 6 or 9 fraction digits, duration is seconds, multi-select
 * and relations are sorted unique string lists. Empty is always null.
 */
export type CanonicalValue =
  | null
  | string
  | boolean
  | number
  | string[]
  | Currency
  | Attachment[]
  | { json: JsonValue };

export type FieldSpec = {
  /** The app's stable field id. */
  id: string;
  name: string;
  type: FieldType;
  /** Formulas, rollups, computed and generated fields: read, never written. */
  readOnly?: boolean;
  /** Select options, currency code and digits, relation target, ... */
  options?: {
    choices?: string[];
    /** The app adds a choice it does not have yet when one is written (Notion's select). */
    openChoices?: boolean;
    /** The app refuses a record without a value here (a NOT NULL column without a default). */
    required?: boolean;
    currencyCode?: string;
    currencyDigits?: number;
    relationTableMappingId?: string;
    /** Fraction digits of seconds a date-time field holds (PostgreSQL: 6); absent means as many as a value shows. */
    datetimeDigits?: number;
    /** The app's fields a value of this one is written as (a Full name made of first and last name). */
    madeOf?: string[];
  };
};

export type RecordData = { id: string; fields: Record<string, CanonicalValue> };

export type Problem = {
  code:
    | 'type_mismatch'
    | 'unknown_type'
    | 'shadow_missing'
    | 'relation_pending'
    | 'relation_cycle'
    | 'duplicate_key'
    | 'missing_key'
    | 'incompatible_mapping'
    | 'unmapped_option'
    | 'required_missing';
  message: string;
  side?: Side;
  recordId?: string;
  fieldId?: string;
};

export type Result<T> = { ok: true; value: T } | { ok: false; problem: Problem };
export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (code: Problem['code'], message: string): Result<never> => ({
  ok: false,
  problem: { code, message },
});
