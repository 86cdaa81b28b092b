/**
 * A1 notation as the Sheets API reads it (developers.google.com/workspace/sheets/api/guides/concepts):
 * `Sheet1!A1:B2`, `'My Sheet'!A:A`, `Sheet1!1:2`, `Sheet1!A5:A`, `Sheet1` (the whole sheet) and
 * `A1:B2` (the first visible sheet). Indexes in a GridRange are zero-based and half open; an absent
 * bound is unbounded.
 */

export type GridRange = {
  sheetId: number;
  startRowIndex?: number;
  endRowIndex?: number;
  startColumnIndex?: number;
  endColumnIndex?: number;
};

/** A parsed A1 range before the sheet name is resolved. */
export type A1 = {
  sheetName: string | undefined;
  startRow?: number;
  endRow?: number;
  startCol?: number;
  endCol?: number;
  /** True when the text after `!` (or the whole text) was only a sheet name. */
  wholeSheet: boolean;
};

export function columnLetter(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

export function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** Quotes a sheet name when A1 notation needs it (anything but letters, digits and underscores). */
export function quoteSheetName(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !CELL_PART.test(name)) return name;
  return `'${name.replaceAll("'", "''")}'`;
}

const CELL_PART = /^([A-Za-z]{1,3})?(\d+)?$/;

function parseCellPart(text: string): { col?: number; row?: number } | undefined {
  const m = CELL_PART.exec(text);
  if (!m || (m[1] === undefined && m[2] === undefined)) return undefined;
  const out: { col?: number; row?: number } = {};
  if (m[1] !== undefined) out.col = columnIndex(m[1]);
  if (m[2] !== undefined) {
    const row = Number(m[2]);
    if (row < 1) return undefined;
    out.row = row - 1;
  }
  return out;
}

/** Parses the cell part (`A1:B2`, `A:A`, `1:3`, `A5:A`, `B3`); undefined when it is not one. */
export function parseCells(text: string): Omit<A1, 'sheetName' | 'wholeSheet'> | undefined {
  const parts = text.split(':');
  if (parts.length > 2) return undefined;
  const a = parseCellPart(parts[0] ?? '');
  if (!a) return undefined;
  if (parts.length === 1) {
    if (a.col === undefined || a.row === undefined) return undefined;
    return { startRow: a.row, endRow: a.row + 1, startCol: a.col, endCol: a.col + 1 };
  }
  const b = parseCellPart(parts[1] ?? '');
  if (!b) return undefined;
  const out: Omit<A1, 'sheetName' | 'wholeSheet'> = {};
  const rows = [a.row, b.row].filter((x): x is number => x !== undefined);
  const cols = [a.col, b.col].filter((x): x is number => x !== undefined);
  // `A:B` has no rows; `1:2` has no columns; `A5:A` starts at row 5 and runs to the end.
  if (rows.length === 2) {
    out.startRow = Math.min(...rows);
    out.endRow = Math.max(...rows) + 1;
  } else if (rows.length === 1) out.startRow = rows[0];
  if (cols.length === 2) {
    out.startCol = Math.min(...cols);
    out.endCol = Math.max(...cols) + 1;
  } else if (cols.length === 1) {
    out.startCol = cols[0];
    if (a.col !== undefined && b.col === undefined) return undefined;
  }
  return out;
}

/** Splits `Sheet!A1:B2` / `'It''s'!A1` / `A1:B2` / `Sheet`; undefined when unparseable. */
export function parseA1(text: string, sheetNames: string[]): A1 | undefined {
  const range = text.trim();
  if (range === '') return undefined;
  let sheetName: string | undefined;
  let cells: string | undefined;
  if (range.startsWith("'")) {
    let i = 1;
    let name = '';
    for (; i < range.length; i++) {
      const ch = range[i] as string;
      if (ch === "'") {
        if (range[i + 1] === "'") {
          name += "'";
          i++;
          continue;
        }
        break;
      }
      name += ch;
    }
    if (i >= range.length) return undefined;
    sheetName = name;
    const rest = range.slice(i + 1);
    if (rest === '') cells = undefined;
    else if (rest.startsWith('!')) cells = rest.slice(1);
    else return undefined;
  } else {
    const bang = range.lastIndexOf('!');
    if (bang >= 0) {
      sheetName = range.slice(0, bang);
      cells = range.slice(bang + 1);
    } else if (sheetNames.includes(range)) {
      sheetName = range;
    } else {
      cells = range;
    }
  }
  if (cells === undefined || cells === '') return { sheetName, wholeSheet: true };
  const parsed = parseCells(cells);
  if (!parsed) return undefined;
  return { sheetName, wholeSheet: false, ...parsed };
}

export function formatRange(
  sheetName: string,
  r: { startRow: number; endRow: number; startCol: number; endCol: number },
): string {
  const start = `${columnLetter(r.startCol)}${r.startRow + 1}`;
  const end = `${columnLetter(r.endCol - 1)}${r.endRow}`;
  const cells = start === end ? start : `${start}:${end}`;
  return `${quoteSheetName(sheetName)}!${cells}`;
}
