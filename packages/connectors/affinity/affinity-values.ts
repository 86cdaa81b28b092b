/**
 * Affinity field values <-> canonical values (pure; no requests).
 *
 * Reads are v2: every field of a record comes as `{id, name, type, enrichmentSource, value: {type,
 * data}}`, the value's `type` telling the shape of `data` (text, number, datetime, dropdown
 * `{dropdownOptionId, text}`, ranked-dropdown `{dropdownOptionId, text, rank, color}`, location,
 * person `{id, firstName, ...}`, company `{id, name, domain}`, their `-multi` lists, formula-number
 * `{calculatedValue}`, interaction). Writes are v1 field values, one per value (a multi-value field
 * is several): text, numbers and dates as themselves, a dropdown as its text, a ranked dropdown as
 * its option id, a person or company as its id, a location as `{street_address, city, state,
 * country, continent}`.
 *
 * Field ids: v2 names custom fields `field-<n>` (v1's integer id n) and Affinity's own with words
 * (`affinity-data-...` enriched data, relationship-intelligence dates); only `field-<n>` are written.
 */
import {
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  type JsonValue,
  normalizeValue,
} from '@lockstep/engine';

/** v2 field metadata (`GET /v2/persons/fields`, `/v2/companies/fields`, `/v2/lists/{id}/fields`). */
export type AffinityFieldMeta = {
  id: string;
  name: string;
  /** Where the field comes from: a custom field of the account, of one list, or Affinity's data. */
  type: 'global' | 'list' | 'enriched' | 'relationship-intelligence' | string;
  enrichmentSource?: string | null;
  valueType: string;
};

/** A field's value as v2 returns it on a record. */
export type AffinityFieldValue = {
  id: string;
  name?: string;
  type?: string;
  enrichmentSource?: string | null;
  value?: { type?: string; data?: unknown } | null;
};

/** A synced field of a table: a built-in property of the entity or a field of the account or list. */
export type AffinityField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
  /** The v2 field (absent for built-in properties). */
  meta?: AffinityFieldMeta;
};

/** v2 value type -> canonical type; undefined means not synced. */
export function canonicalType(valueType: string): CanonicalFieldType | undefined {
  switch (valueType) {
    case 'text':
    case 'filterable-text':
      return 'text';
    case 'number':
    case 'formula-number':
      return 'number';
    case 'datetime':
    case 'interaction':
      return 'datetime';
    case 'dropdown':
    case 'ranked-dropdown':
      return 'single_select';
    case 'dropdown-multi':
    case 'filterable-text-multi':
      return 'multi_select';
    case 'person':
    case 'person-multi':
    case 'company':
    case 'company-multi':
      return 'relations';
    case 'location':
    case 'location-multi':
    case 'number-multi':
      return 'json';
    default:
      return undefined;
  }
}

/** The v1 field id of a v2 custom field (`field-123` -> 123); null for Affinity's own fields. */
export function v1FieldId(v2Id: string): number | null {
  const m = /^field-(\d+)$/.exec(v2Id);
  return m ? Number(m[1]) : null;
}

const WRITABLE_TYPES = new Set([
  'text',
  'number',
  'datetime',
  'dropdown',
  'ranked-dropdown',
  'dropdown-multi',
  'person',
  'person-multi',
  'company',
  'company-multi',
  'location',
]);

/** Enriched data, relationship intelligence, formulas and interactions are Affinity's to set. */
export function isReadOnly(meta: AffinityFieldMeta): boolean {
  if (meta.type !== 'global' && meta.type !== 'list') return true;
  if (v1FieldId(meta.id) === null) return true;
  return !WRITABLE_TYPES.has(meta.valueType);
}

export function relationTarget(valueType: string): string | undefined {
  if (valueType === 'person' || valueType === 'person-multi') return 'persons';
  if (valueType === 'company' || valueType === 'company-multi') return 'companies';
  return undefined;
}

export const isMulti = (valueType: string) => valueType.endsWith('-multi');

/** The synced fields of v2 field metadata (canonically typed, read-only ones flagged). */
export function affinityFields(
  metas: AffinityFieldMeta[],
  choicesOf: (meta: AffinityFieldMeta) => string[] | undefined = () => undefined,
): AffinityField[] {
  return metas.flatMap((meta): AffinityField[] => {
    const fieldType = canonicalType(meta.valueType);
    if (!fieldType) return [];
    const choices = choicesOf(meta);
    const target = relationTarget(meta.valueType);
    return [
      {
        remoteId: meta.id,
        name: meta.name || meta.id,
        fieldType,
        readOnly: isReadOnly(meta),
        options: {
          affinityValueType: meta.valueType,
          affinityFieldType: meta.type,
          ...(isMulti(meta.valueType) ? { multiple: true } : {}),
          ...(choices && choices.length > 0 ? { choices } : {}),
          ...(target ? { relationTarget: target } : {}),
        },
        meta,
      },
    ];
  });
}

function normalized(type: CanonicalFieldType, raw: unknown): CanonicalValue {
  const r = normalizeValue(type, raw);
  return r.ok ? r.value : null;
}

const idOf = (x: unknown): string | null => {
  if (x && typeof x === 'object' && 'id' in x) {
    const id = (x as { id: unknown }).id;
    return typeof id === 'number' || typeof id === 'string' ? String(id) : null;
  }
  return typeof x === 'number' || typeof x === 'string' ? String(x) : null;
};

const textOf = (x: unknown): string | null => {
  if (x && typeof x === 'object' && 'text' in x) {
    const t = (x as { text: unknown }).text;
    return typeof t === 'string' ? t : null;
  }
  return typeof x === 'string' ? x : null;
};

