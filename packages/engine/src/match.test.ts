import { describe, expect, it } from 'vitest';
import { matchRecords } from './match';

const rec = (id: string, email: string | null, name = 'x') => ({ id, fields: { email, name } });
const key = { leftFieldId: 'email', rightFieldId: 'email', type: 'email' as const };

describe('matching for the first sync', () => {
  it('pairs on normalised keys and lists the rest', () => {
    const r = matchRecords({
      left: [rec('l1', 'Ada@x.com'), rec('l2', 'grace@x.com'), rec('l3', 'only-left@x.com')],
      right: [rec('r1', ' ada@X.com '), rec('r2', 'GRACE@x.com'), rec('r3', 'only-right@x.com')],
      key,
    });
    expect(r.pairs.map((p) => [p.leftId, p.rightId])).toEqual([
      ['l1', 'r1'],
      ['l2', 'r2'],
    ]);
    expect(r.leftOnly).toEqual(['l3']);
    expect(r.rightOnly).toEqual(['r3']);
    expect(r.problems).toEqual([]);
  });

  it('never pairs duplicates, and reports them and missing keys as problems', () => {
    const r = matchRecords({
      left: [rec('l1', 'a@x.com'), rec('l2', 'A@x.com'), rec('l3', null)],
      right: [rec('r1', 'a@x.com'), rec('r2', 'b@x.com'), rec('r3', 'b@x.com')],
      key,
    });
    expect(r.pairs).toEqual([]);
    expect(r.duplicates.map((d) => [d.side, d.recordIds])).toEqual([
      ['left', ['l1', 'l2']],
      ['right', ['r2', 'r3']],
    ]);
    expect(r.missingKeys).toEqual([{ side: 'left', recordId: 'l3' }]);
    expect(r.problems.map((p) => p.code).sort()).toEqual(['duplicate_key', 'duplicate_key', 'missing_key']);
  });

  it('uses the secondary field to tell records apart', () => {
    const r = matchRecords({
      left: [rec('l1', 'a@x.com', 'One'), rec('l2', 'a@x.com', 'Two')],
      right: [rec('r1', 'a@x.com', 'two'), rec('r2', 'a@x.com', 'one')],
      key,
      secondary: { leftFieldId: 'name', rightFieldId: 'name', type: 'text' },
    });
    expect(r.pairs.map((p) => [p.leftId, p.rightId]).sort()).toEqual([
      ['l1', 'r2'],
      ['l2', 'r1'],
    ]);
  });
});
