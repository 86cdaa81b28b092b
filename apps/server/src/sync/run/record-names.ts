import type { FieldMapping, RecordData } from '@lockstep/engine';
import type { Side } from '../../db/schema';
import type { MappingPlan } from '../load-sync-plan';

const NAME_LIKE = /^(name|full[ _-]?name|title|display[ _-]?name|company|email|e-?mail)$/i;
const TEXT_TYPES = new Set(['text', 'email', 'long_text', 'url', 'phone']);

/**
 * The field a person knows a record by, so issues say "Ada Lovelace" instead of an id: the match
 * field, else a field named like a name, title or email, else the first text field.
 */
export function nameFieldOf(m: Pick<MappingPlan, 'spec' | 'matchOn'>): FieldMapping | null {
  const fields = m.spec.fields;
  return (
    fields.find((f) => f.id === m.matchOn.primary) ??
    fields.find((f) => NAME_LIKE.test(f.left.name) || NAME_LIKE.test(f.right.name)) ??
    fields.find((f) => TEXT_TYPES.has(f.left.type) || TEXT_TYPES.has(f.right.type)) ??
    null
  );
}

export type RecordNamer = (side: Side, remoteId: string) => string | null;

/** Names of the records one run read, by side and id (null for a record it did not read or with no name). */
export function recordNamer(
  m: Pick<MappingPlan, 'spec' | 'matchOn'>,
  pages: { left: RecordData[]; right: RecordData[] },
): RecordNamer {
  const field = nameFieldOf(m);
  if (!field) return () => null;
  const names = { left: new Map<string, string>(), right: new Map<string, string>() };
  for (const side of ['left', 'right'] as const)
    for (const r of pages[side]) {
      const v = r.fields[field[side].id];
      const text = Array.isArray(v) ? v.join(', ') : v === null || v === undefined ? '' : String(v);
      if (text.trim() !== '') names[side].set(r.id, text.length > 120 ? `${text.slice(0, 117)}…` : text);
    }
  return (side, remoteId) => names[side].get(remoteId) ?? null;
}
