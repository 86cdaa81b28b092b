/**
 * The in-memory model of spreadsheets: sheets as arrays of row objects, developer metadata that
 * points at row/column objects (so it moves with them on insert, delete and move, and disappears
 * with them), and the structural edits shared by the API and the out-of-band handles.
 */
import { type GridRange, quoteSheetName } from './a1.ts';
import { type Cell, evaluateFormula, inputCell, isEmpty } from './cells.ts';

export type Row = { cells: (Cell | undefined)[]; hiddenByUser?: boolean };
/** A column object: its identity (so column metadata can follow the column) and its properties. */
export type Col = { n: number; hiddenByUser?: boolean };

/**
 * A protected range. Its bounds point at row/column objects (first and last, inclusive; undefined =
 * unbounded), so the range follows its rows and columns when others are inserted, deleted or moved,
 * as Google adjusts protected ranges.
 */
export type ProtectedRangeState = {
  protectedRangeId: number;
  description?: string;
  warningOnly: boolean;
  rows?: [Row, Row];
  cols?: [Col, Col];
};

export type SheetState = {
  sheetId: number;
  title: string;
  rows: Row[];
  cols: Col[];
  frozenRowCount: number;
  protectedRanges?: ProtectedRangeState[];
};

export type MetadataLocation =
  | { kind: 'SPREADSHEET' }
  | { kind: 'SHEET'; sheet: SheetState }
  | { kind: 'ROW'; sheet: SheetState; row: Row }
  | { kind: 'COLUMN'; sheet: SheetState; col: Col };

export type MetadataState = {
  metadataId: number;
  key: string;
  value?: string;
  visibility: 'DOCUMENT' | 'PROJECT';
  /** The project that created it; PROJECT metadata is visible to that project only. */
  project: string;
  loc: MetadataLocation;
};

export type SpreadsheetState = {
  spreadsheetId: string;
  title: string;
  locale: string;
  timeZone: string;
  sheets: SheetState[];
  metadata: MetadataState[];
  /** drive.file: whether the app created or was granted this file. */
  openedByApp: boolean;
  ownerUserId: string;
  createdTime: number;
  modifiedTime: number;
};

export class ModelError extends Error {}

/**
 * `items.splice(start, deleteCount, ...inserted)` without spreading `inserted` into call arguments:
 * a spread of 150,000 rows overflows the call stack ("Maximum call stack size exceeded").
 */
export function spliceItems<T>(items: T[], start: number, deleteCount: number, inserted: readonly T[]): T[] {
  const removed = items.slice(start, start + deleteCount);
  const tail = items.slice(start + deleteCount);
  items.length = start;
  for (const x of inserted) items.push(x);
  for (const x of tail) items.push(x);
  return removed;
}

/** The largest of `values` (or `initial`), without spreading them into call arguments. */
export function maxOf(values: Iterable<number>, initial = Number.NEGATIVE_INFINITY): number {
  let max = initial;
  for (const v of values) if (v > max) max = v;
  return max;
}

/** A region: rows and columns of one sheet (or of every sheet), half open; undefined = unbounded. */
export type Region = { sheetId: number | '*'; r0: number; r1: number; c0: number; c1: number };

export function sheetBounds(sheet: SheetState): { rowCount: number; columnCount: number } {
  return { rowCount: sheet.rows.length, columnCount: sheet.cols.length };
}

export function newRow(): Row {
  return { cells: [] };
}

let colCounter = 0;
export function newCol(): Col {
  colCounter += 1;
  return { n: colCounter };
}

export function regionOf(loc: MetadataLocation): Region {
  const all = { r0: 0, r1: Number.POSITIVE_INFINITY, c0: 0, c1: Number.POSITIVE_INFINITY };
  switch (loc.kind) {
    case 'SPREADSHEET':
      return { sheetId: '*', ...all };
    case 'SHEET':
      return { sheetId: loc.sheet.sheetId, ...all };
    case 'ROW': {
      const r = loc.sheet.rows.indexOf(loc.row);
      return { sheetId: loc.sheet.sheetId, ...all, r0: r, r1: r + 1 };
    }
    case 'COLUMN': {
      const c = loc.sheet.cols.indexOf(loc.col);
      return { sheetId: loc.sheet.sheetId, ...all, c0: c, c1: c + 1 };
    }
  }
}

