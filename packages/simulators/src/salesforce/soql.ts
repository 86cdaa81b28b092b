/**
 * The SOQL a sync connector sends, parsed and run against the simulator's records:
 *
 *   SELECT field, Rel.Field, ... | COUNT()
 *   FROM object
 *   [WHERE cond]   -- =, !=, <>, <, <=, >, >=, LIKE, [NOT] IN (...), INCLUDES/EXCLUDES, AND, OR, NOT,
 *                  -- parentheses (AND and OR may not be mixed without them, as in SOQL); values are
 *                  -- 'strings', numbers, true/false/null, date (2026-01-15) and datetime
 *                  -- (2026-01-15T09:00:00Z, +01:00) literals and TODAY, YESTERDAY, LAST_N_DAYS:n ...
 *   [ORDER BY field [ASC|DESC] [NULLS FIRST|LAST], ...]
 *   [LIMIT n] [OFFSET n]
 *
 * Errors come back as Salesforce words them (MALFORMED_QUERY, INVALID_FIELD, INVALID_TYPE),
 * with the query, a caret and "ERROR at Row:1:Column:n".
 */
import {
  DAY_MS,
  formatDateTime,
  isValidDate,
  normalizeId,
  parseDateTime,
  SalesforceApiError,
  type SalesforceState,
  type SfRecord,
  type Value,
} from './model.ts';
import { type FieldDef, fieldDef, type ObjectDef, objectDef } from './schema.ts';

// ---------------------------------------------------------------------------------------------
// Tokens

type Token =
  | { kind: 'ident'; text: string; pos: number }
  | { kind: 'string'; text: string; pos: number }
  | { kind: 'number'; text: string; pos: number }
  | { kind: 'datetime'; text: string; pos: number }
  | { kind: 'date'; text: string; pos: number }
  | { kind: 'op'; text: string; pos: number }
  | { kind: 'punct'; text: string; pos: number }
  | { kind: 'eof'; text: string; pos: number };

function queryError(soql: string, pos: number, errorCode: string, message: string): SalesforceApiError {
  const line = soql.replace(/\s+/g, ' ');
  const col = Math.min(pos, line.length) + 1;
  return new SalesforceApiError(400, [
    { message: `\n${line}\n${' '.repeat(col - 1)}^\nERROR at Row:1:Column:${col}\n${message}`, errorCode },
  ]);
}

function tokenize(soql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const s = soql.replace(/\s/g, ' ');
  while (i < s.length) {
    const c = s[i] as string;
    if (c === ' ') {
      i++;
      continue;
    }
    const pos = i;
    if (c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= s.length)
          throw queryError(
            soql,
            pos,
            'MALFORMED_QUERY',
            `line 1:${pos} mismatched character '<EOF>' expecting '''`,
          );
        const ch = s[i] as string;
        if (ch === '\\') {
          const next = s[i + 1] ?? '';
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
          text += map[next] ?? next;
          i += 2;
          continue;
        }
        if (ch === "'") {
          i++;
          break;
        }
        text += ch;
        i++;
      }
      out.push({ kind: 'string', text, pos });
      continue;
    }
    const dt = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})/.exec(s.slice(i));
    if (dt) {
      out.push({ kind: 'datetime', text: dt[0], pos });
      i += dt[0].length;
      continue;
    }
    const d = /^\d{4}-\d{2}-\d{2}(?![\w:])/.exec(s.slice(i));
    if (d) {
      out.push({ kind: 'date', text: d[0], pos });
      i += d[0].length;
      continue;
    }
    const num = /^-?\d+(\.\d+)?/.exec(s.slice(i));
    if (num && (c !== '-' || /\d/.test(s[i + 1] ?? ''))) {
      out.push({ kind: 'number', text: num[0], pos });
      i += num[0].length;
      continue;
    }
    const op = /^(!=|<>|<=|>=|=|<|>)/.exec(s.slice(i));
    if (op) {
      out.push({ kind: 'op', text: op[0], pos });
      i += op[0].length;
      continue;
    }
    if ('(),:'.includes(c)) {
      out.push({ kind: 'punct', text: c, pos });
      i++;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(s.slice(i));
    if (id) {
      out.push({ kind: 'ident', text: id[0], pos });
      i += id[0].length;
      continue;
    }
    throw queryError(soql, pos, 'MALFORMED_QUERY', `unexpected token: '${c}'`);
  }
  out.push({ kind: 'eof', text: '<EOF>', pos: s.length });
  return out;
}

