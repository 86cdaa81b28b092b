/**
 * Pipedrive's field definitions (personFields, organizationFields, dealFields). System fields
 * have readable keys (`name`, `org_id`, ...); custom fields get a 40-character hex key, as in
 * Pipedrive, and option fields (`enum`, `set`) carry numeric option ids that values refer to.
 */
import { createHash } from 'node:crypto';

export const ENTITY_KINDS = ['persons', 'organizations', 'deals'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Singular names, as webhooks and error messages use them. */
export const SINGULAR: Record<EntityKind, 'person' | 'organization' | 'deal'> = {
  persons: 'person',
  organizations: 'organization',
  deals: 'deal',
};

/** The v1 fields endpoint of each kind: /api/v1/personFields, ... */
export const FIELDS_PATH: Record<string, EntityKind> = {
  personFields: 'persons',
  organizationFields: 'organizations',
  dealFields: 'deals',
};

/** Field types the simulator validates (a subset of Pipedrive's field_type values). */
export type FieldType =
  | 'varchar'
  | 'varchar_auto'
  | 'text'
  | 'double'
  | 'monetary'
  | 'date'
  | 'enum'
  | 'set'
  | 'phone'
  | 'int'
  | 'org'
  | 'people'
  | 'user'
  | 'visible_to'
  | 'stage'
  | 'status'
  | 'address';

export type FieldOption = { id: number; label: string; color: string | null; add_time: number };

export type FieldDef = {
  id: number;
  key: string;
  name: string;
  field_type: FieldType;
  custom: boolean;
  /** System fields that the API computes (id, add_time, update_time, ...): not writable. */
  readOnly: boolean;
  mandatory: boolean;
  options: FieldOption[] | null;
  order_nr: number;
  add_time: number;
  update_time: number;
};

/** A custom field key: 40 hex characters, derived from the kind, name and creation order. */
export function customFieldKey(kind: EntityKind, name: string, n: number): string {
  return createHash('sha1').update(`${kind}:${name}:${n}`).digest('hex');
}

type SystemField = [key: string, name: string, type: FieldType, readOnly?: boolean, mandatory?: boolean];

const SYSTEM_FIELDS: Record<EntityKind, SystemField[]> = {
  persons: [
    ['id', 'ID', 'int', true],
    ['name', 'Name', 'varchar', false, true],
    ['first_name', 'First name', 'varchar'],
    ['last_name', 'Last name', 'varchar'],
    ['org_id', 'Organization', 'org'],
    ['owner_id', 'Owner', 'user'],
    ['emails', 'Email', 'varchar'],
    ['phones', 'Phone', 'phone'],
    ['job_title', 'Job title', 'varchar'],
    ['label_ids', 'Labels', 'set'],
    ['visible_to', 'Visible to', 'visible_to'],
    ['add_time', 'Person created', 'date', true],
    ['update_time', 'Update time', 'date', true],
  ],
  organizations: [
    ['id', 'ID', 'int', true],
    ['name', 'Name', 'varchar', false, true],
    ['owner_id', 'Owner', 'user'],
    ['address', 'Address', 'address'],
    ['website', 'Website', 'varchar'],
    ['label_ids', 'Labels', 'set'],
    ['visible_to', 'Visible to', 'visible_to'],
    ['add_time', 'Organization created', 'date', true],
    ['update_time', 'Update time', 'date', true],
  ],
  deals: [
    ['id', 'ID', 'int', true],
    ['title', 'Title', 'varchar', false, true],
    ['value', 'Value', 'monetary'],
    ['currency', 'Currency', 'varchar'],
    ['person_id', 'Contact person', 'people'],
    ['org_id', 'Organization', 'org'],
    ['owner_id', 'Owner', 'user'],
    ['pipeline_id', 'Pipeline', 'int'],
    ['stage_id', 'Stage', 'stage'],
    ['status', 'Status', 'status'],
    ['probability', 'Probability', 'double'],
    ['expected_close_date', 'Expected close date', 'date'],
    ['lost_reason', 'Lost reason', 'varchar'],
    ['label_ids', 'Labels', 'set'],
    ['visible_to', 'Visible to', 'visible_to'],
    ['add_time', 'Deal created', 'date', true],
    ['update_time', 'Update time', 'date', true],
    ['stage_change_time', 'Last stage change', 'date', true],
    ['won_time', 'Won time', 'date', true],
    ['lost_time', 'Lost time', 'date', true],
    ['close_time', 'Deal closed on', 'date', true],
  ],
};

export function systemFields(kind: EntityKind, now: number, firstId: number): FieldDef[] {
  return SYSTEM_FIELDS[kind].map(([key, name, type, readOnly, mandatory], i) => ({
    id: firstId + i,
    key,
    name,
    field_type: type,
    custom: false,
    readOnly: readOnly === true,
    mandatory: mandatory === true,
    options: null,
    order_nr: i,
    add_time: now,
    update_time: now,
  }));
}

/** Custom field types that a person/org/deal custom field may have here. */
export const CUSTOM_FIELD_TYPES: FieldType[] = [
  'varchar',
  'varchar_auto',
  'text',
  'double',
  'monetary',
  'date',
  'enum',
  'set',
  'phone',
];

const pad = (n: number) => String(n).padStart(2, '0');

/** v1 timestamps: "YYYY-MM-DD HH:MM:SS" in UTC. */
export function v1Time(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())}`;
}

/** v2 timestamps: RFC 3339 without milliseconds, as Pipedrive's v2 API returns them. */
export function v2Time(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A field as GET /api/v1/{kind}Fields returns it. */
export function renderFieldV1(f: FieldDef): Record<string, unknown> {
  return {
    id: f.id,
    key: f.key,
    name: f.name,
    order_nr: f.order_nr,
    field_type: f.field_type,
    add_time: v1Time(f.add_time),
    update_time: v1Time(f.update_time),
    last_updated_by_user_id: f.custom ? 1 : null,
    created_by_user_id: f.custom ? 1 : null,
    active_flag: true,
    edit_flag: f.custom,
    index_visible_flag: true,
    details_visible_flag: true,
    add_visible_flag: true,
    important_flag: false,
    bulk_edit_allowed: !f.readOnly,
    searchable_flag: f.field_type === 'varchar' || f.field_type === 'text' || f.field_type === 'phone',
    filtering_allowed: true,
    sortable_flag: true,
    mandatory_flag: f.mandatory,
    options: f.options ? f.options.map((o) => ({ id: o.id, label: o.label, color: o.color })) : null,
  };
}

/** A field as GET /api/v2/{kind}Fields returns it. */
export function renderFieldV2(f: FieldDef): Record<string, unknown> {
  return {
    field_name: f.name,
    field_code: f.key,
    field_type: f.field_type,
    is_custom_field: f.custom,
    is_optional_response_field: false,
    options: f.options
      ? f.options.map((o) => ({
          id: o.id,
          label: o.label,
          color: o.color,
          add_time: v2Time(o.add_time),
          update_time: v2Time(o.add_time),
        }))
      : null,
    subfields: null,
  };
}
