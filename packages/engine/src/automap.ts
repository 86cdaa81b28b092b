import { checkFieldMapping } from './compatibility';
import { matchKeyOf } from './match';
import { type OptionPair, proposeOptionPairs } from './options';
import { type CanonicalValue, type Direction, FIELD_TYPES, type FieldSpec, type FieldType } from './types';

/**
 * Automatic mapping proposals: which tables of two apps hold the same things, and which of their
 * fields are the same field. Rules only (no network): normalised names, a small synonym list,
 * the compatibility matrix, and, when sample rows are given, overlapping values. Everything is a
 * proposal with a score (0..1) and a reason a person can read; nothing is applied here.
 */

export type AutomapColumn = {
  id: string;
  name: string;
  /** A canonical field type; anything else is treated as json (as the runtime does). */
  type: FieldType | string;
  readOnly?: boolean;
  options?: Record<string, unknown>;
  /** The app's record id of this table (primary key): each app keeps its own ids. */
  primaryKey?: boolean;
  /** Known to be unique in its table (a unique constraint, a primary key). */
  unique?: boolean;
};
/** What a column's kind is told from: its name, type, options and primary-key flag. */
export type ColumnKindInfo = Pick<AutomapColumn, 'name' | 'type' | 'options' | 'primaryKey'>;
export type TableInfo = { id: string; name: string; columns: AutomapColumn[] };
/** Sample values by column id (what a first page of the table held). */
export type SampleValues = Record<string, readonly unknown[]>;
export type FieldSamples = { left?: SampleValues; right?: SampleValues };

export type NameMatch = {
  score: number;
  kind: 'exact' | 'synonym' | 'similar' | 'none';
  reason: string | null;
};

export type FieldProposal = {
  leftColumnId: string;
  rightColumnId: string;
  leftColumnName: string;
  rightColumnName: string;
  score: number;
  explanation: string;
  reasons: string[];
  nameMatch: NameMatch['kind'];
  /** Share of distinct sample values both sides hold (Jaccard), null without samples. */
  sampleOverlap: number | null;
  /** Whether the compatibility matrix allows the pair; false only when unsupported pairs were asked for. */
  supported: boolean;
  /** The matrix's note (one-way types, read-only side) or its refusal. */
  compatibilityNote: string | null;
  syncDirection: Direction;
  /** For a select on either side: its options paired with the other side's (choices or sampled values). */
  optionPairs?: OptionPair[] | null;
  /** Options (or sampled values) of each side that found no partner: they need the user's pairing. */
  unpairedOptions?: { left: string[]; right: string[] } | null;
};

export type MatchFieldProposal = {
  leftColumnId: string;
  rightColumnId: string;
  /** A second pair matched together with the first when the first alone repeats on a side (first + last name). */
  secondaryLeftColumnId: string | null;
  secondaryRightColumnId: string | null;
  score: number;
  /** Why, for a person: "15 of 15 organisation names also exist in companies; unique on both sides". */
  reason: string;
  /** The field names and the reason. */
  explanation: string;
};

export type UnmatchedColumn = { columnId: string; name: string; reason: string };

export type FieldAutomap = {
  proposals: FieldProposal[];
  /** The pair to match existing records on during the first sync (matchOnFieldId is its left column). */
  matchField: MatchFieldProposal | null;
  unmatchedLeft: UnmatchedColumn[];
  unmatchedRight: UnmatchedColumn[];
};

export type FieldAutomapOptions = {
  /** Also propose pairs the compatibility matrix refuses, flagged supported: false (dev flag). */
  allowUnsupported?: boolean;
  /** Below this a pair is not proposed. */
  minScore?: number;
  /**
   * Table pairs (remote ids) already mapped to each other in this sync: two linked-record fields
   * pair only when they link to such a pair (their ids then map through that mapping's links).
   */
  linkedTables?: { left: string; right: string }[];
  /** The two tables' names, for the match field's reason ("company names also exist in organisations"). */
  tableNames?: { left: string; right: string };
};

/** Whether a field's `references` option names a table (PostgreSQL adds `.column` after it). */
export const refersTo = (references: unknown, tableRemoteId: string) =>
  typeof references === 'string' &&
  (references === tableRemoteId || references.startsWith(`${tableRemoteId}.`));

export type TableProposal = {
  leftTableId: string;
  rightTableId: string;
  leftTableName: string;
  rightTableName: string;
  score: number;
  explanation: string;
  reasons: string[];
  nameMatch: NameMatch['kind'];
  fieldsMatched: number;
  fieldsCompared: number;
  /** The field (and second field) to match existing records on, from the same field pairs. */
  matchField: MatchFieldProposal | null;
};
export type TableAutomap = {
  proposals: TableProposal[];
  unmatchedLeft: { tableId: string; name: string }[];
  unmatchedRight: { tableId: string; name: string }[];
};
export type TableAutomapOptions = {
  /** Samples by table id, used for the field overlap between tables. */
  samples?: Record<string, SampleValues>;
  minScore?: number;
};

export const FIELD_MIN_SCORE = 0.5;
export const TABLE_MIN_SCORE = 0.35;

// ---------------------------------------------------------------------------------------------
// Names

const IRREGULAR: Record<string, string> = { people: 'person', children: 'child', men: 'man', women: 'woman' };

