/**
 * Cells as Google Sheets stores them: a value (number, string, boolean), an optional formula, and a
 * number format that lives apart from the value (writing a value keeps the cell's format). Dates are
 * numbers: days since 1899-12-30 in the spreadsheet's time zone, shown through a DATE or DATE_TIME
 * format.
 */

export type NumberFormatType =
  | 'TEXT'
  | 'NUMBER'
  | 'PERCENT'
  | 'CURRENCY'
  | 'DATE'
  | 'TIME'
  | 'DATE_TIME'
  | 'SCIENTIFIC';
export const NUMBER_FORMAT_TYPES: readonly NumberFormatType[] = [
  'TEXT',
  'NUMBER',
  'PERCENT',
  'CURRENCY',
  'DATE',
  'TIME',
  'DATE_TIME',
  'SCIENTIFIC',
];
export type NumberFormat = { type: NumberFormatType; pattern?: string };

export type Cell = {
  /** The effective value; null for an empty cell. */
  v: number | string | boolean | null;
  /** The formula (`=...`) when the cell holds one. */
  f?: string;
  /** An error value (`#ERROR!`, `#DIV/0!`, `#REF!`, `#NAME?`) computed from the formula. */
  err?: string;
  fmt?: NumberFormat;
};

export type ExtendedValue =
  | { numberValue: number }
  | { stringValue: string }
  | { boolValue: boolean }
  | { formulaValue: string }
  | { errorValue: { type: string; message: string } };

export const MAX_CELL_CHARS = 50_000;
const DAY_MS = 86_400_000;
const EPOCH = Date.UTC(1899, 11, 30);

export function isEmpty(cell: Cell | undefined): boolean {
  return !cell || (cell.v === null && cell.f === undefined && cell.err === undefined);
}

// ---------------------------------------------------------------------------------------------
// Serial numbers

/** Wall-clock fields (as if UTC) -> serial number. */
export function serialFromWallTime(wall: number): number {
  return (wall - EPOCH) / DAY_MS;
}

export function wallTimeFromSerial(serial: number): number {
  return Math.round(EPOCH + serial * DAY_MS);
}

/** The offset (ms) of a time zone at an instant: wall time = utc + offset. */
export function zoneOffset(timeZone: string, utc: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utc));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(utc / 1000) * 1000;
}

/** The serial number of an instant, as the spreadsheet's time zone shows it. */
export function serialFromInstant(utc: number, timeZone: string): number {
  return serialFromWallTime(utc + zoneOffset(timeZone, utc));
}

// ---------------------------------------------------------------------------------------------
// Input (valueInputOption)

const DATE_ISO = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const DATE_US = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const NUMBER = /^[-+]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][-+]?\d+)?$/;

function parseDate(text: string): { serial: number; time: boolean } | undefined {
  let y: number;
  let mo: number;
  let d: number;
  let h = 0;
  let mi = 0;
  let s = 0;
  let time = false;
  const iso = DATE_ISO.exec(text);
  const us = iso ? undefined : DATE_US.exec(text);
  if (iso) {
    [y, mo, d] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
    if (iso[4] !== undefined) {
      time = true;
      [h, mi, s] = [Number(iso[4]), Number(iso[5]), Number(iso[6] ?? 0)];
    }
  } else if (us) {
    [mo, d, y] = [Number(us[1]), Number(us[2]), Number(us[3])];
    if (us[4] !== undefined) {
      time = true;
      [h, mi, s] = [Number(us[4]), Number(us[5]), Number(us[6] ?? 0)];
    }
  } else return undefined;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  if (new Date(wall).getUTCDate() !== d) return undefined;
  return { serial: serialFromWallTime(wall), time };
}

/**
 * One input value as a cell. RAW stores it as given (strings stay strings); USER_ENTERED parses it
 * as if typed into the UI: formulas, numbers, percentages, currency, dates, TRUE/FALSE, and a
 * leading apostrophe forcing text.
 */
