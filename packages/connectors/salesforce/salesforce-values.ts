/**
 * Salesforce field metadata (an sObject describe) as canonical fields, and values both ways: the
 * JSON the REST API reads and takes, and the CSV cells of Bulk API 2.0.
 */
import { type FieldType as CanonicalFieldType, type CanonicalValue, normalizeValue } from '@lockstep/engine';
import { fullNameId } from '../sdk/full-name';

/** One field of `GET /sobjects/{o}/describe`. */
export type SalesforceFieldMeta = {
  name: string;
  label: string;
  type: string;
  nillable?: boolean;
  createable?: boolean;
  updateable?: boolean;
  defaultedOnCreate?: boolean;
  calculated?: boolean;
  autoNumber?: boolean;
  unique?: boolean;
  externalId?: boolean;
  idLookup?: boolean;
  deprecatedAndHidden?: boolean;
  custom?: boolean;
  referenceTo?: string[];
  relationshipName?: string | null;
  picklistValues?: { value: string; label?: string; active?: boolean }[];
  extraTypeInfo?: string | null;
  length?: number;
  precision?: number;
  scale?: number;
};

/** `GET /sobjects/{o}/describe`. */
export type SalesforceDescribe = {
  name: string;
  label: string;
  labelPlural?: string;
  custom?: boolean;
  queryable?: boolean;
  createable?: boolean;
  updateable?: boolean;
  deletable?: boolean;
  fields: SalesforceFieldMeta[];
};

/** A discovered field: canonical type, read-only and required flags, choices, relation target. */
export type SalesforceField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
};

/** Salesforce field type -> canonical type; undefined means not synced (compound, binary, ...). */
export function canonicalType(f: SalesforceFieldMeta): CanonicalFieldType | undefined {
  switch (f.type) {
    case 'string':
    case 'textarea':
    case 'combobox':
    case 'encryptedstring':
    case 'time':
      return 'text';
    case 'email':
      return 'email';
    case 'phone':
      return 'phone';
    case 'url':
      return 'url';
    case 'boolean':
      return 'boolean';
    case 'int':
    case 'double':
    case 'currency':
    case 'percent':
    case 'long':
      return 'number';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    case 'picklist':
      return 'single_select';
    case 'multipicklist':
      return 'multi_select';
    case 'reference':
      return 'relations';
    default:
      // id (the record's own id), address and location (compounds: their parts are fields of their
      // own), base64, anyType, complexvalue.
      return undefined;
  }
}

/** Values only Salesforce sets: formulas, roll-ups, auto numbers, system fields, anything not updateable. */
export function isReadOnly(f: SalesforceFieldMeta): boolean {
  return f.calculated === true || f.autoNumber === true || f.updateable !== true;
}

/** Salesforce refuses a new record without a value here. */
export function isRequired(f: SalesforceFieldMeta): boolean {
  return f.createable === true && f.nillable === false && f.defaultedOnCreate !== true;
}

/** A value read from Salesforce (JSON or a CSV cell) as a canonical value. */
export function toCanonical(f: SalesforceFieldMeta, raw: unknown): CanonicalValue {
  const type = canonicalType(f);
  if (!type) return null;
  let value: unknown = raw ?? null;
  if (value === '') value = null;
  if (type === 'boolean') return value === true || value === 'true';
  if (type === 'multi_select' && typeof value === 'string') value = value.split(';').filter((v) => v !== '');
  if (type === 'relations' && typeof value === 'string') value = [value];
  if (type === 'number' && typeof value === 'number') value = String(value);
  const result = normalizeValue(type, value);
  return result.ok ? result.value : null;
}