export function singular(token: string): string {
  const irregular = IRREGULAR[token];
  if (irregular) return irregular;
  if (token.length > 4 && token.endsWith('ies')) return `${token.slice(0, -3)}y`;
  if (/(ss|x|ch|sh|us)es$/.test(token) && token.length > 4) return token.slice(0, -2);
  if (token.length > 3 && token.endsWith('s') && !/(ss|us|is)$/.test(token)) return token.slice(0, -1);
  return token;
}

/** A small memo that forgets everything when full (names repeat a lot across tables). */
function memo<T>(limit = 20_000) {
  const m = new Map<string, T>();
  return (key: string, make: () => T): T => {
    const hit = m.get(key);
    if (hit !== undefined) return hit;
    if (m.size >= limit) m.clear();
    const v = make();
    m.set(key, v);
    return v;
  };
}
const tokenMemo = memo<string[]>();
const compareMemo = memo<NameMatch>();

/** Words of a name: camelCase, snake_case, kebab-case and spaces split, lower-cased, singular. */
export function nameTokens(name: string): string[] {
  return tokenMemo(name, () => splitName(name));
}
function splitName(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 0)
    .map(singular);
}

/** The normalised name: "First Name", "first_name", "firstName" and "firstnames" are all "firstname". */
export const nameKey = (name: string) => nameTokens(name).join('');

type Synonyms = { byKey: Map<string, string>; label: Map<string, string> };
function synonyms(groups: Record<string, string[]>): Synonyms {
  const byKey = new Map<string, string>();
  const label = new Map<string, string>();
  for (const [concept, names] of Object.entries(groups)) {
    label.set(concept, concept);
    for (const n of names) byKey.set(nameKey(n), concept);
  }
  return { byKey, label };
}

const TABLE_SYNONYMS = synonyms({
  people: [
    'people',
    'persons',
    'contacts',
    'subscribers',
    'members',
    'users',
    'customers',
    'clients',
    'leads',
    'audience',
    'recipients',
  ],
  organisations: [
    'companies',
    'organisations',
    'organizations',
    'orgs',
    'accounts',
    'businesses',
    'firms',
    'employers',
  ],
  deals: ['deals', 'opportunities', 'opps', 'pipeline'],
  tasks: ['tasks', 'todos', 'to_dos', 'activities', 'actions'],
  products: ['products', 'items', 'catalog', 'catalogue', 'skus'],
  orders: ['orders', 'purchases', 'sales', 'transactions'],
  invoices: ['invoices', 'bills'],
  tickets: ['tickets', 'issues', 'cases', 'requests'],
  events: ['events', 'meetings', 'appointments'],
  notes: ['notes', 'comments'],
  posts: ['posts', 'articles', 'entries', 'stories', 'blog_posts'],
  projects: ['projects', 'initiatives'],
  employees: ['employees', 'staff', 'team', 'team_members'],
});

const FIELD_SYNONYMS = synonyms({
  email: [
    'email',
    'email_address',
    'e_mail',
    'mail',
    'emailaddr',
    'primary_email',
    'work_email',
    'contact_email',
  ],
  first_name: ['first_name', 'firstname', 'given_name', 'forename', 'fname', 'first'],
  last_name: ['last_name', 'lastname', 'surname', 'family_name', 'lname', 'last'],
  full_name: ['full_name', 'name', 'display_name', 'contact_name', 'person_name', 'fullname'],
  company: [
    'company',
    'company_name',
    'organisation',
    'organization',
    'organisation_name',
    'organization_name',
    'org',
    'org_name',
    'account',
    'account_name',
    'employer',
    'business',
  ],
  phone: ['phone', 'phone_number', 'mobile', 'mobile_phone', 'mobile_number', 'cell', 'telephone', 'tel'],
  created_at: [
    'created_at',
    'created',
    'created_on',
    'created_date',
    'creation_date',
    'created_time',
    'signup_date',
    'signed_up_at',
    'date_added',
    'registered_at',
    'joined_at',
  ],
  updated_at: [
    'updated_at',
    'updated',
    'updated_on',
    'modified_at',
    'modified',
    'last_modified',
    'last_updated',
  ],
  website: ['website', 'url', 'homepage', 'home_page', 'site', 'web', 'website_url', 'domain'],
  address: ['address', 'street', 'street_address', 'address_line_1', 'address1'],
  city: ['city', 'town', 'locality'],
  postcode: ['postcode', 'post_code', 'zip', 'zip_code', 'zipcode', 'postal_code'],
  country: ['country', 'country_code', 'nation'],
  region: ['region', 'state', 'province', 'county'],
  job_title: ['job_title', 'title', 'position', 'role'],
  notes: ['notes', 'note', 'description', 'comments', 'comment', 'bio', 'about'],
  tags: ['tags', 'labels', 'tag', 'label', 'categories', 'category'],
  status: ['status', 'stage', 'lifecycle_stage', 'pipeline_stage', 'lifecycle'],
  employees: ['employees', 'employee_count', 'headcount', 'company_size', 'size', 'number_of_employees'],
  revenue: ['revenue', 'annual_revenue', 'arr', 'yearly_revenue'],
  amount: ['amount', 'value', 'deal_value', 'price', 'total'],
  birthday: ['birthday', 'date_of_birth', 'dob', 'birth_date', 'birthdate'],
  owner: ['owner', 'assignee', 'assigned_to', 'account_owner'],
  subscribed_at: ['subscribed_at', 'opted_in_at', 'opt_in_date', 'consent_date', 'subscription_date'],
});