// ---------------------------------------------------------------------------------------------
// AST

/** A field, possibly through one parent relationship (Account.Name). */
export type FieldPath = { relationship?: { field: FieldDef; name: string }; field: FieldDef; text: string };

type Literal =
  | { kind: 'null' }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'date'; value: string }
  | { kind: 'datetime'; value: number }
  /** A date literal such as TODAY or LAST_N_DAYS:7: the range [start, end) in ms. */
  | { kind: 'range'; start: number; end: number };

type Cond =
  | { kind: 'and' | 'or'; items: Cond[] }
  | { kind: 'not'; item: Cond }
  | { kind: 'cmp'; path: FieldPath; op: string; value: Literal }
  | { kind: 'in'; path: FieldPath; negated: boolean; values: Literal[] }
  | { kind: 'like'; path: FieldPath; pattern: string }
  | { kind: 'includes'; path: FieldPath; negated: boolean; values: string[] };

type Order = { path: FieldPath; desc: boolean; nullsLast: boolean };

export type ParsedQuery = {
  object: ObjectDef;
  fields: FieldPath[];
  count: boolean;
  where?: Cond;
  orderBy: Order[];
  limit?: number;
  offset?: number;
};

/** The one user of the org, as parent relationships (Owner, CreatedBy, LastModifiedBy) see it. */
const USER_FIELDS = ['Id', 'Name', 'Email', 'Username', 'IsActive'];

// ---------------------------------------------------------------------------------------------
// Parser