/** A canonical value as the JSON Salesforce takes (null clears a field). */
export function fromCanonical(f: SalesforceFieldMeta, value: CanonicalValue): unknown {
  if (value === null || value === undefined) return f.type === 'boolean' ? false : null;
  switch (canonicalType(f)) {
    case 'boolean':
      return value === true || value === 'true';
    case 'number': {
      const n = Number(value);
      return Number.isFinite(n) ? n : String(value);
    }
    case 'multi_select':
      return Array.isArray(value) ? value.map(String).join(';') : String(value);
    case 'relations':
      return Array.isArray(value) ? (value[0] === undefined ? null : String(value[0])) : String(value);
    case 'date':
    case 'datetime': {
      const r = normalizeValue(canonicalType(f) as CanonicalFieldType, value);
      return r.ok && typeof r.value === 'string' ? r.value : String(value);
    }
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** Bulk API 2.0 sets a field to null with `#N/A` (an empty cell leaves it as it is). */
export const BULK_NULL = '#N/A';

/** A canonical value as a Bulk API 2.0 CSV cell. */
export function toCsvCell(f: SalesforceFieldMeta, value: CanonicalValue): string {
  const v = fromCanonical(f, value);
  if (v === null || v === undefined) return BULK_NULL;
  return String(v);
}

/**
 * Salesforce contacts and leads hold a first and a last name; their `Name` ("Full Name") is a
 * read-only compound Salesforce makes of them (with middle name and suffix where the org has them).
 * Most other apps hold one name (a CRM table's `full_name`, an Airtable "Name"): the connector
 * offers a writable "Full name" made of FirstName and LastName (sdk/full-name.ts), read as
 * "first last" and written back split at the last space; one word is a last name, which
 * Salesforce requires. It is offered on any object whose FirstName and LastName are both writable
 * (contacts, leads, person accounts); its remote id is no Salesforce field name (they take no "+").
 */
export const FULL_NAME_PARTS = ['FirstName', 'LastName'] as const;
export const FULL_NAME = fullNameId(...FULL_NAME_PARTS);

/** Whether these fields (an object's, or those a read selects) give the full name. */
export function offersFullName(fields: SalesforceFieldMeta[]): boolean {
  return FULL_NAME_PARTS.every((name) => {
    const f = fields.find((x) => x.name === name);
    return f !== undefined && canonicalType(f) === 'text' && !isReadOnly(f) && f.createable === true;
  });
}

/** Discovered fields of an object: the synced fields (not hidden), canonically typed, and the full name. */
export function salesforceFields(d: SalesforceDescribe): SalesforceField[] {
  const fields = d.fields.flatMap((f): SalesforceField[] => {
    const fieldType = canonicalType(f);
    if (!fieldType || f.deprecatedAndHidden) return [];
    const choices = (f.picklistValues ?? []).filter((p) => p.active !== false).map((p) => p.value);
    const target = f.referenceTo?.[0];
    return [
      {
        remoteId: f.name,
        name: f.label || f.name,
        fieldType,
        readOnly: isReadOnly(f),
        options: {
          salesforceType: f.type,
          ...((fieldType === 'single_select' || fieldType === 'multi_select') && choices.length > 0
            ? {
                choices,
                choiceLabels: Object.fromEntries(
                  (f.picklistValues ?? []).map((p) => [p.value, p.label ?? p.value]),
                ),
              }
            : {}),
          ...(fieldType === 'relations' && target
            ? { references: target, referenceTo: f.referenceTo, single: true }
            : {}),
          ...(isRequired(f) ? { required: true } : {}),
          ...(f.unique ? { unique: true } : {}),
          ...(f.externalId ? { externalId: true } : {}),
          ...(f.type === 'currency' ? { salesforceCurrency: true } : {}),
          ...(f.type === 'percent' ? { percent: true } : {}),
        },
      },
    ];
  });
  if (offersFullName(d.fields)) {
    const last = d.fields.find((f) => f.name === 'LastName') as SalesforceFieldMeta;
    fields.push({
      remoteId: FULL_NAME,
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
      options: {
        salesforceType: 'string',
        madeOf: [...FULL_NAME_PARTS],
        // Its last name is: a blank full name cannot be written.
        ...(isRequired(last) ? { required: true } : {}),
      },
    });
  }
  return fields;
}
