import { type CanonicalValue, type FieldSpec, fail, ok, type Result, type Side } from './types';

/** One option of the left field paired with one of the right field (select <-> select, text <-> select). */
export type OptionPair = { left: string; right: string };

/** The part of a field mapping (reconcile's FieldMapping) that carrying options reads. */
export type OptionFields = { left: FieldSpec; right: FieldSpec; optionPairs?: OptionPair[] | null };

/** Options compared as people read them: case, outer spaces and separators (`closed_won`, `Closed-Won`) aside. */
export function optionKey(option: string): string {
  return option
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
}

/**
 * Words that name the same stage in different apps, tried only after exact names pair: a CRM's
 * "Customer" is a pipeline's "Won", its "Churned" the pipeline's "Lost".
 */
const SYNONYMS: string[][] = [
  ['won', 'closed won', 'customer', 'client'],
  ['lost', 'closed lost', 'churned', 'former customer'],
  ['lead', 'prospect', 'new'],
  ['qualified', 'contacted', 'engaged'],
  ['active', 'open', 'in progress', 'ongoing', 'proposal', 'negotiation'],
  ['inactive', 'closed', 'done', 'complete', 'completed'],
  ['yes', 'true', 'on'],
  ['no', 'false', 'off'],
  ['high', 'urgent'],
  ['medium', 'normal'],
  ['low', 'minor'],
];
const synonymGroup = new Map<string, number>();
for (const [i, group] of SYNONYMS.entries()) for (const word of group) synonymGroup.set(word, i);

/**
 * Pairs two lists of options (a select's choices, or the distinct values of a text column): same
 * name first (case and separators aside), then synonyms among those left. Each option pairs once.
 */
export function proposeOptionPairs(left: string[], right: string[]): OptionPair[] {
  const pairs: OptionPair[] = [];
  const freeRight = new Map<string, string>();
  for (const r of right) if (!freeRight.has(optionKey(r))) freeRight.set(optionKey(r), r);
  const unpaired: string[] = [];
  for (const l of new Set(left)) {
    const r = freeRight.get(optionKey(l));
    if (r === undefined) unpaired.push(l);
    else {
      pairs.push({ left: l, right: r });
      freeRight.delete(optionKey(l));
    }
  }
  for (const l of unpaired) {
    const group = synonymGroup.get(optionKey(l));
    if (group === undefined) continue;
    const match = [...freeRight].find(([key]) => synonymGroup.get(key) === group);
    if (!match) continue;
    pairs.push({ left: l, right: match[1] });
    freeRight.delete(match[0]);
  }
  return pairs;
}

const isSelect = (f: FieldSpec) => f.type === 'single_select' || f.type === 'multi_select';

/**
 * The options a target field can hold, when it is strict about them: a select with known choices
 * that the app does not extend on write (Notion's select does; its status, Airtable's and
 * PostgreSQL enums do not).
 */
function strictChoices(field: FieldSpec): string[] | null {
  if (!isSelect(field) || field.options?.openChoices) return null;
  const choices = field.options?.choices;
  return choices && choices.length > 0 ? choices : null;
}

/**
 * One option carried to the other side: the field mapping's pair for it, else the target's option
 * of the same name (case aside), else itself where the target takes any value. A value the target
 * cannot hold fails with what to do, before the app refuses it.
 */
function carryOption(value: string, from: Side, fm: OptionFields): Result<string> {
  const [source, target]: [Side, Side] = from === 'left' ? ['left', 'right'] : ['right', 'left'];
  const key = optionKey(value);
  const pair = fm.optionPairs?.find((p) => optionKey(p[source]) === key);
  if (pair) return ok(pair[target]);
  const to = target === 'left' ? fm.left : fm.right;
  const choices = to.options?.choices ?? [];
  const same = choices.find((c) => optionKey(c) === key);
  if (same !== undefined) return ok(same);
  const strict = strictChoices(to);
  if (!strict) return ok(value);
  const listed = strict.slice(0, 8).join(', ') + (strict.length > 8 ? ', …' : '');
  return fail(
    'unmapped_option',
    `"${value}" is not an option of ${to.name}; pair it with one of ${listed} in the field mapping.`,
  );
}

/**
 * A value of a select (or of a text field mapped to a select) with its options carried across by
 * the field mapping's option pairs; other values are returned as they are.
 */
export function carryOptions(value: CanonicalValue, from: Side, fm: OptionFields): Result<CanonicalValue> {
  const source = from === 'left' ? fm.left : fm.right;
  const target = from === 'left' ? fm.right : fm.left;
  if (value === null || !(isSelect(source) || isSelect(target))) return ok(value);
  if (typeof value === 'string') return carryOption(value, from, fm);
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) return ok(value);
  const carried: string[] = [];
  for (const v of value) {
    const c = carryOption(v, from, fm);
    if (!c.ok) return c;
    carried.push(c.value);
  }
  return ok([...new Set(carried)].sort());
}
