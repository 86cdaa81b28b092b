import { describe, expect, it } from 'vitest';
import type { Config } from '../config';
import { columnNames, compareIds, decodeTable, encodeTable, fileNames, type TableFile } from './files';
import { assertRepositoryAllowed } from './store';

const table: TableFile = {
  side: 'left',
  tableId: 't1',
  remoteId: 'public.people',
  name: 'people',
  app: 'postgresql',
  file: 'left/people.csv',
  fields: [
    { id: 'name', name: 'name', column: 'name', type: 'text' },
    { id: 'tags', name: 'tags', column: 'tags', type: 'multi_select' },
    { id: 'vip', name: 'vip', column: 'vip', type: 'boolean' },
    { id: 'meta', name: 'meta', column: 'meta', type: 'json' },
    { id: 'score', name: 'score', column: 'score', type: 'number' },
  ],
};
const records = [
  {
    id: '10',
    fields: { name: 'Ten, "quoted"', tags: ['a', 'b'], vip: true, meta: { json: { k: 1 } }, score: '1.5' },
  },
  { id: '9', fields: { name: 'Nine\nlines', tags: null, vip: false, meta: null, score: null } },
  { id: 'x1', fields: { name: null, tags: ['c'], vip: false, meta: { json: [1] }, score: '-2' } },
];

describe('git sync files', () => {
  it('writes a CSV in record-id order (numbers by value), one column per field, and reads it back', () => {
    const csv = encodeTable(table, records, 'csv');
    expect(csv.split('\n')[0]).toBe('_id,name,tags,vip,meta,score');
    expect(csv.split('\n')[1]?.startsWith('9,')).toBe(true);
    expect(csv).toContain('10,"Ten, ""quoted""","[""a"",""b""]",true,"{""k"":1}",1.5');
    const back = decodeTable(table, csv, 'csv');
    expect(back.map((r) => r.id)).toEqual(['9', '10', 'x1']);
    expect(back[1]?.fields).toEqual({
      name: 'Ten, "quoted"',
      tags: ['a', 'b'],
      vip: 'true',
      meta: { json: { k: 1 } },
      score: '1.5',
    });
    expect(back[0]?.fields.name).toBe('Nine\nlines');
    expect(back[2]?.fields.name).toBeNull();
  });

  it('writes JSON Lines with canonical values and reads them back; a row without an id is new', () => {
    const jsonl = encodeTable(table, records, 'jsonl');
    const lines = jsonl.trimEnd().split('\n');
    expect(JSON.parse(lines[1] as string)).toEqual({
      _id: '10',
      name: 'Ten, "quoted"',
      tags: ['a', 'b'],
      vip: true,
      meta: { k: 1 },
      score: '1.5',
    });
    const back = decodeTable(table, `${jsonl}{"name":"New"}\n`, 'jsonl');
    expect(back[1]?.fields).toMatchObject({ meta: { json: { k: 1 } }, vip: true });
    expect(back.at(-1)).toMatchObject({ id: null, fields: { name: 'New' } });
    expect(() => decodeTable(table, 'not json\n', 'jsonl')).toThrow(/line 1: not a JSON object/);
  });

  it('refuses a CSV without the id column', () => {
    expect(() => decodeTable(table, 'name\nAda\n', 'csv')).toThrow(/_id/);
  });

  it('names files and columns safely and uniquely', () => {
    expect(
      fileNames(
        [
          { side: 'left', name: 'Sales/Leads: 2024', remoteId: 'a' },
          { side: 'left', name: 'sales_leads_ 2024', remoteId: 'b' },
          { side: 'left', name: 'Sales_Leads_ 2024', remoteId: 'c/d' },
          { side: 'right', name: '..hidden', remoteId: 'e' },
        ],
        'csv',
      ),
    ).toEqual([
      'left/Sales_Leads_ 2024.csv',
      'left/sales_leads_ 2024 (b).csv',
      'left/Sales_Leads_ 2024 (c_d).csv',
      'right/_hidden.csv',
    ]);
    expect(
      columnNames([
        { name: 'Name', id: 'f1' },
        { name: 'Name', id: 'f2' },
        { name: '_id', id: 'f3' },
      ]),
    ).toEqual(['Name', 'Name (f2)', '_id (f3)']);
    expect(['b', '10', '9', 'a', '-1'].sort(compareIds)).toEqual(['-1', '9', '10', 'a', 'b']);
  });

  it('allows a local repository on a local server only', () => {
    expect(() => assertRepositoryAllowed('local', { environment: 'production' } as Config)).toThrow(
      /local mode only/,
    );
    expect(() => assertRepositoryAllowed('local', { environment: 'test' } as Config)).toThrow(
      /local mode only/,
    );
    expect(() => assertRepositoryAllowed('local', { environment: 'local' } as Config)).not.toThrow();
    expect(() => assertRepositoryAllowed('https', { environment: 'production' } as Config)).not.toThrow();
  });
});