export function inputCell(
  raw: unknown,
  option: 'RAW' | 'USER_ENTERED',
  previous: Cell | undefined,
): Cell | { error: string } {
  const keepFmt = previous?.fmt ? { fmt: previous.fmt } : {};
  if (raw === null || raw === undefined || raw === '') return { v: null, ...keepFmt };
  if (typeof raw === 'boolean') return { v: raw, ...keepFmt };
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) return { error: `Invalid value: ${raw}` };
    return { v: raw, ...keepFmt };
  }
  if (typeof raw !== 'string') return { error: `Invalid value at 'data.values' (${typeof raw})` };
  if (raw.length > MAX_CELL_CHARS)
    return {
      error: `Your input contains more than the maximum of ${MAX_CELL_CHARS} characters in a single cell.`,
    };
  if (option === 'RAW') return { v: raw, ...keepFmt };
  if (raw.startsWith("'")) return { v: raw.slice(1), ...keepFmt };
  if (raw.startsWith('=') && raw.length > 1) return { v: null, f: raw, ...keepFmt };
  const t = raw.trim();
  if (/^(true|false)$/i.test(t)) return { v: t.toLowerCase() === 'true', ...keepFmt };
  if (/^-?\d[\d,]*(\.\d+)?%$/.test(t)) {
    const n = Number(t.slice(0, -1).replaceAll(',', '')) / 100;
    return { v: n, fmt: { type: 'PERCENT', pattern: t.includes('.') ? '0.00%' : '0%' } };
  }
  const money = /^(-)?([$€£])\s?([\d,]+(\.\d+)?)$/.exec(t);
  if (money) {
    const n = Number((money[3] ?? '').replaceAll(',', '')) * (money[1] ? -1 : 1);
    return { v: n, fmt: { type: 'CURRENCY', pattern: `"${money[2]}"#,##0.00` } };
  }
  if (t !== '' && NUMBER.test(t) && /\d/.test(t)) return { v: Number(t.replaceAll(',', '')), ...keepFmt };
  const date = parseDate(t);
  if (date) {
    const fmt: NumberFormat = date.time
      ? { type: 'DATE_TIME', pattern: 'yyyy-mm-dd hh:mm:ss' }
      : { type: 'DATE', pattern: 'yyyy-mm-dd' };
    // A date keeps a date format the cell already had (e.g. M/d/yyyy); otherwise the parsed one.
    const same = previous?.fmt?.type === fmt.type ? previous.fmt : fmt;
    return { v: date.serial, fmt: same };
  }
  return { v: raw, ...keepFmt };
}

/**
 * A CellData.userEnteredValue (an ExtendedValue, as updateCells and repeatCell send it) as a cell:
 * stored as given, never parsed (a stringValue "=1+1" or "TRUE" stays text); only formulaValue is a
 * formula. errorValue is read-only. The cell's number format is kept.
 */
export function cellFromExtended(ev: unknown, previous: Cell | undefined): Cell | { error: string } {
  const keepFmt = previous?.fmt ? { fmt: previous.fmt } : {};
  if (ev === undefined || ev === null) return { v: null, ...keepFmt };
  if (typeof ev !== 'object' || Array.isArray(ev)) return { error: 'userEnteredValue must be an object' };
  const kinds = Object.keys(ev);
  if (kinds.length !== 1)
    return {
      error: 'userEnteredValue must set exactly one of numberValue, stringValue, boolValue, formulaValue',
    };
  const value = (ev as Record<string, unknown>)[kinds[0] as string];
  switch (kinds[0]) {
    case 'numberValue':
      if (typeof value !== 'number' || !Number.isFinite(value))
        return { error: `Invalid numberValue: ${value}` };
      return { v: value, ...keepFmt };
    case 'boolValue':
      if (typeof value !== 'boolean') return { error: `Invalid boolValue: ${String(value)}` };
      return { v: value, ...keepFmt };
    case 'stringValue':
      if (typeof value !== 'string') return { error: `Invalid stringValue: ${String(value)}` };
      if (value.length > MAX_CELL_CHARS)
        return {
          error: `Your input contains more than the maximum of ${MAX_CELL_CHARS} characters in a single cell.`,
        };
      return { v: value === '' ? null : value, ...keepFmt };
    case 'formulaValue':
      if (typeof value !== 'string' || !value.startsWith('=') || value.length < 2)
        return { error: `Invalid formulaValue: ${String(value)}` };
      if (value.length > MAX_CELL_CHARS)
        return {
          error: `Your input contains more than the maximum of ${MAX_CELL_CHARS} characters in a single cell.`,
        };
      return { v: null, f: value, ...keepFmt };
    case 'errorValue':
      return { error: 'userEnteredValue.errorValue is read-only' };
    default:
      return { error: `Unknown userEnteredValue field '${kinds[0]}'` };
  }
}

