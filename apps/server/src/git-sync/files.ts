import {
  type CanonicalValue,
  type FieldSpec,
  type FieldType,
  normalizeValue,
  type RecordData,
} from '@lockstep/engine';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';

/**
 * The files of a git sync, under its folder:
 *   schema.json              tables, fields (app names, canonical types), table pairs and field pairs
 *   left/<Table>.csv|.jsonl  one file per table of a chosen side, one row per record
 *   right/<Table>.csv|.jsonl
 * A row is the record's id (`_id`) then one column per field, named as the app names it; rows are
 * in a stable order (by record id, numbers by value), so a diff shows only what changed. A CSV cell
 * holds text as is, numbers as exact decimals, yes/no as true/false, lists and objects as JSON; an
 * empty cell is no value. A JSON Lines row is one object with the same keys and canonical values.
 */
export const ID_COLUMN = '_id';

/** A file edited out of shape: the run fails with this text (file and line). */
export class FileFormatError extends Error {}
export const SCHEMA_FILE = 'schema.json';

export type FileField = FieldSpec & { column: string };
export type TableFile = {
  side: 'left' | 'right';
  /** Lockstep's id of the table (external_table.id). */
  tableId: string;
  remoteId: string;
  name: string;
  app: string;
  /** The path relative to the folder. */
  file: string;
  fields: FileField[];
};
export type SchemaMapping = {
  tableMappingId: string;
  left: { table: string; file: string | null };
  right: { table: string; file: string | null };
  direction: string;
  conflictWinnerSide: 'left' | 'right';
  fields: { left: string; right: string; direction: string }[];
};
export type SchemaDoc = {
  version: 1;
  format: 'csv' | 'jsonl';
  tables: {
    side: 'left' | 'right';
    app: string;
    tableId: string;
    remoteId: string;
    name: string;
    file: string;
    fields: {
      id: string;
      column: string;
      type: FieldType;
      readOnly: boolean;
      options?: FieldSpec['options'];
    }[];
  }[];
  mappings: SchemaMapping[];
};