/** Parse a query; `now` (epoch ms) anchors date literals such as TODAY and LAST_N_DAYS:n. */
export function parseSoql(soql: string, now = 0): ParsedQuery {
  const tokens = tokenize(soql);
  let i = 0;
  const peek = () => tokens[i] as Token;
  const next = () => tokens[i++] as Token;
  const isWord = (t: Token, w: string) => t.kind === 'ident' && t.text.toUpperCase() === w;
  const unexpected = (t: Token) =>
    queryError(soql, t.pos, 'MALFORMED_QUERY', `unexpected token: '${t.text}'`);
  const expectWord = (w: string) => {
    const t = next();
    if (!isWord(t, w)) throw unexpected(t);
  };
  const expectPunct = (p: string) => {
    const t = next();
    if (t.kind !== 'punct' || t.text !== p) throw unexpected(t);
  };

  expectWord('SELECT');
  // Select list: read raw names first, resolve once the object is known.
  const selected: Token[] = [];
  let count = false;
  if (isWord(peek(), 'COUNT') && tokens[i + 1]?.text === '(') {
    next();
    expectPunct('(');
    expectPunct(')');
    count = true;
  } else {
    for (;;) {
      const t = next();
      if (t.kind !== 'ident' || ['FROM', 'WHERE'].includes(t.text.toUpperCase())) throw unexpected(t);
      if (peek().text === '(') {
        throw queryError(
          soql,
          t.pos,
          'MALFORMED_QUERY',
          `The simulator does not support ${t.text}() in SELECT`,
        );
      }
      selected.push(t);
      if (peek().text !== ',') break;
      next();
    }
  }
  expectWord('FROM');
  const objTok = next();
  if (objTok.kind !== 'ident') throw unexpected(objTok);
  const object = objectDef(objTok.text);
  if (!object) {
    throw queryError(
      soql,
      objTok.pos,
      'INVALID_TYPE',
      `sObject type '${objTok.text}' is not supported. If you are attempting to use a custom object, be sure to append the '__c' after the entity name. Please reference your WSDL or the describe call for the appropriate names.`,
    );
  }

  const resolve = (t: Token): FieldPath => {
    const noColumn = () =>
      queryError(
        soql,
        t.pos,
        'INVALID_FIELD',
        `No such column '${t.text}' on entity '${object.name}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`,
      );
    const parts = t.text.split('.');
    if (parts.length === 2 && parts[0]?.toLowerCase() === object.name.toLowerCase()) parts.shift();
    if (parts.length === 1) {
      const fd = fieldDef(object, parts[0] as string);
      if (!fd) throw noColumn();
      return { field: fd, text: fd.name };
    }
    if (parts.length !== 2) throw noColumn();
    const [relName, childName] = parts as [string, string];
    const rel = object.fields.find(
      (fd) => fd.type === 'reference' && fd.relationshipName?.toLowerCase() === relName.toLowerCase(),
    );
    if (!rel) {
      throw queryError(
        soql,
        t.pos,
        'INVALID_FIELD',
        `Didn't understand relationship '${relName}' in field path. If you are attempting to use a custom relationship, be sure to append the '__r' after the custom relationship name. Please reference your WSDL or the describe call for the appropriate names.`,
      );
    }
    const target = rel.referenceTo?.[0] as string;
    let fd: FieldDef | undefined;
    if (target === 'User') {
      const name = USER_FIELDS.find((n) => n.toLowerCase() === childName.toLowerCase());
      if (name)
        fd = { name, label: name, type: 'string', nillable: true, createable: false, updateable: false };
    } else {
      fd = fieldDef(objectDef(target) as ObjectDef, childName);
    }
    if (!fd) {
      throw queryError(soql, t.pos, 'INVALID_FIELD', `No such column '${childName}' on entity '${target}'.`);
    }
    const relationship = { field: rel, name: rel.relationshipName as string };
    return { relationship, field: fd, text: `${relationship.name}.${fd.name}` };
  };

  const fields = selected.map(resolve);
  const seen = new Set<string>();
  for (const [n, p] of fields.entries()) {
    const key = p.text.toLowerCase();
    if (seen.has(key)) {
      throw queryError(
        soql,
        (selected[n] as Token).pos,
        'MALFORMED_QUERY',
        `duplicate field selected: ${p.text}`,
      );
    }
    seen.add(key);
  }

  const literal = (path: FieldPath): Literal => {
    const t = next();
    const fd = path.field;
    const typeName = fd.type === 'datetime' ? 'dateTime' : fd.type;
    const mismatch = () =>
      queryError(
        soql,
        t.pos,
        'INVALID_FIELD',
        `value of filter criterion for field '${fd.name}' must be of type ${typeName} and should not be enclosed in quotes`,
      );
    if (t.kind === 'string') {
      if (['date', 'datetime', 'boolean', 'int', 'double', 'currency', 'percent'].includes(fd.type))
        throw mismatch();
      return { kind: 'string', value: t.text };
    }
    if (t.kind === 'number') {
      if (!['int', 'double', 'currency', 'percent'].includes(fd.type)) {
        throw queryError(
          soql,
          t.pos,
          'INVALID_FIELD',
          `value of filter criterion for field '${fd.name}' must be of type ${typeName}`,
        );
      }
      return { kind: 'number', value: Number(t.text) };
    }
    if (t.kind === 'datetime') {
      if (fd.type !== 'datetime') throw mismatch();
      return { kind: 'datetime', value: parseDateTime(t.text) };
    }
    if (t.kind === 'date') {
      if (fd.type !== 'date' || !isValidDate(t.text)) throw mismatch();
      return { kind: 'date', value: t.text };
    }
    if (t.kind === 'ident') {
      const w = t.text.toUpperCase();
      if (w === 'NULL') return { kind: 'null' };
      if (w === 'TRUE' || w === 'FALSE') {
        if (fd.type !== 'boolean') throw mismatch();
        return { kind: 'boolean', value: w === 'TRUE' };
      }
      if (fd.type === 'date' || fd.type === 'datetime') {
        let n: number | undefined;
        if (peek().text === ':') {
          next();
          const nt = next();
          if (nt.kind !== 'number') throw unexpected(nt);
          n = Number(nt.text);
        }
        const range = dateLiteral(w, n);
        if (range) return { kind: 'range', ...range };
      }
    }
    throw unexpected(t);
  };

  const dateLiteral = (w: string, n: number | undefined): { start: number; end: number } | undefined => {
    const today = () => Math.floor(now / DAY_MS) * DAY_MS;
    switch (w) {
      case 'TODAY':
        return { start: today(), end: today() + DAY_MS };
      case 'YESTERDAY':
        return { start: today() - DAY_MS, end: today() };
      case 'TOMORROW':
        return { start: today() + DAY_MS, end: today() + 2 * DAY_MS };
      case 'LAST_N_DAYS':
        return n === undefined ? undefined : { start: today() - n * DAY_MS, end: today() + DAY_MS };
      case 'NEXT_N_DAYS':
        return n === undefined ? undefined : { start: today() + DAY_MS, end: today() + (n + 1) * DAY_MS };
      default:
        return undefined;
    }
  };
  const fieldToken = (): FieldPath => {
    const t = next();
    if (t.kind !== 'ident') throw unexpected(t);
    return resolve(t);
  };

  const condition = (): Cond => {
    const first = unary();
    const t = peek();
    if (!isWord(t, 'AND') && !isWord(t, 'OR')) return first;
    const kind = isWord(t, 'AND') ? 'and' : 'or';
    const items = [first];
    while (isWord(peek(), 'AND') || isWord(peek(), 'OR')) {
      const conj = next();
      if (conj.text.toLowerCase() !== kind) throw unexpected(conj);
      items.push(unary());
    }
    return { kind, items };
  };

  const unary = (): Cond => {
    if (isWord(peek(), 'NOT')) {
      next();
      return { kind: 'not', item: unary() };
    }
    if (peek().text === '(') {
      next();
      const c = condition();
      expectPunct(')');
      return c;
    }
    const path = fieldToken();
    const t = next();
    if (t.kind === 'op') {
      const op = t.text === '<>' ? '!=' : t.text;
      const value = literal(path);
      if (value.kind === 'null' && op !== '=' && op !== '!=') throw unexpected(t);
      return { kind: 'cmp', path, op, value };
    }
    if (isWord(t, 'LIKE')) {
      const p = next();
      if (p.kind !== 'string') throw unexpected(p);
      return { kind: 'like', path, pattern: p.text };
    }
    const negated = isWord(t, 'NOT');
    const w = negated ? next() : t;
    if (isWord(w, 'IN')) {
      expectPunct('(');
      const values: Literal[] = [];
      for (;;) {
        values.push(literal(path));
        const sep = next();
        if (sep.text === ')') break;
        if (sep.text !== ',') throw unexpected(sep);
      }
      return { kind: 'in', path, negated, values };
    }
    if (!negated && (isWord(w, 'INCLUDES') || isWord(w, 'EXCLUDES'))) {
      expectPunct('(');
      const values: string[] = [];
      for (;;) {
        const v = next();
        if (v.kind !== 'string') throw unexpected(v);
        values.push(v.text);
        const sep = next();
        if (sep.text === ')') break;
        if (sep.text !== ',') throw unexpected(sep);
      }
      return { kind: 'includes', path, negated: isWord(w, 'EXCLUDES'), values };
    }
    throw unexpected(w);
  };

  const query: ParsedQuery = { object, fields, count, orderBy: [] };
  if (isWord(peek(), 'WHERE')) {
    next();
    query.where = condition();
  }
  if (isWord(peek(), 'ORDER')) {
    next();
    expectWord('BY');
    for (;;) {
      const path = fieldToken();
      let desc = false;
      if (isWord(peek(), 'ASC') || isWord(peek(), 'DESC')) desc = next().text.toUpperCase() === 'DESC';
      let nullsLast = desc;
      if (isWord(peek(), 'NULLS')) {
        next();
        const t = next();
        if (!isWord(t, 'FIRST') && !isWord(t, 'LAST')) throw unexpected(t);
        nullsLast = isWord(t, 'LAST');
      }
      query.orderBy.push({ path, desc, nullsLast });
      if (peek().text !== ',') break;
      next();
    }
  }
  if (isWord(peek(), 'LIMIT')) {
    next();
    const t = next();
    if (t.kind !== 'number' || !/^\d+$/.test(t.text)) throw unexpected(t);
    query.limit = Number(t.text);
  }
  if (isWord(peek(), 'OFFSET')) {
    next();
    const t = next();
    if (t.kind !== 'number' || !/^\d+$/.test(t.text)) throw unexpected(t);
    query.offset = Number(t.text);
    if (query.offset > 2000) {
      throw new SalesforceApiError(400, [
        { message: 'Maximum SOQL offset allowed is 2000', errorCode: 'NUMBER_OUTSIDE_VALID_RANGE' },
      ]);
    }
  }
  const end = peek();
  if (end.kind !== 'eof') throw unexpected(end);
  return query;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

export function pathValue(state: SalesforceState, rec: SfRecord, path: FieldPath): Value {
  if (!path.relationship) return state.value(rec, path.field);
  const parentId = rec.values.get(path.relationship.field.name);
  if (typeof parentId !== 'string') return null;
  if (parentId === state.userId) return userValue(state, path.field.name);
  const parent = state.records.get(parentId);
  if (!parent || parent.deleted) return null;
  return state.value(parent, path.field);
}

function userValue(state: SalesforceState, field: string): Value {
  const values: Record<string, Value> = {
    Id: state.userId,
    Name: 'Integration User',
    Email: state.username,
    Username: state.username,
    IsActive: true,
  };
  return values[field] ?? null;
}

/** Text compares case-insensitively, as SOQL does; ids are case-sensitive and compare exactly. */
function compare(a: Value, b: Value, exact = false): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = exact ? String(a) : String(a).toLowerCase();
  const y = exact ? String(b) : String(b).toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

const isId = (fd: FieldDef) => fd.type === 'id' || fd.type === 'reference';

function literalValue(fd: FieldDef, lit: Literal): Value {
  switch (lit.kind) {
    case 'null':
      return null;
    case 'range':
      return null;
    case 'string':
      if (fd.type === 'id' || fd.type === 'reference') return normalizeId(lit.value) ?? lit.value;
      return lit.value;
    default:
      return lit.value;
  }
}

function matches(state: SalesforceState, rec: SfRecord, c: Cond): boolean {
  switch (c.kind) {
    case 'and':
      return c.items.every((i) => matches(state, rec, i));
    case 'or':
      return c.items.some((i) => matches(state, rec, i));
    case 'not':
      return !matches(state, rec, c.item);
    case 'like': {
      const v = pathValue(state, rec, c.path);
      if (v === null) return false;
      const re = new RegExp(
        `^${c.pattern
          .split('')
          .map((ch) => (ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('')}$`,
        'is',
      );
      return re.test(String(v));
    }
    case 'in': {
      const v = pathValue(state, rec, c.path);
      const hit = c.values.some((lit) => {
        const w = literalValue(c.path.field, lit);
        return v === null || w === null ? v === w : compare(v, w, isId(c.path.field)) === 0;
      });
      return c.negated ? !hit && v !== null : hit;
    }
    case 'includes': {
      const v = pathValue(state, rec, c.path);
      const have = new Set(typeof v === 'string' ? v.split(';').map((s) => s.toLowerCase()) : []);
      const hit = c.values.some((spec) =>
        spec
          .split(';')
          .map((s) => s.trim().toLowerCase())
          .every((s) => have.has(s)),
      );
      return c.negated ? !hit : hit;
    }
    case 'cmp': {
      const v = pathValue(state, rec, c.path);
      if (c.value.kind === 'range') {
        if (v === null) return false;
        const t = c.path.field.type === 'date' ? Date.parse(`${v}T00:00:00Z`) : (v as number);
        const { start, end } = c.value;
        switch (c.op) {
          case '=':
            return t >= start && t < end;
          case '!=':
            return t < start || t >= end;
          case '<':
            return t < start;
          case '<=':
            return t < end;
          case '>':
            return t >= end;
          default:
            return t >= start;
        }
      }
      const w = literalValue(c.path.field, c.value);
      const exact = isId(c.path.field);
      if (c.op === '=') return v === null || w === null ? v === w : compare(v, w, exact) === 0;
      if (c.op === '!=') return v === null || w === null ? v !== w : compare(v, w, exact) !== 0;
      if (v === null || w === null) return false;
      const r = compare(v, w, exact);
      if (c.op === '<') return r < 0;
      if (c.op === '<=') return r <= 0;
      if (c.op === '>') return r > 0;
      return r >= 0;
    }
  }
}

export type QueryResult = { query: ParsedQuery; records: SfRecord[]; totalSize: number };

/** Parse and run a query; `all` (queryAll) includes records in the recycle bin. */
export function runQuery(state: SalesforceState, soql: string, options: { all?: boolean } = {}): QueryResult {
  const q = parseSoql(soql, state.clock.now());
  let rows = state.list(q.object.name, { includeDeleted: options.all === true });
  if (q.where) {
    const where = q.where;
    rows = rows.filter((r) => matches(state, r, where));
  }
  const orderBy = q.orderBy.length > 0 ? q.orderBy : [];
  rows.sort((a, b) => {
    for (const o of orderBy) {
      const x = pathValue(state, a, o.path);
      const y = pathValue(state, b, o.path);
      if (x === null && y === null) continue;
      if (x === null) return o.nullsLast ? 1 : -1;
      if (y === null) return o.nullsLast ? -1 : 1;
      const r = compare(x, y, isId(o.path.field));
      if (r !== 0) return o.desc ? -r : r;
    }
    // Without ORDER BY the order is unspecified in Salesforce; the simulator uses creation order.
    return 0;
  });
  const offset = q.offset ?? 0;
  const limited = rows.slice(offset, q.limit === undefined ? undefined : offset + q.limit);
  return { query: q, records: limited, totalSize: limited.length };
}

// ---------------------------------------------------------------------------------------------
// Rendering

export function attributes(
  obj: ObjectDef | 'User',
  id: string,
  version: string,
): { type: string; url: string } {
  const type = obj === 'User' ? 'User' : obj.name;
  return { type, url: `/services/data/v${version}/sobjects/${type}/${id}` };
}

export function renderValue(fd: FieldDef, v: Value): Value {
  if (fd.type === 'datetime' && typeof v === 'number') return formatDateTime(v);
  return v;
}

/** A query row: attributes, then the selected fields (parents as nested records). */
export function renderRow(
  state: SalesforceState,
  rec: SfRecord,
  fields: FieldPath[],
  version: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { attributes: attributes(rec.object, rec.id, version) };
  for (const p of fields) {
    if (!p.relationship) {
      out[p.field.name] = renderValue(p.field, state.value(rec, p.field));
      continue;
    }
    const relName = p.relationship.name;
    const parentId = rec.values.get(p.relationship.field.name);
    if (typeof parentId !== 'string') {
      out[relName] = null;
      continue;
    }
    let nested = out[relName] as Record<string, unknown> | null | undefined;
    if (nested === undefined) {
      const target = parentId === state.userId ? 'User' : state.records.get(parentId)?.object;
      nested = target ? { attributes: attributes(target, parentId, version) } : null;
      out[relName] = nested;
    }
    if (nested) nested[p.field.name] = renderValue(p.field, pathValue(state, rec, p));
  }
  return out;
}