// ---------------------------------------------------------------------------------------------
// Output (valueRenderOption, dateTimeRenderOption)

export type ValueRenderOption = 'FORMATTED_VALUE' | 'UNFORMATTED_VALUE' | 'FORMULA';
export type DateTimeRenderOption = 'SERIAL_NUMBER' | 'FORMATTED_STRING';

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function formatDate(serial: number, pattern: string, withTime: boolean): string {
  const d = new Date(wallTimeFromSerial(serial));
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth() + 1;
  const day = d.getUTCDate();
  let date: string;
  if (/^m\/d\/yyyy/i.test(pattern)) date = `${mo}/${day}/${y}`;
  else if (/^dd\/mm\/yyyy/i.test(pattern)) date = `${pad(day)}/${pad(mo)}/${y}`;
  else date = `${y}-${pad(mo)}-${pad(day)}`;
  if (!withTime) return date;
  return `${date} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

function decimalsOf(pattern: string | undefined): number {
  const m = /\.(0+)/.exec(pattern ?? '');
  return m?.[1]?.length ?? 0;
}

export function formattedValue(cell: Cell): string {
  if (cell.err) return cell.err;
  const v = cell.v;
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return v;
  const fmt = cell.fmt;
  switch (fmt?.type) {
    case 'DATE':
      return formatDate(v, fmt.pattern ?? 'yyyy-mm-dd', false);
    case 'DATE_TIME':
      return formatDate(v, fmt.pattern ?? 'yyyy-mm-dd hh:mm:ss', true);
    case 'TIME': {
      const d = new Date(wallTimeFromSerial(v));
      return `${d.getUTCHours()}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
    }
    case 'PERCENT':
      return `${(v * 100).toFixed(decimalsOf(fmt.pattern))}%`;
    case 'CURRENCY': {
      const symbol = /"([^"]+)"/.exec(fmt.pattern ?? '')?.[1] ?? '$';
      const digits = decimalsOf(fmt.pattern ?? '0.00');
      const body = Math.abs(v).toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
      return `${v < 0 ? '-' : ''}${symbol}${body}`;
    }
    case 'NUMBER': {
      const digits = decimalsOf(fmt.pattern);
      const grouped = (fmt.pattern ?? '').includes(',');
      return v.toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
        useGrouping: grouped,
      });
    }
    default:
      // "Automatic": up to 10 significant digits.
      return String(Number(v.toPrecision(10)));
  }
}

/** A cell as values.get renders it; undefined for an empty cell. */
export function renderCell(
  cell: Cell | undefined,
  render: ValueRenderOption,
  dateTime: DateTimeRenderOption,
): string | number | boolean | undefined {
  if (!cell || isEmpty(cell)) return undefined;
  if (render === 'FORMULA' && cell.f !== undefined) return cell.f;
  if (render === 'FORMATTED_VALUE') return formattedValue(cell);
  if (cell.err) return cell.err;
  const v = cell.v;
  if (v === null) return '';
  const type = cell.fmt?.type;
  if (
    typeof v === 'number' &&
    dateTime === 'FORMATTED_STRING' &&
    (type === 'DATE' || type === 'DATE_TIME' || type === 'TIME')
  )
    return formattedValue(cell);
  return v;
}