/** Words that say little alone: two names sharing only these are not similar. */
const GENERIC_TOKENS = new Set([
  'id',
  'at',
  'on',
  'of',
  'the',
  'a',
  'name',
  'date',
  'time',
  'number',
  'num',
  'no',
  'type',
  'code',
  'value',
  'is',
  'has',
  'count',
  'first',
  'last',
  'new',
  'old',
]);

function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[b.length] ?? Math.max(a.length, b.length);
}

function compareNames(a: string, b: string, syn: Synonyms): NameMatch {
  const ka = nameKey(a);
  const kb = nameKey(b);
  if (ka.length === 0 || kb.length === 0) return { score: 0, kind: 'none', reason: null };
  if (ka === kb)
    return { score: 1, kind: 'exact', reason: a === b ? 'same name' : `same name (${a} = ${b})` };
  const ca = syn.byKey.get(ka);
  if (ca !== undefined && ca === syn.byKey.get(kb))
    return {
      score: 0.85,
      kind: 'synonym',
      reason: `synonyms: ${a} ~ ${b} (both ${ca.replaceAll('_', ' ')})`,
    };
  // Word overlap, each word standing for its synonym group; generic words count a quarter.
  const concept = (t: string) => (GENERIC_TOKENS.has(t) ? t : (syn.byKey.get(t) ?? t));
  const ta = new Set(nameTokens(a).map(concept));
  const tb = new Set(nameTokens(b).map(concept));
  const weight = (t: string) => (GENERIC_TOKENS.has(t) ? 0.25 : 1);
  let shared = 0;
  let union = 0;
  let sharedMeaningful = false;
  for (const t of new Set([...ta, ...tb])) {
    union += weight(t);
    if (ta.has(t) && tb.has(t)) {
      shared += weight(t);
      if (!GENERIC_TOKENS.has(t)) sharedMeaningful = true;
    }
  }
  let best: NameMatch = { score: 0, kind: 'none', reason: null };
  if (sharedMeaningful && union > 0) {
    const j = shared / union;
    best =
      j >= 0.999
        ? { score: 0.8, kind: 'synonym', reason: `same words: ${a} ~ ${b}` }
        : { score: 0.3 + 0.45 * j, kind: 'similar', reason: `similar names: ${a} ~ ${b}` };
  }
  const minLen = Math.min(ka.length, kb.length);
  // Spelled alike but each a known, different concept ("State" a region, "stage" a status): not a typo.
  const cb = syn.byKey.get(kb);
  const differentConcepts = ca !== undefined && cb !== undefined && ca !== cb;
  if (minLen >= 4 && !differentConcepts) {
    const sim = 1 - levenshtein(ka, kb) / Math.max(ka.length, kb.length);
    if (sim >= 0.8 && 0.75 * sim > best.score)
      best = { score: 0.75 * sim, kind: 'similar', reason: `similar names: ${a} ~ ${b}` };
  }
  return { ...best, score: round(best.score) };
}

export const compareTableNames = (a: string, b: string) => compareNames(a, b, TABLE_SYNONYMS);
export const compareFieldNames = (a: string, b: string) =>
  compareMemo(`${a}\u0000${b}`, () => compareNames(a, b, FIELD_SYNONYMS));

// ---------------------------------------------------------------------------------------------
// Samples

/** A sample value as comparable text: trimmed, lower-case, URLs without scheme, phones as digits. */
export function normaliseSample(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  let s: string;
  if (v instanceof Date) s = v.toISOString();
  else if (Array.isArray(v))
    s = v
      .map((x) => normaliseSample(x) ?? '')
      .sort()
      .join(',');
  else if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    s = 'json' in o ? JSON.stringify(o.json) : 'url' in o ? String(o.url) : JSON.stringify(o);
  } else s = String(v);
  s = s.trim().toLowerCase().replace(/\s+/g, ' ');
  if (s === '' || s === '[]' || s === '{}' || s === 'null') return null;
  s = s.replace(/^https?:\/\/(www\.)?/, '').replace(/\/$/, '');
  if (/^\+?[\d\s().-]{7,}$/.test(s) && /\d{3}/.test(s.replace(/\D/g, ''))) s = s.replace(/\D/g, '');
  return s;
}

type SampleStats = { distinct: Set<string>; nonNull: number };
function statsOf(values: readonly unknown[] | undefined): SampleStats | null {
  if (!values) return null;
  const distinct = new Set<string>();
  let nonNull = 0;
  for (const v of values) {
    const n = normaliseSample(v);
    if (n === null) continue;
    nonNull++;
    distinct.add(n);
  }
  return { distinct, nonNull };
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  const union = a.size + b.size - both;
  return union === 0 ? 0 : both / union;
}

const looksUnique = (s: SampleStats | null) => s !== null && s.nonNull >= 3 && s.distinct.size === s.nonNull;
const hasDuplicates = (s: SampleStats | null) => s !== null && s.nonNull >= 3 && s.distinct.size < s.nonNull;

// ---------------------------------------------------------------------------------------------
// Fields

const asType = (t: string): FieldType =>
  (FIELD_TYPES as readonly string[]).includes(t) ? (t as FieldType) : 'json';
const specOf = (c: AutomapColumn): FieldSpec => ({
  id: c.id,
  name: c.name,
  type: asType(c.type),
  readOnly: c.readOnly ?? false,
});
/** A column holding record ids of its own app (primary key or foreign key): its values mean nothing elsewhere. */
const isRecordIdColumn = (c: ColumnKindInfo) =>
  c.primaryKey === true || typeof c.options?.references === 'string' || nameKey(c.name) === 'id';