export function gridRegion(g: GridRange): Region {
  return {
    sheetId: g.sheetId,
    r0: g.startRowIndex ?? 0,
    r1: g.endRowIndex ?? Number.POSITIVE_INFINITY,
    c0: g.startColumnIndex ?? 0,
    c1: g.endColumnIndex ?? Number.POSITIVE_INFINITY,
  };
}

export function intersects(a: Region, b: Region): boolean {
  if (a.sheetId !== '*' && b.sheetId !== '*' && a.sheetId !== b.sheetId) return false;
  return a.r0 < b.r1 && b.r0 < a.r1 && a.c0 < b.c1 && b.c0 < a.c1;
}

export function metadataJson(m: MetadataState) {
  let location: Record<string, unknown>;
  switch (m.loc.kind) {
    case 'SPREADSHEET':
      location = { locationType: 'SPREADSHEET', spreadsheet: true };
      break;
    case 'SHEET':
      location = { locationType: 'SHEET', sheetId: m.loc.sheet.sheetId };
      break;
    case 'ROW': {
      const i = m.loc.sheet.rows.indexOf(m.loc.row);
      location = {
        locationType: 'ROW',
        dimensionRange: { sheetId: m.loc.sheet.sheetId, dimension: 'ROWS', startIndex: i, endIndex: i + 1 },
      };
      break;
    }
    case 'COLUMN': {
      const i = m.loc.sheet.cols.indexOf(m.loc.col);
      location = {
        locationType: 'COLUMN',
        dimensionRange: {
          sheetId: m.loc.sheet.sheetId,
          dimension: 'COLUMNS',
          startIndex: i,
          endIndex: i + 1,
        },
      };
      break;
    }
  }
  return {
    metadataId: m.metadataId,
    metadataKey: m.key,
    ...(m.value !== undefined ? { metadataValue: m.value } : {}),
    location,
    visibility: m.visibility,
  };
}

/** A protected range as the API shows it; undefined once a bound row or column was deleted. */
export function protectedRangeJson(sheet: SheetState, p: ProtectedRangeState) {
  const range: Record<string, number> = { sheetId: sheet.sheetId };
  if (p.rows) {
    const a = sheet.rows.indexOf(p.rows[0]);
    const b = sheet.rows.indexOf(p.rows[1]);
    if (a < 0 || b < 0) return undefined;
    range.startRowIndex = Math.min(a, b);
    range.endRowIndex = Math.max(a, b) + 1;
  }
  if (p.cols) {
    const a = sheet.cols.indexOf(p.cols[0]);
    const b = sheet.cols.indexOf(p.cols[1]);
    if (a < 0 || b < 0) return undefined;
    range.startColumnIndex = Math.min(a, b);
    range.endColumnIndex = Math.max(a, b) + 1;
  }
  return {
    protectedRangeId: p.protectedRangeId,
    range,
    ...(p.description !== undefined ? { description: p.description } : {}),
    ...(p.warningOnly ? { warningOnly: true } : {}),
    requestingUserCanEdit: true,
  };
}

// ---------------------------------------------------------------------------------------------
// Structural edits

export function insertRows(
  sheet: SheetState,
  index: number,
  count: number,
  inheritFromBefore: boolean,
): Row[] {
  if (index < 0 || index > sheet.rows.length) throw new ModelError(`Row index ${index} is out of range.`);
  const source = inheritFromBefore ? sheet.rows[index - 1] : sheet.rows[index];
  const fresh = Array.from({ length: count }, () => {
    const row = newRow();
    // New rows take the formats (not the values) of their neighbour, as the UI does.
    if (source) row.cells = source.cells.map((c) => (c?.fmt ? { v: null, fmt: { ...c.fmt } } : undefined));
    return row;
  });
  spliceItems(sheet.rows, index, 0, fresh);
  return fresh;
}

export function insertCols(sheet: SheetState, index: number, count: number): void {
  if (index < 0 || index > sheet.cols.length) throw new ModelError(`Column index ${index} is out of range.`);
  spliceItems(sheet.cols, index, 0, Array.from({ length: count }, newCol));
  const blanks = new Array<Cell | undefined>(count).fill(undefined);
  for (const row of sheet.rows) {
    if (row.cells.length > index) spliceItems(row.cells, index, 0, blanks);
  }
}

