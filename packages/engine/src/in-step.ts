import { convertValue } from './compatibility';
import { carryOptions } from './options';
import type { Shadow, TableMappingSpec } from './reconcile';
import type { CanonicalValue, RecordData, Side } from './types';
import { normalizeValue, valuesEqual, valuesEqualAcross } from './values';

/** One way a linked pair is not in step: a side's live value is not what was last synced. */
export type Difference = {
  fieldMappingId: string;
  side: Side;
  live: CanonicalValue;
  synced: CanonicalValue;
};

/**
 * Whether a linked pair is in step, from the live records of both sides (null: not found there):
 * each side's value of every mapped field must be what the shadow says it last synced, and a field
 * that flows both ways must hold the same value on both sides. A missing record differs in every
 * field. Answers the differences; none means in step.
 */
export function differencesFromShadow(
  mapping: TableMappingSpec,
  shadow: Shadow | null,
  left: RecordData | null,
  right: RecordData | null,
): Difference[] {
  const out: Difference[] = [];
  const live = (record: RecordData | null, fieldId: string, type: string): CanonicalValue => {
    if (!record) return null;
    const n = normalizeValue(type, record.fields[fieldId] ?? null);
    return n.ok ? n.value : (record.fields[fieldId] ?? null);
  };
  for (const fm of mapping.fields) {
    const sf = shadow?.[fm.id] ?? null;
    const l = live(left, fm.left.id, fm.left.type);
    const r = live(right, fm.right.id, fm.right.type);
    for (const [side, record, value] of [
      ['left', left, l],
      ['right', right, r],
    ] as const) {
      const synced = sf ? (side === 'left' ? sf.l : sf.r) : null;
      if (!record || (sf && !valuesEqual(value, synced)))
        out.push({ fieldMappingId: fm.id, side, live: value, synced });
    }
    // Both sides as synced, yet apart: a two-way field whose values do not match (a shadow that
    // moved without the write it stood for would show here).
    // (Linked-record ids differ by side by nature: those are compared through the shadow only.)
    if (
      left &&
      right &&
      fm.direction === 'both' &&
      mapping.direction === 'both' &&
      fm.left.type !== 'relations'
    ) {
      const carried = carryOptions(l, 'left', fm);
      const asRight = carried.ok ? convertValue(carried.value, fm.left, fm.right) : carried;
      if (
        asRight.ok &&
        !valuesEqualAcross(asRight.value, fm.left, r, fm.right) &&
        !out.some((d) => d.fieldMappingId === fm.id)
      )
        out.push({ fieldMappingId: fm.id, side: 'right', live: r, synced: asRight.value });
    }
  }
  return out;
}