/** Google's ErrorType of each error a formula can show. */
const ERROR_TYPES: Record<string, string> = {
  '#NULL!': 'NULL_VALUE',
  '#DIV/0!': 'DIVIDE_BY_ZERO',
  '#VALUE!': 'VALUE',
  '#REF!': 'REF',
  '#NAME?': 'NAME',
  '#NUM!': 'NUM',
  '#N/A': 'N_A',
  '#ERROR!': 'ERROR',
};

export function extendedValue(cell: Cell, effective: boolean): ExtendedValue | undefined {
  if (!effective && cell.f !== undefined) return { formulaValue: cell.f };
  if (cell.err)
    return { errorValue: { type: ERROR_TYPES[cell.err] ?? 'ERROR', message: `Formula error ${cell.err}` } };
  if (cell.v === null) return undefined;
  if (typeof cell.v === 'number') return { numberValue: cell.v };
  if (typeof cell.v === 'boolean') return { boolValue: cell.v };
  return { stringValue: cell.v };
}

// ---------------------------------------------------------------------------------------------
// Formulas (a small subset): numbers, "strings", cell references on the same sheet, + - * / &,
// parentheses, SUM/MIN/MAX/AVERAGE/COUNT over references and ranges, CONCATENATE, IF, UPPER, LOWER.

export type CellLookup = (row: number, col: number) => Cell | undefined;

type Value = number | string | boolean | Value[];

class FormulaError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const REF = /^\$?([A-Za-z]{1,3})\$?(\d+)/;

function colIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