const VALUE_TYPES = new Set<FieldType>(['text', 'email', 'url', 'phone', 'rich_text']);
const KEY_NAMES = new Set([
  'externalid',
  'uuid',
  'sku',
  'username',
  'slug',
  'key',
  'code',
  'reference',
  'ref',
]);
const round = (n: number) => Math.round(n * 1000) / 1000;
const pct = (n: number) => `${Math.round(n * 100)}%`;

type Candidate = FieldProposal & { nameScore: number };

/**
 * A field name without its own table's noun in front ("Company name" in Companies is "name",
 * "Deal stage" in Deals is "stage"): apps such as HubSpot label fields so, others do not.
 */
export function withoutTableNoun(field: string, table: string | undefined): string {
  if (!table) return field;
  const tokens = nameTokens(field);
  const noun = nameTokens(table).at(-1);
  return tokens.length > 1 && noun !== undefined && tokens[0] === noun ? tokens.slice(1).join(' ') : field;
}

/** The better of the names as given and without their tables' nouns. */
function compareColumnNames(l: AutomapColumn, r: AutomapColumn, tables: FieldAutomapOptions['tableNames']) {
  const given = compareFieldNames(l.name, r.name);
  const [ln, rn] = [withoutTableNoun(l.name, tables?.left), withoutTableNoun(r.name, tables?.right)];
  if (given.kind === 'exact' || (ln === l.name && rn === r.name)) return given;
  const bare = compareFieldNames(ln, rn);
  return bare.score > given.score
    ? { ...bare, reason: bare.reason && `${bare.reason} (${l.name} ~ ${r.name})` }
    : given;
}

function scorePair(
  l: AutomapColumn,
  r: AutomapColumn,
  ls: SampleStats | null,
  rs: SampleStats | null,
  options: FieldAutomapOptions,
): Candidate | null {
  const name = compareColumnNames(l, r, options.tableNames);
  if (asType(l.type) === 'relations' || asType(r.type) === 'relations')
    return relationPair(l, r, name, options);
  const check = checkFieldMapping(specOf(l), specOf(r), 'both');
  if (!check.ok && !(options.allowUnsupported && name.score >= 0.85)) return null;
  const lt = asType(l.type);
  const rt = asType(r.type);
  const reasons: string[] = [];
  if (name.reason) reasons.push(name.reason);
  if (check.ok) reasons.push(lt === rt ? `same type (${lt})` : `compatible types (${lt} ~ ${rt})`);
  else reasons.push(`unsupported: ${check.reason}`);
  let overlap: number | null = null;
  if (ls && rs && ls.distinct.size > 0 && rs.distinct.size > 0) {
    overlap = round(jaccard(ls.distinct, rs.distinct));
    const both = [...ls.distinct].filter((x) => rs.distinct.has(x)).length;
    if (both > 0)
      reasons.push(`${both} of ${ls.distinct.size + rs.distinct.size - both} sample values in common`);
  }
  // Record ids of each app are not the same field, unless the values say so.
  if ((isRecordIdColumn(l) || isRecordIdColumn(r)) && (overlap === null || overlap < 0.5)) return null;
  const typeScore = !check.ok ? 0 : lt === rt ? 1 : check.effectiveDirection === 'both' ? 0.7 : 0.4;
  const nameBased = name.score > 0 ? 0.8 * name.score + 0.2 * typeScore : 0;
  // Overlapping values alone count only for values that identify something (not yes/no, small numbers).
  const valueOnlyOk =
    name.score > 0 ||
    (VALUE_TYPES.has(lt) &&
      VALUE_TYPES.has(rt) &&
      (ls?.distinct.size ?? 0) >= 5 &&
      (rs?.distinct.size ?? 0) >= 5);
  const valueBased = overlap !== null && overlap >= 0.2 && valueOnlyOk ? 0.3 + 0.6 * overlap : 0;
  const score = round(1 - (1 - nameBased) * (1 - valueBased));
  if (score <= 0) return null;
  const note = check.ok ? check.note : check.reason;
  if (check.ok && check.effectiveDirection !== 'both' && check.note) reasons.push(check.note);
  return {
    leftColumnId: l.id,
    rightColumnId: r.id,
    leftColumnName: l.name,
    rightColumnName: r.name,
    score,
    explanation: reasons.join('; '),
    reasons,
    nameMatch: name.kind,
    sampleOverlap: overlap,
    supported: check.ok,
    compatibilityNote: note,
    syncDirection: check.ok ? check.effectiveDirection : 'both',
    nameScore: name.score,
  };
}

/**
 * Two linked-record fields pair when the tables they link to are mapped to each other: that is
 * what makes their ids translatable, whatever the fields are called.
 */
function relationPair(
  l: AutomapColumn,
  r: AutomapColumn,
  name: ReturnType<typeof compareFieldNames>,
  options: FieldAutomapOptions,
): Candidate | null {
  if (asType(l.type) !== 'relations' || asType(r.type) !== 'relations') return null;
  const pair = options.linkedTables?.find(
    (p) => refersTo(l.options?.references, p.left) && refersTo(r.options?.references, p.right),
  );
  if (!pair) return null;
  const check = checkFieldMapping(specOf(l), specOf(r), 'both');
  if (!check.ok) return null;
  const reasons = [
    ...(name.reason ? [name.reason] : []),
    `both link to tables synced with each other (${pair.left} ↔ ${pair.right})`,
  ];
  return {
    leftColumnId: l.id,
    rightColumnId: r.id,
    leftColumnName: l.name,
    rightColumnName: r.name,
    score: round(0.85 + 0.15 * name.score),
    explanation: reasons.join('; '),
    reasons,
    nameMatch: name.kind,
    sampleOverlap: null,
    supported: true,
    compatibilityNote: check.note,
    syncDirection: check.effectiveDirection,
    nameScore: name.score,
  };
}