/** Deletes rows; their metadata goes with them. */
export function deleteRows(ss: SpreadsheetState, sheet: SheetState, start: number, end: number): void {
  if (start < 0 || end > sheet.rows.length || start >= end)
    throw new ModelError(`Row range [${start}, ${end}) is out of range.`);
  const removed = new Set(sheet.rows.splice(start, end - start));
  ss.metadata = ss.metadata.filter((m) => !(m.loc.kind === 'ROW' && removed.has(m.loc.row)));
}

export function deleteCols(ss: SpreadsheetState, sheet: SheetState, start: number, end: number): void {
  if (start < 0 || end > sheet.cols.length || start >= end)
    throw new ModelError(`Column range [${start}, ${end}) is out of range.`);
  const removed = new Set(sheet.cols.splice(start, end - start));
  for (const row of sheet.rows) row.cells.splice(start, end - start);
  ss.metadata = ss.metadata.filter((m) => !(m.loc.kind === 'COLUMN' && removed.has(m.loc.col)));
}

/** moveDimension: `destination` is an index before the source is taken out (as the API defines it). */
export function moveItems<T>(items: T[], start: number, end: number, destination: number): void {
  if (start < 0 || end > items.length || start >= end) throw new ModelError('Source range is out of range.');
  if (destination < 0 || destination > items.length) throw new ModelError('Destination is out of range.');
  if (destination >= start && destination <= end) return;
  const moved = spliceItems(items, start, end - start, []);
  const at = destination > start ? destination - moved.length : destination;
  spliceItems(items, at, 0, moved);
}

export function moveCols(sheet: SheetState, start: number, end: number, destination: number): void {
  moveItems(sheet.cols, start, end, destination);
  for (const row of sheet.rows) {
    while (row.cells.length < sheet.cols.length) row.cells.push(undefined);
    moveItems(row.cells, start, end, destination);
  }
}

// ---------------------------------------------------------------------------------------------
// Values

export function cellAt(sheet: SheetState, r: number, c: number): Cell | undefined {
  return sheet.rows[r]?.cells[c];
}

export function setCell(sheet: SheetState, r: number, c: number, cell: Cell | undefined): void {
  const row = sheet.rows[r];
  if (!row) throw new ModelError(`Row ${r} is outside the grid.`);
  while (row.cells.length <= c) row.cells.push(undefined);
  row.cells[c] = cell && (isEmpty(cell) && !cell.fmt ? undefined : cell);
}

/** Writes user input (USER_ENTERED) into one cell; for the out-of-band handles. */
export function typeInto(sheet: SheetState, r: number, c: number, value: unknown): void {
  const cell = inputCell(value, 'USER_ENTERED', cellAt(sheet, r, c));
  if ('error' in cell) throw new ModelError(cell.error);
  setCell(sheet, r, c, cell);
}

/** Recomputes formula cells (two passes resolve simple chains). */
export function recalc(ss: SpreadsheetState): void {
  for (let pass = 0; pass < 2; pass++) {
    for (const sheet of ss.sheets) {
      for (const row of sheet.rows) {
        for (const cell of row.cells) {
          if (!cell?.f) continue;
          const result = evaluateFormula(cell.f, (r, c) => cellAt(sheet, r, c));
          cell.v = result.v;
          if (result.err) cell.err = result.err;
          else delete cell.err;
        }
      }
    }
  }
}

/** The last row (exclusive) holding any content in columns [c0, c1), looking at rows from `from` down to 0. */
export function dataExtent(
  sheet: SheetState,
  c0 = 0,
  c1 = Number.POSITIVE_INFINITY,
  from = sheet.rows.length - 1,
): number {
  for (let r = from; r >= 0; r--) {
    const row = sheet.rows[r] as Row;
    for (let c = c0; c < Math.min(c1, row.cells.length); c++) if (!isEmpty(row.cells[c])) return r + 1;
  }
  return 0;
}

export function sheetLabel(sheet: SheetState): string {
  return quoteSheetName(sheet.title);
}
