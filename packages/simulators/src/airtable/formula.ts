/**
 * A small subset of Airtable's formula language, for `filterByFormula` and formula fields.
 *
 * Supported:
 * - literals: numbers, 'single' or "double" quoted strings (backslash escapes), TRUE(), FALSE(), BLANK()
 * - field references `{Field name}` (name or field id) and bare field names without spaces
 * - operators: `&` (concatenate), `+ - * /`, `= != < > <= >=`, unary `-`, parentheses
 * - functions: AND, OR, NOT, IF, XOR, RECORD_ID, CREATED_TIME, LAST_MODIFIED_TIME (arguments ignored:
 *   the record's last modification of any field), NOW, TODAY, IS_AFTER, IS_BEFORE, IS_SAME (unit
 *   'day', 'second' or none = ms), DATETIME_PARSE (ISO input only), LOWER, UPPER, TRIM, LEN,
 *   CONCATENATE, FIND, SEARCH. Test for blanks with `{f} = ''` or `{f} = BLANK()`.
 * - values: dates compare as instants; a string compared with a date is parsed as ISO 8601
 *
 * Anything else raises FormulaError, which the simulator turns into Airtable's 422
 * INVALID_FILTER_BY_FORMULA error.
 */

export class FormulaError extends Error {}

export type FormulaValue = string | number | boolean | Date | null;

export type FormulaContext = {
  /** Resolves a `{Field}` reference (by name or id); throws FormulaError for an unknown field. */
  field(nameOrId: string): FormulaValue;
  recordId: string;
  createdTime: number;
  lastModifiedTime: number;
  now: number;
};

type Node =
  | { t: 'lit'; v: FormulaValue }
  | { t: 'field'; name: string }
  | { t: 'call'; name: string; args: Node[] }
  | { t: 'bin'; op: string; l: Node; r: Node }
  | { t: 'neg'; e: Node };