/**
 * Highest score first; on a tie a pair that syncs both ways before one that only can one way (a
 * writable "Full name" before Salesforce's read-only "Full Name" for the other app's full_name), then
 * the better name match, then the original column order.
 */
function greedy<T extends { score: number; nameScore: number; syncDirection?: Direction }>(
  candidates: T[],
  leftKey: (c: T) => string,
  rightKey: (c: T) => string,
): T[] {
  const oneWay = (c: T) => (c.syncDirection === undefined || c.syncDirection === 'both' ? 0 : 1);
  const sorted = candidates
    .map((c, i) => ({ c, i }))
    .sort(
      (a, b) =>
        b.c.score - a.c.score || oneWay(a.c) - oneWay(b.c) || b.c.nameScore - a.c.nameScore || a.i - b.i,
    );
  const usedL = new Set<string>();
  const usedR = new Set<string>();
  const chosen: T[] = [];
  for (const { c } of sorted) {
    if (usedL.has(leftKey(c)) || usedR.has(rightKey(c))) continue;
    usedL.add(leftKey(c));
    usedR.add(rightKey(c));
    chosen.push(c);
  }
  return chosen;
}

// ---------------------------------------------------------------------------------------------
// Match field

/** A sample value as the first sync matches it (match.ts): trimmed, spaces folded, lower case. */
function sampleMatchKey(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (typeof v === 'bigint') return String(v);
  try {
    return matchKeyOf(v as CanonicalValue);
  } catch {
    return null;
  }
}

/** Match keys of one column's samples, row by row (the rows of both columns of a side line up). */
type KeySamples = { keys: (string | null)[]; distinct: Set<string>; nonNull: number };
function keySamplesOf(values: readonly unknown[] | undefined): KeySamples | null {
  if (!values || values.length === 0) return null;
  return keySamplesFrom(values.map(sampleMatchKey));
}
function keySamplesFrom(keys: (string | null)[]): KeySamples {
  const distinct = new Set<string>();
  let nonNull = 0;
  for (const k of keys) {
    if (k === null) continue;
    nonNull++;
    distinct.add(k);
  }
  return { keys, distinct, nonNull };
}
/** Two columns as one key (first + last name), as match.ts builds it: both values or none. */
function combinedKeys(a: KeySamples, b: KeySamples): KeySamples {
  return keySamplesFrom(
    a.keys.map((k, i) => {
      const k2 = b.keys[i] ?? null;
      return k === null || k2 === null ? null : `${k}\u0000${k2}`;
    }),
  );
}

/** Distinct share a match field needs on each side, and the share of blank values it may have. */
export const MATCH_MIN_DISTINCT = 0.95;
export const MATCH_MAX_BLANK = 0.2;
const nearUnique = (s: KeySamples) =>
  s.nonNull >= 2 &&
  s.distinct.size / s.nonNull >= MATCH_MIN_DISTINCT &&
  (s.keys.length - s.nonNull) / s.keys.length <= MATCH_MAX_BLANK;

export type MatchKind = 'email' | 'id' | 'name' | 'domain' | 'phone' | 'text';
/** How much a kind of value says about being the same thing, emails first. */
const KIND_WEIGHT: Record<MatchKind, number> = {
  email: 0.2,
  id: 0.15,
  name: 0.12,
  domain: 0.12,
  phone: 0.1,
  text: 0.05,
};
const isEmailColumn = (c: ColumnKindInfo) =>
  asType(c.type) === 'email' ||
  FIELD_SYNONYMS.byKey.get(nameKey(c.name)) === 'email' ||
  nameTokens(c.name).includes('email');
const isKeyColumn = (c: ColumnKindInfo) => KEY_NAMES.has(nameKey(c.name)) || isRecordIdColumn(c);
const NAME_CONCEPTS = new Set(['full_name', 'first_name', 'last_name', 'company']);
/** What a column holds, for matching: null when its values cannot identify a record (dates, flags, selects). */
export function matchKindOf(c: ColumnKindInfo): MatchKind | null {
  const t = asType(c.type);
  if (t === 'relations') return null;
  if (isEmailColumn(c)) return 'email';
  if (isKeyColumn(c)) return 'id';
  if (!['text', 'url', 'phone', 'email'].includes(t)) return null;
  const concept = FIELD_SYNONYMS.byKey.get(nameKey(c.name));
  const tokens = nameTokens(c.name);
  if (t === 'url' || concept === 'website' || tokens.includes('domain')) return 'domain';
  if (t === 'phone' || concept === 'phone') return 'phone';
  if ((concept && NAME_CONCEPTS.has(concept)) || tokens.includes('name') || tokens.includes('title'))
    return 'name';
  return 'text';
}

const wordsOf = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
/** "email addresses", "full names": a column's name as a plural noun. */
export function pluralOf(name: string): string {
  const words = wordsOf(name);
  const last = words.pop() ?? 'value';
  const plural = /(s|x|ch|sh)$/.test(last)
    ? `${last}es`
    : /[^aeiou]y$/.test(last)
      ? `${last.slice(0, -1)}ies`
      : `${last}s`;
  return [...words, plural].join(' ');
}
/** "companies" -> "company": a table's name as the noun for one of its records. */
export const tableNoun = (name: string) => nameTokens(name).join(' ');

