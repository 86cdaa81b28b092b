/**
 * Memberstack members and plans as canonical records, and canonical values back to what the Admin
 * API takes.
 *
 * A member's fields (remote ids):
 * - `email` (`auth.email`): the login email, unique in the app; written only once stable (see the
 *   connector);
 * - `customFields.<key>`: the app's custom fields (strings in Memberstack, a blank one is "");
 * - `metaData.<key>`: the member's metadata keys (any JSON; text, numbers and yes/no values as such,
 *   anything else as JSON);
 * - `plans` (read-only): the ids of the plans the member is connected to (`planConnections`);
 * - `createdAt` (read-only);
 * - `fullName`: a "Full name" made of the `first-name` and `last-name` custom fields (the keys
 *   Memberstack gives fields labelled First name and Last name), offered when the app has both:
 *   most other apps hold one name (a CRM's `full_name`, a newsletter's `name`). Read as "first
 *   last", written back split at the last space ("Mary Ann Smith" -> "Mary Ann" and "Smith").
 * Plans (read-only): `name`, `type` (FREE or PAID) and `status` as the plan connections name them.
 */
import {
  type CanonicalValue,
  type FieldType,
  type JsonValue,
  normalizeValue,
  type RecordData,
} from '@lockstep/engine';
import type { MemberstackMember } from './memberstack-api';

export const CUSTOM_PREFIX = 'customFields.';
export const META_PREFIX = 'metaData.';

export type MemberstackField = {
  remoteId: string;
  name: string;
  fieldType: FieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
};

export const MEMBER_BUILTINS: MemberstackField[] = [
  { remoteId: 'email', name: 'Email', fieldType: 'email', readOnly: false, options: { unique: true } },
  { remoteId: 'plans', name: 'Plans', fieldType: 'multi_select', readOnly: true, options: {} },
  { remoteId: 'createdAt', name: 'Created at', fieldType: 'datetime', readOnly: true, options: {} },
];

export const PLAN_FIELDS: MemberstackField[] = [
  { remoteId: 'name', name: 'Name', fieldType: 'text', readOnly: true, options: {} },
  {
    remoteId: 'type',
    name: 'Type',
    fieldType: 'single_select',
    readOnly: true,
    options: { choices: ['FREE', 'PAID'] },
  },
];

/** The full name's remote id (not a custom field key: those are under `customFields.`). */
export const FULL_NAME = 'fullName';
/** The custom fields the full name is made of: first and last. */
export const FULL_NAME_KEYS = ['first-name', 'last-name'] as const;

/** "first last" from the two custom fields' values (blank parts left out); null when both are. */
export function joinFullName(first: unknown, last: unknown): string | null {
  const parts = [first, last].map((p) => (typeof p === 'string' ? p.trim() : '')).filter((p) => p !== '');
  return parts.length > 0 ? parts.join(' ') : null;
}

/** A full name as the two custom fields' values ('' clears one): split at the last space. */
export function splitFullName(full: CanonicalValue): [first: string, last: string] {
  const text = typeof full === 'string' ? full.trim().replace(/\s+/g, ' ') : '';
  const at = text.lastIndexOf(' ');
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}

export type MemberFieldRef =
  | { kind: 'email' }
  | { kind: 'fullName' }
  | { kind: 'plans' }
  | { kind: 'createdAt' }
  | { kind: 'custom'; key: string }
  | { kind: 'meta'; key: string };

/** Which part of a member a field id names; null for an id that is not a member field. */
export function memberFieldRef(remoteId: string): MemberFieldRef | null {
  if (remoteId === 'email' || remoteId === 'plans' || remoteId === 'createdAt') return { kind: remoteId };
  if (remoteId === FULL_NAME) return { kind: 'fullName' };
  if (remoteId.startsWith(CUSTOM_PREFIX) && remoteId.length > CUSTOM_PREFIX.length)
    return { kind: 'custom', key: remoteId.slice(CUSTOM_PREFIX.length) };
  if (remoteId.startsWith(META_PREFIX) && remoteId.length > META_PREFIX.length)
    return { kind: 'meta', key: remoteId.slice(META_PREFIX.length) };
  return null;
}

const value = (type: FieldType, raw: unknown): CanonicalValue => {
  const n = normalizeValue(type, raw ?? null);
  return n.ok ? n.value : null;
};

/** A custom field's value: text (numbers Memberstack may hold become their text). */
export function customToCanonical(raw: unknown): CanonicalValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string' || typeof raw === 'number') return value('text', raw);
  if (typeof raw === 'boolean') return raw ? 'true' : 'false';
  return value('text', JSON.stringify(raw));
}

/** The canonical type a metadata value reads as. */
export function metaTypeOf(raw: unknown): FieldType | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') return 'text';
  if (typeof raw === 'number') return 'number';
  if (typeof raw === 'boolean') return 'boolean';
  return 'json';
}