type Token =
  | { k: 'num'; v: number }
  | { k: 'str'; v: string }
  | { k: 'field'; v: string }
  | { k: 'id'; v: string }
  | { k: 'op'; v: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9.]/.test(c)) {
      const m = /^[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?/.exec(src.slice(i));
      if (!m) throw new FormulaError(`Unexpected "${c}"`);
      out.push({ k: 'num', v: Number(m[0]) });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = '';
      i++;
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\\' && i + 1 < src.length) {
          i++;
          const e = src[i]!;
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        } else {
          s += src[i];
        }
        i++;
      }
      if (i >= src.length) throw new FormulaError('Unterminated string');
      i++;
      out.push({ k: 'str', v: s });
      continue;
    }
    if (c === '{') {
      const end = src.indexOf('}', i);
      if (end < 0) throw new FormulaError('Unterminated field reference');
      out.push({ k: 'field', v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '!=' || two === '<=' || two === '>=') {
      out.push({ k: 'op', v: two });
      i += 2;
      continue;
    }
    if ('&+-*/=<>(),'.includes(c)) {
      out.push({ k: 'op', v: c });
      i++;
      continue;
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (!m) throw new FormulaError(`Unexpected "${c}"`);
    out.push({ k: 'id', v: m[0] });
    i += m[0].length;
  }
  return out;
}

const PRECEDENCE: Record<string, number> = {
  '=': 1,
  '!=': 1,
  '<': 1,
  '>': 1,
  '<=': 1,
  '>=': 1,
  '&': 2,
  '+': 3,
  '-': 3,
  '*': 4,
  '/': 4,
};

export function parseFormula(src: string): Node {
  const tokens = tokenize(src);
  let pos = 0;
  const peek = () => tokens[pos];
  const isOp = (v: string) => {
    const t = peek();
    return t?.k === 'op' && t.v === v;
  };
  const expect = (v: string) => {
    if (!isOp(v)) throw new FormulaError(`Expected "${v}"`);
    pos++;
  };

  function primary(): Node {
    const t = tokens[pos++];
    if (!t) throw new FormulaError('Unexpected end of formula');
    if (t.k === 'num') return { t: 'lit', v: t.v };
    if (t.k === 'str') return { t: 'lit', v: t.v };
    if (t.k === 'field') return { t: 'field', name: t.v };
    if (t.k === 'op' && t.v === '(') {
      const e = expr(0);
      expect(')');
      return e;
    }
    if (t.k === 'op' && t.v === '-') return { t: 'neg', e: primary() };
    if (t.k === 'id') {
      if (isOp('(')) {
        pos++;
        const args: Node[] = [];
        if (!isOp(')')) {
          args.push(expr(0));
          while (isOp(',')) {
            pos++;
            args.push(expr(0));
          }
        }
        expect(')');
        return { t: 'call', name: t.v.toUpperCase(), args };
      }
      if (t.v.toUpperCase() === 'TRUE') return { t: 'lit', v: true };
      if (t.v.toUpperCase() === 'FALSE') return { t: 'lit', v: false };
      return { t: 'field', name: t.v };
    }
    throw new FormulaError(`Unexpected "${t.v}"`);
  }

  function expr(minPrec: number): Node {
    let left = primary();
    for (;;) {
      const t = peek();
      if (t?.k !== 'op') break;
      const prec = PRECEDENCE[t.v];
      if (prec === undefined || prec < minPrec) break;
      pos++;
      const right = expr(prec + 1);
      left = { t: 'bin', op: t.v, l: left, r: right };
    }
    return left;
  }

  const root = expr(0);
  if (pos !== tokens.length) throw new FormulaError(`Unexpected "${String(tokens[pos]?.v)}"`);
  return root;
}

function isBlank(v: FormulaValue): boolean {
  return v === null || v === '' || (typeof v === 'number' && Number.isNaN(v));
}

function truthy(v: FormulaValue): boolean {
  if (v instanceof Date) return true;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0 && !Number.isNaN(v);
  return v === true;
}

function toNumber(v: FormulaValue): number {
  if (v === null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.getTime();
  const n = Number(v);
  return Number.isNaN(n) ? 0 : n;
}

function toText(v: FormulaValue): string {
  if (v === null) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'boolean') return v ? '1' : '0';
  return String(v);
}

function toDate(v: FormulaValue): Date | null {
  if (v instanceof Date) return v;
  if (typeof v === 'string' && v.length > 0) {
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw new FormulaError(`Cannot parse date "${v}"`);
    return d;
  }
  if (typeof v === 'number') return new Date(v);
  return null;
}

function compare(op: string, a: FormulaValue, b: FormulaValue): boolean {
  if (op === '=' || op === '!=') {
    let eq: boolean;
    if (isBlank(a) || isBlank(b)) eq = isBlank(a) && isBlank(b);
    else if (a instanceof Date || b instanceof Date) eq = toDate(a)?.getTime() === toDate(b)?.getTime();
    else if (typeof a === 'number' || typeof b === 'number') eq = toNumber(a) === toNumber(b);
    else eq = toText(a) === toText(b);
    return op === '=' ? eq : !eq;
  }
  let x: number | string;
  let y: number | string;
  if (a instanceof Date || b instanceof Date) {
    const da = toDate(a);
    const db = toDate(b);
    if (!da || !db) return false;
    x = da.getTime();
    y = db.getTime();
  } else if (typeof a === 'string' && typeof b === 'string') {
    x = a;
    y = b;
  } else {
    x = toNumber(a);
    y = toNumber(b);
  }
  if (op === '<') return x < y;
  if (op === '>') return x > y;
  if (op === '<=') return x <= y;
  return x >= y;
}

function truncate(d: Date, unit: string | undefined): number {
  const t = d.getTime();
  if (unit === 'second' || unit === 'seconds') return Math.floor(t / 1000);
  if (unit === 'minute' || unit === 'minutes') return Math.floor(t / 60_000);
  if (unit === 'hour' || unit === 'hours') return Math.floor(t / 3_600_000);
  if (unit === 'day' || unit === 'days') return Math.floor(t / 86_400_000);
  return t;
}

export function evaluate(node: Node, ctx: FormulaContext): FormulaValue {
  switch (node.t) {
    case 'lit':
      return node.v;
    case 'field':
      return ctx.field(node.name);
    case 'neg':
      return -toNumber(evaluate(node.e, ctx));
    case 'bin': {
      const a = evaluate(node.l, ctx);
      const b = evaluate(node.r, ctx);
      switch (node.op) {
        case '&':
          return toText(a) + toText(b);
        case '+':
          return toNumber(a) + toNumber(b);
        case '-':
          return toNumber(a) - toNumber(b);
        case '*':
          return toNumber(a) * toNumber(b);
        case '/':
          return toNumber(b) === 0 ? Number.NaN : toNumber(a) / toNumber(b);
        default:
          return compare(node.op, a, b);
      }
    }
    case 'call':
      return call(node.name, node.args, ctx);
  }
}

function call(name: string, args: Node[], ctx: FormulaContext): FormulaValue {
  const ev = (i: number): FormulaValue => {
    const a = args[i];
    if (!a) throw new FormulaError(`${name}() is missing an argument`);
    return evaluate(a, ctx);
  };
  const all = () => args.map((a) => evaluate(a, ctx));
  switch (name) {
    case 'AND':
      return all().every(truthy);
    case 'OR':
      return all().some(truthy);
    case 'XOR':
      return all().filter(truthy).length % 2 === 1;
    case 'NOT':
      return !truthy(ev(0));
    case 'IF':
      return truthy(ev(0)) ? ev(1) : args.length > 2 ? ev(2) : null;
    case 'TRUE':
      return true;
    case 'FALSE':
      return false;
    case 'BLANK':
      return null;
    case 'RECORD_ID':
      return ctx.recordId;
    case 'CREATED_TIME':
      return new Date(ctx.createdTime);
    case 'LAST_MODIFIED_TIME':
      return new Date(ctx.lastModifiedTime);
    case 'NOW':
      return new Date(ctx.now);
    case 'TODAY':
      return new Date(Math.floor(ctx.now / 86_400_000) * 86_400_000);
    case 'DATETIME_PARSE':
      return toDate(ev(0));
    case 'IS_AFTER':
    case 'IS_BEFORE':
    case 'IS_SAME': {
      const a = toDate(ev(0));
      const b = toDate(ev(1));
      if (!a || !b) return false;
      if (name === 'IS_AFTER') return a.getTime() > b.getTime();
      if (name === 'IS_BEFORE') return a.getTime() < b.getTime();
      const unit = args.length > 2 ? toText(ev(2)).toLowerCase() : undefined;
      return truncate(a, unit) === truncate(b, unit);
    }
    case 'LOWER':
      return toText(ev(0)).toLowerCase();
    case 'UPPER':
      return toText(ev(0)).toUpperCase();
    case 'TRIM':
      return toText(ev(0)).trim();
    case 'LEN':
      return toText(ev(0)).length;
    case 'CONCATENATE':
      return all().map(toText).join('');
    case 'FIND':
    case 'SEARCH': {
      const needle = toText(ev(0));
      const hay = toText(ev(1));
      const from = args.length > 2 ? Math.max(0, toNumber(ev(2)) - 1) : 0;
      const idx =
        name === 'SEARCH' ? hay.toLowerCase().indexOf(needle.toLowerCase(), from) : hay.indexOf(needle, from);
      return idx < 0 ? (name === 'SEARCH' ? null : 0) : idx + 1;
    }
    default:
      throw new FormulaError(`Unknown function ${name}()`);
  }
}

export function isTruthy(v: FormulaValue): boolean {
  return truthy(v);
}

/** Field ids or names a formula refers to, for formula fields' `referencedFieldIds`. */
export function referencedFields(node: Node): string[] {
  switch (node.t) {
    case 'field':
      return [node.name];
    case 'neg':
      return referencedFields(node.e);
    case 'bin':
      return [...referencedFields(node.l), ...referencedFields(node.r)];
    case 'call':
      return node.args.flatMap(referencedFields);
    default:
      return [];
  }
}

export type FormulaNode = Node;