type MatchCandidate = {
  proposal: FieldProposal;
  left: AutomapColumn;
  right: AutomapColumn;
  kind: MatchKind;
  weight: number;
  ls: KeySamples;
  rs: KeySamples;
};
type SideNames = { left: string; right: string } | undefined;

/** "15 of 15 organisation names also exist in companies": counted from the smaller side. */
function overlapSentence(
  ls: KeySamples,
  rs: KeySamples,
  shared: number,
  plurals: { left: string; right: string },
  tables: SideNames,
): string {
  const fromLeft = ls.distinct.size <= rs.distinct.size;
  const side = fromLeft ? 'left' : 'right';
  const other = fromLeft ? 'right' : 'left';
  const field = plurals[side];
  const noun = tables ? `${tableNoun(tables[side])} ${field}` : `${field} on the ${side}`;
  const where = tables ? `in ${tables[other]}` : `on the ${other}`;
  const total = fromLeft ? ls.distinct.size : rs.distinct.size;
  return `${shared} of ${total} ${noun} also exist ${where}`;
}

function sharedKeys(a: Set<string>, b: Set<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const k of small) if (large.has(k)) n++;
  return n;
}

/**
 * The field (or two) to match existing records on in the first sync. With samples of both sides:
 * among the proposed pairs whose values can identify a record, those unique or nearly so on each
 * side (distinct share >= 0.95, few blanks) whose normalised values (matchKeyOf, as matching does)
 * also occur on the other side, ranked by that overlap (the smaller side's share of keys found on
 * the other) and then by kind (emails, then ids, names and domains); a pair repeating on a side
 * gets a second pair that makes it unique (first + last name). An email or identifier whose
 * samples do not meet is still proposed (the samples may hold different records), lower.
 * Without samples, emails and identifiers by name and type.
 */
function chooseMatchField(
  proposals: FieldProposal[],
  left: Map<string, AutomapColumn>,
  right: Map<string, AutomapColumn>,
  samples: FieldSamples,
  stats: { left: Map<string, SampleStats | null>; right: Map<string, SampleStats | null> },
  tables: SideNames,
): MatchFieldProposal | null {
  const candidates: MatchCandidate[] = [];
  const noSamples: FieldProposal[] = [];
  for (const p of proposals) {
    if (!p.supported) continue;
    const l = left.get(p.leftColumnId);
    const r = right.get(p.rightColumnId);
    if (!l || !r) continue;
    const lk = matchKindOf(l);
    const rk = matchKindOf(r);
    if (lk === null || rk === null) continue;
    const ls = keySamplesOf(samples.left?.[l.id]);
    const rs = keySamplesOf(samples.right?.[r.id]);
    if (!ls || !rs || ls.nonNull === 0 || rs.nonNull === 0) {
      noSamples.push(p);
      continue;
    }
    const kind = KIND_WEIGHT[lk] >= KIND_WEIGHT[rk] ? lk : rk;
    candidates.push({ proposal: p, left: l, right: r, kind, weight: KIND_WEIGHT[kind], ls, rs });
  }

  let best: MatchFieldProposal | null = null;
  const consider = (m: MatchFieldProposal) => {
    if (!best || m.score > best.score) best = m;
  };
  const valueScore = (overlap: number, weight: number) => round(Math.min(1, 0.45 + 0.35 * overlap + weight));
  const names = (c: MatchCandidate) => ({ left: pluralOf(c.left.name), right: pluralOf(c.right.name) });

  for (const c of candidates) {
    const shared = sharedKeys(c.ls.distinct, c.rs.distinct);
    const uniqueLeft = nearUnique(c.ls);
    const uniqueRight = nearUnique(c.rs);
    if (shared > 0 && uniqueLeft && uniqueRight) {
      const overlap = shared / Math.min(c.ls.distinct.size, c.rs.distinct.size);
      const reason = `${overlapSentence(c.ls, c.rs, shared, names(c), tables)}; unique on both sides`;
      consider({
        leftColumnId: c.left.id,
        rightColumnId: c.right.id,
        secondaryLeftColumnId: null,
        secondaryRightColumnId: null,
        score: valueScore(overlap, c.weight) - (c.proposal.syncDirection === 'both' ? 0 : 0.05),
        reason,
        explanation: `${c.left.name} ↔ ${c.right.name}: ${reason}`,
      });
    } else if (shared === 0 && uniqueLeft && uniqueRight && (c.kind === 'email' || c.kind === 'id')) {
      // Samples are the first rows of each table: they may hold different records.
      const reason = `${c.kind === 'email' ? 'email addresses identify the same person in both apps' : 'an identifier both apps have'}; unique on both sides; no sample values in common (the samples may hold different records)`;
      consider({
        leftColumnId: c.left.id,
        rightColumnId: c.right.id,
        secondaryLeftColumnId: null,
        secondaryRightColumnId: null,
        score: round(0.5 + c.weight / 2),
        reason,
        explanation: `${c.left.name} ↔ ${c.right.name}: ${reason}`,
      });
    } else if (shared > 0) {
      // Repeats on a side: a second pair may make it unique (first + last name).
      const repeats = [
        ...(uniqueLeft ? [] : [tables?.left ?? 'the left']),
        ...(uniqueRight ? [] : [tables?.right ?? 'the right']),
      ];
      for (const d of candidates) {
        if (d === c) continue;
        if (d.weight > c.weight) continue; // the better kind leads; it is tried with this one second
        const ls = combinedKeys(c.ls, d.ls);
        const rs = combinedKeys(c.rs, d.rs);
        if (!nearUnique(ls) || !nearUnique(rs)) continue;
        const both = sharedKeys(ls.distinct, rs.distinct);
        if (both === 0) continue;
        const overlap = both / Math.min(ls.distinct.size, rs.distinct.size);
        const pair = (side: 'left' | 'right') =>
          `${wordsOf(c[side].name).join(' ')} + ${wordsOf(d[side].name).join(' ')} pairs`;
        const sentence = overlapSentence(ls, rs, both, { left: pair('left'), right: pair('right') }, tables);
        const reason = `${sentence}; unique on both sides together (${c.left.name} alone repeats in ${repeats.join(' and ')})`;
        consider({
          leftColumnId: c.left.id,
          rightColumnId: c.right.id,
          secondaryLeftColumnId: d.left.id,
          secondaryRightColumnId: d.right.id,
          score: round(valueScore(overlap, c.weight) - 0.05),
          reason,
          explanation: `${c.left.name} + ${d.left.name} ↔ ${c.right.name} + ${d.right.name}: ${reason}`,
        });
      }
    }
  }
  if (best || noSamples.length === 0) return best;
  return ruleBasedMatchField(noSamples, left, right, stats);
}