const UNSAFE = /[/\\:*?"<>|]/g;
/** Characters no file name should hold: path separators, Windows' reserved ones, control characters. */
const safe = (name: string) =>
  [...name.replace(UNSAFE, '_')].map((ch) => ((ch.codePointAt(0) ?? 0) < 32 ? '_' : ch)).join('');

/** A file name from a table name: readable, safe on every file system, unique within its side. */
export function fileNames(tables: { side: string; name: string; remoteId: string }[], ext: string): string[] {
  const used = new Set<string>();
  return tables.map((t) => {
    const base = safe(t.name).replace(/^\.+/, '_').trim() || 'table';
    let name = `${t.side}/${base}.${ext}`;
    if (used.has(name.toLowerCase())) name = `${t.side}/${base} (${safe(t.remoteId)}).${ext}`;
    used.add(name.toLowerCase());
    return name;
  });
}

/** Column names from field names: unique, never the id column's. */
export function columnNames(fields: { name: string; id: string }[]): string[] {
  const used = new Set<string>([ID_COLUMN]);
  return fields.map((f) => {
    let name = f.name.trim() || f.id;
    if (used.has(name)) name = `${name} (${f.id})`;
    used.add(name);
    return name;
  });
}

/** Record ids in a stable order: whole numbers by value, then the rest by code point. */
export function compareIds(a: string, b: string): number {
  const na = /^-?\d+$/.test(a);
  const nb = /^-?\d+$/.test(b);
  if (na && nb) {
    const d = BigInt(a) - BigInt(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  if (na !== nb) return na ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function cell(type: FieldType, v: CanonicalValue | undefined): string {
  if (v === null || v === undefined) return '';
  if (type === 'json' && typeof v === 'object' && 'json' in v) return JSON.stringify(v.json);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function fromCell(type: FieldType, text: string): unknown {
  if (text === '') return null;
  switch (type) {
    case 'multi_select':
    case 'relations':
    case 'attachments':
    case 'currency':
      return parseJsonOr(text, text);
    case 'json':
      return { json: parseJsonOr(text, text) };
    default:
      return text;
  }
}

const parseJsonOr = (text: string, fallback: unknown): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
};

const jsonValue = (type: FieldType, v: CanonicalValue | undefined): unknown =>
  v === undefined ? null : type === 'json' && v !== null && typeof v === 'object' && 'json' in v ? v.json : v;

/** A field's value as the engine holds it (a number as an exact decimal, say); as read if it is not one. */
function canonical(f: FileField, raw: unknown): CanonicalValue {
  const n = normalizeValue(f.type, raw ?? null, f.options);
  return n.ok ? n.value : (raw as CanonicalValue);
}

/** A table's file: its records in id order, their values canonical. */
export function encodeTable(t: TableFile, records: RecordData[], format: 'csv' | 'jsonl'): string {
  const sorted = [...records]
    .sort((a, b) => compareIds(a.id, b.id))
    .map((r) => ({
      id: r.id,
      fields: Object.fromEntries(t.fields.map((f) => [f.id, canonical(f, r.fields[f.id])])),
    }));
  if (format === 'jsonl') {
    return sorted
      .map((r) => {
        const row: Record<string, unknown> = { [ID_COLUMN]: r.id };
        for (const f of t.fields) row[f.column] = jsonValue(f.type, r.fields[f.id]);
        return `${JSON.stringify(row)}\n`;
      })
      .join('');
  }
  return stringify(
    sorted.map((r) => [r.id, ...t.fields.map((f) => cell(f.type, r.fields[f.id]))]),
    { header: true, columns: [ID_COLUMN, ...t.fields.map((f) => f.column)], record_delimiter: 'unix' },
  );
}

export type DecodedRow = { line: number; id: string | null; fields: Record<string, unknown> };

/**
 * A table's file back into rows, fields keyed by the app's field ids (columns matched by name; an
 * unknown column is ignored, a missing one leaves the field out). A row without an id is new.
 */
export function decodeTable(t: TableFile, text: string, format: 'csv' | 'jsonl'): DecodedRow[] {
  const byColumn = new Map(t.fields.map((f) => [f.column, f]));
  const rows: DecodedRow[] = [];
  if (format === 'jsonl') {
    for (const [i, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new FileFormatError(`${t.file}, line ${i + 1}: not a JSON object.`);
      }
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
        throw new FileFormatError(`${t.file}, line ${i + 1}: not a JSON object.`);
      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(obj)) {
        const f = byColumn.get(k);
        if (f) fields[f.id] = f.type === 'json' && v !== null ? { json: v } : v;
      }
      const id = obj[ID_COLUMN];
      rows.push({
        line: i + 1,
        id: id === null || id === undefined || id === '' ? null : String(id),
        fields,
      });
    }
    return rows;
  }
  let parsed: string[][];
  try {
    parsed = parse(text, { relax_column_count: true, skip_empty_lines: true, bom: true }) as string[][];
  } catch (error) {
    throw new FileFormatError(`${t.file}: not a CSV file (${(error as Error).message}).`);
  }
  const [header, ...body] = parsed;
  if (!header) return rows;
  const idAt = header.indexOf(ID_COLUMN);
  if (idAt < 0)
    throw new FileFormatError(
      `${t.file}: the first row must name the columns, with ${ID_COLUMN} for the record id.`,
    );
  for (const [i, row] of body.entries()) {
    const fields: Record<string, unknown> = {};
    header.forEach((name, c) => {
      const f = byColumn.get(name);
      if (f && c < row.length) fields[f.id] = fromCell(f.type, row[c] ?? '');
    });
    const id = row[idAt] ?? '';
    rows.push({ line: i + 2, id: id === '' ? null : id, fields });
  }
  return rows;
}

/** schema.json: what each file holds, and how the sync pairs the tables and fields. */
export function encodeSchema(doc: SchemaDoc): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function decodeSchema(text: string | undefined): SchemaDoc | null {
  if (text === undefined) return null;
  try {
    const doc = JSON.parse(text) as SchemaDoc;
    return doc && doc.version === 1 && Array.isArray(doc.tables) ? doc : null;
  } catch {
    return null;
  }
}

/** The tables a schema.json describes, as TableFile. */
export function tablesOf(doc: SchemaDoc): TableFile[] {
  return doc.tables.map((t) => ({
    side: t.side,
    tableId: t.tableId,
    remoteId: t.remoteId,
    name: t.name,
    app: t.app,
    file: t.file,
    fields: t.fields.map((f) => ({
      id: f.id,
      name: f.column,
      column: f.column,
      type: f.type,
      readOnly: f.readOnly,
      ...(f.options ? { options: f.options } : {}),
    })),
  }));
}

export const utf8 = (text: string) => new TextEncoder().encode(text);
export const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);
