import type { CanonicalValue, FieldType, Problem, RecordData, Side } from './types';
import { stableJson } from './values';

export type MatchKey = { leftFieldId: string; rightFieldId: string; type: FieldType };
export type MatchInput = { left: RecordData[]; right: RecordData[]; key: MatchKey; secondary?: MatchKey };
export type Duplicate = { side: Side; key: string; recordIds: string[] };
export type MatchResult = {
  pairs: { leftId: string; rightId: string; key: string }[];
  leftOnly: string[];
  rightOnly: string[];
  duplicates: Duplicate[];
  missingKeys: { side: Side; recordId: string }[];
  problems: Problem[];
};

/** The key a value matches on: trimmed and case-folded text (emails, urls, names), exact otherwise. */
export function matchKeyOf(value: CanonicalValue): string | null {
  if (value === null) return null;
  if (typeof value === 'string') {
    const k = value.normalize('NFKC').trim().replaceAll(/\s+/g, ' ').toLowerCase();
    return k === '' ? null : k;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return stableJson(value);
}

function keyOf(
  record: RecordData,
  key: MatchKey,
  secondary: MatchKey | undefined,
  side: Side,
): string | null {
  const first = matchKeyOf(record.fields[side === 'left' ? key.leftFieldId : key.rightFieldId] ?? null);
  if (first === null) return null;
  if (!secondary) return first;
  const second = matchKeyOf(
    record.fields[side === 'left' ? secondary.leftFieldId : secondary.rightFieldId] ?? null,
  );
  return second === null ? null : `${first}\u0000${second}`;
}

function group(records: RecordData[], side: Side, input: MatchInput, missing: MatchResult['missingKeys']) {
  const byKey = new Map<string, string[]>();
  for (const r of records) {
    const k = keyOf(r, input.key, input.secondary, side);
    if (k === null) {
      missing.push({ side, recordId: r.id });
      continue;
    }
    const ids = byKey.get(k);
    if (ids) ids.push(r.id);
    else byKey.set(k, [r.id]);
  }
  return byKey;
}

/**
 * Pairs the records of both sides on their normalised keys for the first sync. A key held by several
 * records on one side pairs nothing (a duplicate the user resolves); a record without a key is listed.
 * Linear in the number of records; a record is never paired twice.
 */
export function matchRecords(input: MatchInput): MatchResult {
  const missingKeys: MatchResult['missingKeys'] = [];
  const left = group(input.left, 'left', input, missingKeys);
  const right = group(input.right, 'right', input, missingKeys);
  const result: MatchResult = {
    pairs: [],
    leftOnly: [],
    rightOnly: [],
    duplicates: [],
    missingKeys,
    problems: [],
  };
  const shown = (k: string) => k.replace('\u0000', ' + ');
  for (const [key, leftIds] of left) {
    const rightIds = right.get(key);
    if (leftIds.length > 1) result.duplicates.push({ side: 'left', key, recordIds: leftIds });
    if (rightIds && rightIds.length > 1) result.duplicates.push({ side: 'right', key, recordIds: rightIds });
    if (leftIds.length > 1 || (rightIds && rightIds.length > 1)) {
      result.problems.push({
        code: 'duplicate_key',
        message: `Several records share the key "${shown(key)}"; make it unique on each side so they can be matched.`,
      });
      continue;
    }
    if (rightIds) result.pairs.push({ leftId: leftIds[0] as string, rightId: rightIds[0] as string, key });
    else result.leftOnly.push(leftIds[0] as string);
  }
  for (const [key, rightIds] of right) {
    if (left.has(key)) continue;
    if (rightIds.length > 1) {
      result.duplicates.push({ side: 'right', key, recordIds: rightIds });
      result.problems.push({
        code: 'duplicate_key',
        message: `Several records on the right share the key "${shown(key)}".`,
      });
    } else result.rightOnly.push(rightIds[0] as string);
  }
  for (const m of missingKeys) {
    result.problems.push({
      code: 'missing_key',
      side: m.side,
      recordId: m.recordId,
      message: `This ${m.side} record has no value in the match field, so it cannot be matched.`,
    });
  }
  return result;
}