/** Without samples to compare: emails and identifiers, by their names and types. */
function ruleBasedMatchField(
  proposals: FieldProposal[],
  left: Map<string, AutomapColumn>,
  right: Map<string, AutomapColumn>,
  stats: { left: Map<string, SampleStats | null>; right: Map<string, SampleStats | null> },
): MatchFieldProposal | null {
  let best: MatchFieldProposal | null = null;
  for (const p of proposals) {
    if (!p.supported) continue;
    const l = left.get(p.leftColumnId);
    const r = right.get(p.rightColumnId);
    if (!l || !r) continue;
    let score: number;
    const reasons: string[] = [];
    if (isEmailColumn(l) && isEmailColumn(r)) {
      score = 0.7;
      reasons.push('email addresses identify the same person in both apps');
    } else if ((isKeyColumn(l) || isKeyColumn(r)) && (p.sampleOverlap ?? 0) >= 0.5) {
      score = 0.55;
      reasons.push('an identifier both apps share');
    } else if (isKeyColumn(l) && isKeyColumn(r) && p.nameMatch === 'exact') {
      score = 0.5;
      reasons.push('an identifier with the same name');
    } else continue;
    const ls = stats.left.get(l.id) ?? null;
    const rs = stats.right.get(r.id) ?? null;
    if (hasDuplicates(ls) || hasDuplicates(rs)) {
      score -= 0.4;
      reasons.push('some sample values repeat, so it may not be unique');
    } else if ((looksUnique(ls) || l.unique) && (looksUnique(rs) || r.unique)) {
      score += 0.15;
      reasons.push('values look unique on both sides');
    }
    if (p.sampleOverlap !== null) {
      score += 0.15 * Math.min(1, p.sampleOverlap * 2);
      if (p.sampleOverlap > 0) reasons.push(`${pct(p.sampleOverlap)} of sample values in common`);
    }
    if (p.syncDirection !== 'both') score -= 0.05;
    score = round(Math.min(1, score));
    if (score >= 0.5 && (!best || score > best.score)) {
      const reason = reasons.join('; ');
      best = {
        leftColumnId: l.id,
        rightColumnId: r.id,
        secondaryLeftColumnId: null,
        secondaryRightColumnId: null,
        score,
        reason,
        explanation: `${l.name} ↔ ${r.name}: ${reason}`,
      };
    }
  }
  return best;
}

/**
 * Proposed field pairs between two tables, one-to-one, best first, each with its score, reasons,
 * the compatibility matrix's verdict and a sync direction (a read-only side only sends), plus the
 * field to match existing records on. Unsupported pairs are never proposed unless asked for.
 */
export function automapFields(
  leftColumns: AutomapColumn[],
  rightColumns: AutomapColumn[],
  samples: FieldSamples = {},
  options: FieldAutomapOptions = {},
): FieldAutomap {
  const minScore = options.minScore ?? FIELD_MIN_SCORE;
  const ls = new Map(leftColumns.map((c) => [c.id, statsOf(samples.left?.[c.id])]));
  const rs = new Map(rightColumns.map((c) => [c.id, statsOf(samples.right?.[c.id])]));
  const candidates: Candidate[] = [];
  for (const l of leftColumns) {
    for (const r of rightColumns) {
      const c = scorePair(l, r, ls.get(l.id) ?? null, rs.get(r.id) ?? null, options);
      if (c && c.score >= minScore) candidates.push(c);
    }
  }
  const chosen = greedy(
    candidates,
    (c) => c.leftColumnId,
    (c) => c.rightColumnId,
  ).map(({ nameScore: _n, ...p }) => p);
  const leftById = new Map(leftColumns.map((c) => [c.id, c]));
  const rightById = new Map(rightColumns.map((c) => [c.id, c]));
  const usedL = new Set(chosen.map((p) => p.leftColumnId));
  const usedR = new Set(chosen.map((p) => p.rightColumnId));
  const why = (c: AutomapColumn) =>
    asType(c.type) === 'relations'
      ? `a linked-record field (to ${String(c.options?.references ?? 'another table')}): it pairs with one of the other app once the two linked tables are mapped to each other`
      : isRecordIdColumn(c)
        ? typeof c.options?.references === 'string'
          ? `holds ids of linked records (${c.options.references}), which mean nothing in the other app`
          : "the app's own record id; each app keeps its own"
        : 'no field on the other side looks like it';
  return {
    proposals: chosen.map((p) => withOptionPairs(p, leftById, rightById, samples)),
    matchField: chooseMatchField(
      chosen,
      leftById,
      rightById,
      samples,
      { left: ls, right: rs },
      options.tableNames,
    ),
    unmatchedLeft: leftColumns
      .filter((c) => !usedL.has(c.id))
      .map((c) => ({ columnId: c.id, name: c.name, reason: why(c) })),
    unmatchedRight: rightColumns
      .filter((c) => !usedR.has(c.id))
      .map((c) => ({ columnId: c.id, name: c.name, reason: why(c) })),
  };
}

