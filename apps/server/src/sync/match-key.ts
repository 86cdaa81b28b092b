import { type CanonicalValue, matchKeyOf, type RecordData } from '@lockstep/engine';
import type { MappingPlan } from './load-sync-plan';

/**
 * Joins a primary and a secondary match key. A unit separator, not NUL: the keys are stored in
 * PostgreSQL text columns, which cannot hold NUL.
 */
const KEY_SEPARATOR = '\u001f';

/** A stored key as people read it ("ada@example.com + Acme"). */
export const shownKey = (key: string) => key.replaceAll(KEY_SEPARATOR, ' + ');

/** The normalised match key of a record on one side (null: no value in a match field, or no match field). */
export function keyFunction(m: MappingPlan) {
  const primary = m.spec.fields.find((f) => f.id === m.matchOn.primary);
  const secondary = m.spec.fields.find((f) => f.id === m.matchOn.secondary);
  return (side: 'left' | 'right', r: RecordData): string | null => {
    if (!primary) return null;
    const first = matchKeyOf((r.fields[primary[side].id] ?? null) as CanonicalValue);
    if (first === null || !secondary) return first;
    const second = matchKeyOf((r.fields[secondary[side].id] ?? null) as CanonicalValue);
    return second === null ? null : `${first}${KEY_SEPARATOR}${second}`;
  };
}

/** Which match fields keys were made with: keys made with others must be made again. */
export const matchFieldsOf = (m: MappingPlan) => `${m.matchOn.primary ?? ''}|${m.matchOn.secondary ?? ''}`;