export function evaluateFormula(formula: string, lookup: CellLookup): { v: Cell['v']; err?: string } {
  let src = formula.slice(1);
  const cellValue = (row: number, col: number): Value => {
    const c = lookup(row, col);
    if (!c || c.v === null) return 0;
    if (c.err) throw new FormulaError(c.err);
    return c.v;
  };
  const skip = () => {
    src = src.replace(/^\s+/, '');
  };
  const num = (v: Value): number => {
    if (Array.isArray(v)) throw new FormulaError('#VALUE!');
    if (typeof v === 'number') return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v === '') return 0;
    const n = Number(v);
    if (Number.isNaN(n)) throw new FormulaError('#VALUE!');
    return n;
  };
  const flat = (vs: Value[]): Value[] => vs.flatMap((v) => (Array.isArray(v) ? flat(v) : [v]));
  const primary = (): Value => {
    skip();
    if (src.startsWith('(')) {
      src = src.slice(1);
      const v = expr();
      skip();
      if (!src.startsWith(')')) throw new FormulaError('#ERROR!');
      src = src.slice(1);
      return v;
    }
    if (src.startsWith('-')) {
      src = src.slice(1);
      return -num(primary());
    }
    const str = /^"((?:[^"]|"")*)"/.exec(src);
    if (str) {
      src = src.slice(str[0].length);
      return (str[1] ?? '').replaceAll('""', '"');
    }
    const n = /^\d+(\.\d+)?/.exec(src);
    if (n) {
      src = src.slice(n[0].length);
      return Number(n[0]);
    }
    const fn = /^([A-Za-z]+)\s*\(/.exec(src);
    if (fn) {
      src = src.slice(fn[0].length);
      const args: Value[] = [];
      skip();
      if (src.startsWith(')')) src = src.slice(1);
      else
        for (;;) {
          args.push(expr());
          skip();
          if (src.startsWith(',')) {
            src = src.slice(1);
            continue;
          }
          if (src.startsWith(')')) {
            src = src.slice(1);
            break;
          }
          throw new FormulaError('#ERROR!');
        }
      const name = (fn[1] ?? '').toUpperCase();
      const values = flat(args);
      const nums = values.filter((v) => typeof v === 'number') as number[];
      switch (name) {
        case 'SUM':
          return nums.reduce((a, b) => a + b, 0);
        case 'MIN':
          return nums.length ? nums.reduce((a, b) => (b < a ? b : a)) : 0;
        case 'MAX':
          return nums.length ? nums.reduce((a, b) => (b > a ? b : a)) : 0;
        case 'COUNT':
          return nums.length;
        case 'AVERAGE':
          if (!nums.length) throw new FormulaError('#DIV/0!');
          return nums.reduce((a, b) => a + b, 0) / nums.length;
        case 'CONCATENATE':
          return values.map(String).join('');
        case 'UPPER':
          return String(values[0] ?? '').toUpperCase();
        case 'LOWER':
          return String(values[0] ?? '').toLowerCase();
        case 'IF':
          return args[0] ? (args[1] ?? true) : (args[2] ?? false);
        default:
          throw new FormulaError('#NAME?');
      }
    }
    const a = REF.exec(src);
    if (a) {
      src = src.slice(a[0].length);
      const r1 = Number(a[2]) - 1;
      const c1 = colIndex(a[1] ?? 'A');
      if (src.startsWith(':')) {
        const b = REF.exec(src.slice(1));
        if (!b) throw new FormulaError('#ERROR!');
        src = src.slice(1 + b[0].length);
        const r2 = Number(b[2]) - 1;
        const c2 = colIndex(b[1] ?? 'A');
        const out: Value[] = [];
        for (let r = Math.min(r1, r2); r <= Math.max(r1, r2); r++)
          for (let c = Math.min(c1, c2); c <= Math.max(c1, c2); c++) {
            const cell = lookup(r, c);
            if (cell?.err) throw new FormulaError(cell.err);
            if (cell && cell.v !== null) out.push(cell.v);
          }
        return out;
      }
      return cellValue(r1, c1);
    }
    if (/^TRUE\b/i.test(src)) {
      src = src.slice(4);
      return true;
    }
    if (/^FALSE\b/i.test(src)) {
      src = src.slice(5);
      return false;
    }
    throw new FormulaError('#ERROR!');
  };
  const term = (): Value => {
    let v = primary();
    for (;;) {
      skip();
      const op = src[0];
      if (op !== '*' && op !== '/') return v;
      src = src.slice(1);
      const r = num(primary());
      if (op === '/' && r === 0) throw new FormulaError('#DIV/0!');
      v = op === '*' ? num(v) * r : num(v) / r;
    }
  };
  const sum = (): Value => {
    let v = term();
    for (;;) {
      skip();
      const op = src[0];
      if (op !== '+' && op !== '-') return v;
      src = src.slice(1);
      const r = num(term());
      v = op === '+' ? num(v) + r : num(v) - r;
    }
  };
  const expr = (): Value => {
    let v = sum();
    for (;;) {
      skip();
      if (src[0] === '&') {
        src = src.slice(1);
        v = `${String(v)}${String(sum())}`;
        continue;
      }
      const cmp = /^(<>|<=|>=|=|<|>)/.exec(src);
      if (!cmp) return v;
      src = src.slice(cmp[0].length);
      const r = sum();
      const [x, y] =
        typeof v === 'number' || typeof r === 'number' ? [num(v), num(r)] : [String(v), String(r)];
      switch (cmp[0]) {
        case '=':
          v = x === y;
          break;
        case '<>':
          v = x !== y;
          break;
        case '<':
          v = x < y;
          break;
        case '>':
          v = x > y;
          break;
        case '<=':
          v = x <= y;
          break;
        default:
          v = x >= y;
      }
    }
  };
  try {
    const v = expr();
    skip();
    if (src !== '') throw new FormulaError('#ERROR!');
    if (Array.isArray(v)) return { v: (flat(v)[0] as number | string | boolean | undefined) ?? null };
    return { v };
  } catch (e) {
    if (e instanceof FormulaError) return { v: null, err: e.code };
    throw e;
  }
}