const isSelectColumn = (c: AutomapColumn | undefined) =>
  c !== undefined && (asType(c.type) === 'single_select' || asType(c.type) === 'multi_select');

/** A column's options: a select's choices, else the distinct values its samples hold. */
function optionsOf(c: AutomapColumn, samples: SampleValues | undefined): string[] {
  const choices = c.options?.choices;
  if (Array.isArray(choices) && choices.length > 0) return choices.map(String);
  const values = (samples?.[c.id] ?? []).flatMap((v) => (Array.isArray(v) ? v : [v]));
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.trim() !== ''))];
}

/** A field pair with a select on either side gets its options paired (see options.ts). */
function withOptionPairs(
  p: FieldProposal,
  leftById: Map<string, AutomapColumn>,
  rightById: Map<string, AutomapColumn>,
  samples: FieldSamples,
): FieldProposal {
  const l = leftById.get(p.leftColumnId);
  const r = rightById.get(p.rightColumnId);
  if (!l || !r || !(isSelectColumn(l) || isSelectColumn(r))) return p;
  const [lo, ro] = [optionsOf(l, samples.left), optionsOf(r, samples.right)];
  const optionPairs = proposeOptionPairs(lo, ro);
  const pairedL = new Set(optionPairs.map((x) => x.left));
  const pairedR = new Set(optionPairs.map((x) => x.right));
  return {
    ...p,
    optionPairs,
    unpairedOptions: { left: lo.filter((o) => !pairedL.has(o)), right: ro.filter((o) => !pairedR.has(o)) },
  };
}

// ---------------------------------------------------------------------------------------------
// Tables

const BOOKKEEPING = new Set(['created_at', 'updated_at']);
/** Fields every table has (ids, timestamps) say nothing about whether two tables hold the same things. */
const comparable = (c: AutomapColumn) =>
  !isRecordIdColumn(c) && !BOOKKEEPING.has(FIELD_SYNONYMS.byKey.get(nameKey(c.name)) ?? '');

/**
 * Proposed table pairs, one-to-one, best first: same names, then synonyms and similar names, then
 * how many of their fields match. A pair below the threshold is not proposed.
 */
export function automapTables(
  left: TableInfo[],
  right: TableInfo[],
  options: TableAutomapOptions = {},
): TableAutomap {
  const minScore = options.minScore ?? TABLE_MIN_SCORE;
  const candidates: (TableProposal & { nameScore: number })[] = [];
  for (const l of left) {
    for (const r of right) {
      const name = compareTableNames(l.name, r.name);
      const lc = l.columns.filter(comparable);
      const rc = r.columns.filter(comparable);
      const automapped = automapFields(
        lc,
        rc,
        { left: options.samples?.[l.id], right: options.samples?.[r.id] },
        { tableNames: { left: l.name, right: r.name } },
      );
      const fields = automapped.proposals;
      const compared = Math.min(lc.length, rc.length);
      const overlap = compared === 0 ? 0 : fields.reduce((s, p) => s + p.score, 0) / compared;
      const score = round(name.score > 0 ? 0.7 * name.score + 0.3 * overlap : 0.7 * overlap);
      if (score < minScore) continue;
      // Names that say nothing: one shared field (a "name", which most tables have) is no likeness.
      if (name.score === 0 && fields.length < 2) continue;
      const reasons: string[] = [];
      if (name.reason) reasons.push(name.reason);
      if (compared > 0) reasons.push(`${fields.length} of ${compared} fields match`);
      candidates.push({
        leftTableId: l.id,
        rightTableId: r.id,
        leftTableName: l.name,
        rightTableName: r.name,
        score,
        explanation: reasons.join('; '),
        reasons,
        nameMatch: name.kind,
        fieldsMatched: fields.length,
        fieldsCompared: compared,
        matchField: automapped.matchField,
        nameScore: name.score,
      });
    }
  }
  const proposals = greedy(
    candidates,
    (c) => c.leftTableId,
    (c) => c.rightTableId,
  ).map(({ nameScore: _n, ...p }) => p);
  const usedL = new Set(proposals.map((p) => p.leftTableId));
  const usedR = new Set(proposals.map((p) => p.rightTableId));
  return {
    proposals,
    unmatchedLeft: left.filter((t) => !usedL.has(t.id)).map((t) => ({ tableId: t.id, name: t.name })),
    unmatchedRight: right.filter((t) => !usedR.has(t.id)).map((t) => ({ tableId: t.id, name: t.name })),
  };
}