const LOCATION_KEYS = ['streetAddress', 'city', 'state', 'country', 'continent'] as const;

function locationJson(x: unknown): JsonValue | null {
  if (!x || typeof x !== 'object') return null;
  const o = x as Record<string, unknown>;
  const out: Record<string, JsonValue> = {};
  for (const k of LOCATION_KEYS) {
    const v = o[k] ?? o[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
    if (typeof v === 'string' && v.trim() !== '') out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** A v2 field value as the canonical value of its field. */
export function toCanonical(field: Pick<AffinityField, 'fieldType'>, value: unknown): CanonicalValue {
  const v = (value && typeof value === 'object' ? value : null) as { type?: string; data?: unknown } | null;
  const data = v?.data ?? null;
  if (data === null || data === undefined) return field.fieldType === 'relations' ? null : null;
  const list = Array.isArray(data) ? data : [data];
  switch (v?.type) {
    case 'text':
    case 'filterable-text':
      return normalized('text', typeof data === 'string' ? data : null);
    case 'number':
      return normalized('number', typeof data === 'number' ? String(data) : data);
    case 'formula-number': {
      const n = (data as { calculatedValue?: unknown }).calculatedValue;
      return normalized('number', typeof n === 'number' ? String(n) : null);
    }
    case 'datetime':
      return normalized('datetime', data);
    case 'interaction': {
      const d = data as { sentAt?: unknown; startTime?: unknown; date?: unknown };
      return normalized('datetime', d.sentAt ?? d.startTime ?? d.date ?? null);
    }
    case 'dropdown':
    case 'ranked-dropdown':
      return normalized('single_select', textOf(data));
    case 'dropdown-multi':
      return normalized(
        'multi_select',
        list.map(textOf).filter((t): t is string => t !== null),
      );
    case 'filterable-text-multi':
      return normalized(
        'multi_select',
        list.filter((t): t is string => typeof t === 'string'),
      );
    case 'person':
    case 'person-multi':
    case 'company':
    case 'company-multi':
      return normalized(
        'relations',
        list.map(idOf).filter((t): t is string => t !== null),
      );
    case 'location':
      return wrapJson(locationJson(data));
    case 'location-multi': {
      const locs = list.map(locationJson).filter((l): l is JsonValue => l !== null);
      return wrapJson(locs.length > 0 ? locs : null);
    }
    case 'number-multi':
      return wrapJson(list.filter((n): n is number => typeof n === 'number'));
    default:
      return null;
  }
}

function wrapJson(j: JsonValue | null): CanonicalValue {
  if (j === null || (Array.isArray(j) && j.length === 0)) return null;
  return normalized('json', { json: j });
}

/**
 * A canonical value as the v1 field values to hold (one per value; none to clear). Dropdown text is
 * written as itself, a ranked dropdown as its option id (`optionId` maps text to id; an unknown text
 * is refused with a message).
 */
export function fromCanonical(
  valueType: string,
  value: CanonicalValue,
  optionId: (text: string) => number | undefined = () => undefined,
): { values: unknown[]; problem?: string } {
  if (value === null) return { values: [] };
  switch (valueType) {
    case 'text':
      return { values: [String(value)] };
    case 'number': {
      const n = Number(value);
      if (!Number.isFinite(n)) return { values: [], problem: `"${String(value)}" is not a number` };
      return { values: [n] };
    }
    case 'datetime':
      return { values: [String(value)] };
    case 'dropdown':
      return { values: [String(value)] };
    case 'dropdown-multi':
      return { values: (Array.isArray(value) ? value : [value]).map(String) };
    case 'ranked-dropdown': {
      const id = optionId(String(value));
      if (id === undefined)
        return { values: [], problem: `"${String(value)}" is not an option of this field` };
      return { values: [id] };
    }
    case 'person':
    case 'company':
    case 'person-multi':
    case 'company-multi': {
      const ids = (Array.isArray(value) ? value : [value]).map((x) => Number(x));
      if (ids.some((n) => !Number.isInteger(n)))
        return { values: [], problem: `${JSON.stringify(value)} is not a list of Affinity ids` };
      if (!isMulti(valueType) && ids.length > 1)
        return { values: [], problem: 'this field holds one record only' };
      return { values: ids };
    }
    case 'location': {
      const j = (value as { json?: unknown }).json;
      const loc = locationJson(j);
      if (!loc) return { values: [], problem: 'a location needs a city, state, country or street address' };
      const o = loc as Record<string, string>;
      return {
        values: [
          {
            street_address: o.streetAddress ?? null,
            city: o.city ?? null,
            state: o.state ?? null,
            country: o.country ?? null,
            continent: o.continent ?? null,
          },
        ],
      };
    }
    default:
      return { values: [], problem: `fields of type ${valueType} are not written` };
  }
}

/** A v1 field value's value as the v2-shaped value it stands for (to compare with what is to be held). */
export function v1ValueKey(valueType: string, value: unknown): string {
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (valueType === 'ranked-dropdown') return String(o.id ?? o.dropdownOptionId ?? '');
    if (valueType === 'dropdown' || valueType === 'dropdown-multi') return String(o.text ?? '');
    if (valueType === 'location') return JSON.stringify(locationJson(o));
    if ('id' in o) return String(o.id);
  }
  if (valueType === 'location') return JSON.stringify(locationJson(value));
  if (valueType === 'datetime' && typeof value === 'string') {
    const t = Date.parse(value);
    return Number.isNaN(t) ? value : new Date(t).toISOString();
  }
  return String(value);
}
