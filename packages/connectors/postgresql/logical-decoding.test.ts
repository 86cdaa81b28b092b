import { describe, expect, it } from 'vitest';
import { collectChanges, compareLsn, OWN_WRITE_PREFIX, parseDecodedLine } from './logical-decoding';

// Lines as PostgreSQL 17's test_decoding prints them (taken from a real slot, see the integration test).
describe('parseDecodedLine', () => {
  it('reads a quoted table, quoted columns and values holding quotes, brackets and the markers', () => {
    const d = parseDecodedLine(
      `table public."T x": INSERT: id[integer]:1 "Name"[text]:'it''s "q" [x]:y new-tuple: z' tags[text[]]:'{a,"b c"}' n[numeric]:1.5 gone[text]:null`,
    );
    expect(d).toEqual({
      kind: 'change',
      table: 'public.T x',
      op: 'I',
      oldKey: null,
      row: new Map([
        ['id', '1'],
        ['Name', `it's "q" [x]:y new-tuple: z`],
        ['tags', '{a,"b c"}'],
        ['n', '1.5'],
        ['gone', null],
      ]),
    });
  });

  it('reads the old key of an update that changed it, and a delete by key', () => {
    const u = parseDecodedLine(
      `table s.t2: UPDATE: old-key: k[uuid]:'d2a9' new-tuple: k[uuid]:'e3b0' v[text]:'x'`,
    );
    expect(u).toMatchObject({ table: 's.t2', op: 'U', oldKey: new Map([['k', 'd2a9']]) });
    expect(u.kind === 'change' && u.row.get('k')).toBe('e3b0');
    expect(parseDecodedLine(`table s.t2: DELETE: k[uuid]:'d2a9'`)).toMatchObject({
      op: 'D',
      row: new Map([['k', 'd2a9']]),
    });
  });

  it('tells transactions, messages and what it cannot key apart', () => {
    expect(parseDecodedLine('BEGIN')).toEqual({ kind: 'begin' });
    expect(parseDecodedLine('COMMIT')).toEqual({ kind: 'commit' });
    expect(
      parseDecodedLine(`message: transactional: 1 prefix: ${OWN_WRITE_PREFIX}, sz: 8 content:lockstep`),
    ).toEqual({ kind: 'message', prefix: OWN_WRITE_PREFIX });
    expect(parseDecodedLine('table public.t: DELETE: (no-tuple-data)')).toEqual({ kind: 'other' });
    expect(parseDecodedLine('table public.t: TRUNCATE: (no-flags)')).toEqual({ kind: 'other' });
  });
});

describe('collectChanges', () => {
  const tables = new Map([['public.people', 'id']]);
  const tx = (end: string, ...lines: string[]) => [
    { lsn: '0/100', xid: '1', data: 'BEGIN' },
    ...lines.map((data) => ({ lsn: '0/100', xid: '1', data })),
    { lsn: end, xid: '1', data: 'COMMIT' },
  ];

  it("keeps registered tables' keys, skips Lockstep's own transactions and those stored already", () => {
    const rows = [
      ...tx('0/200', `table public.people: INSERT: id[integer]:1 email[text]:'a@x'`),
      ...tx(
        '0/300',
        `message: transactional: 1 prefix: ${OWN_WRITE_PREFIX}, sz: 8 content:lockstep`,
        `table public.people: UPDATE: id[integer]:2 email[text]:'b@x'`,
      ),
      ...tx('0/400', `table public.other: INSERT: id[integer]:9`),
      ...tx(
        '0/500',
        `table public.people: UPDATE: old-key: id[integer]:3 new-tuple: id[integer]:30 email[text]:'c@x'`,
        `table public.people: DELETE: id[integer]:4`,
      ),
    ];
    expect(collectChanges(rows, tables, '0/0')).toEqual({
      changes: [
        { table: 'public.people', pk: '1', op: 'I' },
        { table: 'public.people', pk: '3', op: 'D' },
        { table: 'public.people', pk: '30', op: 'U' },
        { table: 'public.people', pk: '4', op: 'D' },
      ],
      lastCommit: '0/500',
    });
    // Peeked again after a crash before the slot moved: what ends at or before 0/200 is not stored twice.
    expect(collectChanges(rows, tables, '0/200').changes.map((c) => c.pk)).toEqual(['3', '30', '4']);
  });

  it('compares LSNs as numbers, not text', () => {
    expect(compareLsn('0/A00', '0/9FF')).toBe(1);
    expect(compareLsn('1/0', 'FFFFFFFF/0')).toBe(-1);
    expect(compareLsn('2/10', '2/10')).toBe(0);
  });
});
