/** RFC 4180 CSV as Bulk API 2.0 reads and writes it (any of its column delimiters, LF or CRLF). */

export const COLUMN_DELIMITERS: Record<string, string> = {
  BACKQUOTE: '`',
  CARET: '^',
  COMMA: ',',
  PIPE: '|',
  SEMICOLON: ';',
  TAB: '\t',
};

export function parseCsv(text: string, delimiter = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  let fieldStarted = false;
  const endField = () => {
    row.push(field);
    field = '';
    fieldStarted = false;
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
      i++;
      continue;
    }
    if (c === delimiter) {
      endField();
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      endField();
      if (row.some((v) => v !== '') || row.length > 1) rows.push(row);
      row = [];
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    field += c;
    fieldStarted = true;
    i++;
  }
  if (fieldStarted || field !== '' || row.length > 0) {
    endField();
    if (row.some((v) => v !== '') || row.length > 1) rows.push(row);
  }
  return rows;
}

export function toCsv(rows: (string | null)[][], delimiter = ',', lineEnding = '\n'): string {
  return rows
    .map((r) => r.map((v) => `"${(v ?? '').replace(/"/g, '""')}"`).join(delimiter))
    .map((line) => line + lineEnding)
    .join('');
}