/** A metadata value by its own JSON type: text, number, yes/no, or JSON for objects and lists. */
export function metaToCanonical(raw: unknown): CanonicalValue {
  const type = metaTypeOf(raw);
  return type === null ? null : value(type, raw);
}

/** A member's plan ids (every plan connection, whatever its status). */
export function planIdsOf(member: MemberstackMember): string[] {
  return (member.planConnections ?? []).flatMap((c) => (c?.planId ? [c.planId] : []));
}

/**
 * A member as a canonical record: the built-ins, and every custom field and metadata key the member
 * holds (`known` adds the keys of the table's schema as empty when the member has none).
 */
export function memberToRecord(
  member: MemberstackMember,
  known: { custom?: Iterable<string>; meta?: Iterable<string> } = {},
): RecordData {
  const fields: Record<string, CanonicalValue> = {
    email: value('email', member.auth?.email ?? null),
    plans: value('multi_select', planIdsOf(member)),
    createdAt: value('datetime', member.createdAt ?? null),
  };
  for (const k of known.custom ?? []) fields[CUSTOM_PREFIX + k] = null;
  for (const k of known.meta ?? []) fields[META_PREFIX + k] = null;
  for (const [k, v] of Object.entries(member.customFields ?? {}))
    fields[CUSTOM_PREFIX + k] = customToCanonical(v);
  for (const [k, v] of Object.entries(member.metaData ?? {})) fields[META_PREFIX + k] = metaToCanonical(v);
  const [first, last] = FULL_NAME_KEYS;
  const custom = member.customFields ?? {};
  if (first in custom || last in custom)
    fields[FULL_NAME] = value('text', joinFullName(custom[first], custom[last]));
  return { id: member.id, fields };
}

/** A custom field's value to write: its text; empty is "" (Memberstack's blank custom field). */
export function customFromCanonical(v: CanonicalValue): { value: string } | { problem: string } {
  if (v === null) return { value: '' };
  if (typeof v === 'string') return { value: v };
  if (typeof v === 'boolean' || typeof v === 'number') return { value: String(v) };
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return { value: v.join(', ') };
  return { problem: 'a custom field holds text' };
}

/**
 * A metadata value to write. The member's current value decides between a number and its text
 * (a number stays a number); JSON is written as it is.
 */
export function metaFromCanonical(
  v: CanonicalValue,
  current: unknown,
): { value: JsonValue } | { problem: string } {
  if (v === null) return { value: null };
  if (typeof v === 'boolean') return { value: v };
  if (typeof v === 'number') return { value: v };
  if (typeof v === 'string') {
    if (typeof current === 'number' && /^-?\d+(\.\d+)?$/.test(v)) return { value: Number(v) };
    return { value: v };
  }
  if (Array.isArray(v)) return { value: v as string[] };
  if (typeof v === 'object' && 'json' in v) return { value: v.json };
  return { problem: 'this value cannot be stored in metadata' };
}

/** Field definitions for the keys seen on members: custom fields as text, metadata by its values. */
export function discoveredMemberFields(
  custom: Map<string, { label?: string }>,
  meta: Map<string, Set<FieldType>>,
): MemberstackField[] {
  const fields = [...MEMBER_BUILTINS];
  for (const [key, info] of [...custom].sort(([a], [b]) => a.localeCompare(b)))
    fields.push({
      remoteId: CUSTOM_PREFIX + key,
      name: info.label?.trim() || key,
      fieldType: 'text',
      readOnly: false,
      options: { customField: key },
    });
  if (FULL_NAME_KEYS.every((k) => custom.has(k)))
    fields.push({
      remoteId: FULL_NAME,
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
      options: { madeOf: FULL_NAME_KEYS.map((k) => CUSTOM_PREFIX + k) },
    });
  for (const [key, types] of [...meta].sort(([a], [b]) => a.localeCompare(b))) {
    const only = types.size === 1 ? [...types][0] : undefined;
    fields.push({
      remoteId: META_PREFIX + key,
      name: `Metadata: ${key}`,
      fieldType: only ?? (types.size === 0 ? 'text' : 'json'),
      readOnly: false,
      options: { metaData: key },
    });
  }
  return fields;
}

/** The plans named by members' plan connections: id, name and type. */
export type MemberstackPlan = { id: string; name: string | null; type: string | null };

export function plansOf(members: MemberstackMember[], into = new Map<string, MemberstackPlan>()) {
  for (const m of members)
    for (const c of m.planConnections ?? []) {
      if (!c?.planId) continue;
      const had = into.get(c.planId);
      into.set(c.planId, {
        id: c.planId,
        name: c.planName ?? had?.name ?? null,
        type: c.type ? (c.type.toUpperCase() === 'FREE' ? 'FREE' : 'PAID') : (had?.type ?? null),
      });
    }
  return into;
}

export function planToRecord(plan: MemberstackPlan): RecordData {
  return {
    id: plan.id,
    fields: { name: value('text', plan.name), type: value('single_select', plan.type) },
  };
}
