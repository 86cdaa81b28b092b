import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MASS_DELETE,
  type Link,
  reconcile,
  shadowAfterWrite,
  type TableMappingSpec,
} from './reconcile';
import type { FieldSpec } from './types';
import { planWrites } from './write-plan';

const field = (id: string, type: FieldSpec['type'], extra: Partial<FieldSpec> = {}): FieldSpec => ({
  id,
  name: id,
  type,
  ...extra,
});
const mapping = (
  over: Partial<TableMappingSpec['policy']> = {},
  extra: Partial<TableMappingSpec> = {},
): TableMappingSpec => ({
  id: 'tm1',
  direction: 'both',
  fields: [
    { id: 'email', left: field('l_email', 'email'), right: field('r_email', 'email'), direction: 'both' },
    { id: 'name', left: field('l_name', 'text'), right: field('r_name', 'text'), direction: 'both' },
  ],
  policy: {
    conflictWinner: 'left',
    conflictReview: false,
    deleteProtection: false,
    massDelete: DEFAULT_MASS_DELETE,
    ...over,
  },
  ...extra,
});
const L = (id: string, name: string, email = 'a@x.com') => ({ id, fields: { l_email: email, l_name: name } });
const R = (id: string, name: string, email = 'a@x.com') => ({ id, fields: { r_email: email, r_name: name } });
const link = (name: string): Link => ({
  id: 'k1',
  leftId: 'L1',
  rightId: 'R1',
  version: 3,
  shadow: { email: { l: 'a@x.com', r: 'a@x.com' }, name: { l: name, r: name } },
});
const none = { records: [], deletedIds: [], scanComplete: false };

describe('reconcile', () => {
  it('propagates a one-sided edit, and only the changed field', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, records: [L('L1', 'Ada L.')] },
      right: none,
    });
    expect(r.operations).toEqual([
      expect.objectContaining({
        kind: 'update',
        side: 'right',
        remoteId: 'R1',
        fields: { r_name: 'Ada L.' },
      }),
    ]);
  });

  it('fills a blank from the other side on a first-sync match, and lets the winner settle real differences', () => {
    // Matched on email by the first sync: no shadow yet. The left wins conflicts.
    const matched: Link = { id: 'k1', leftId: 'L1', rightId: 'R1', version: 0, shadow: null };
    const r = reconcile({
      mapping: mapping(),
      links: [matched],
      left: { ...none, records: [{ id: 'L1', fields: { l_email: 'a@x.com', l_name: '  ' } }] },
      right: { ...none, records: [R('R1', 'Ada')] },
    });
    // The right's name fills the left's blank; the winner's blank does not erase it.
    expect(r.operations).toEqual([
      expect.objectContaining({ kind: 'update', side: 'left', remoteId: 'L1', fields: { l_name: 'Ada' } }),
    ]);
    const differ = reconcile({
      mapping: mapping(),
      links: [matched],
      left: { ...none, records: [L('L1', 'Ada Lovelace')] },
      right: { ...none, records: [R('R1', 'Ada')] },
    });
    expect(differ.operations).toEqual([
      expect.objectContaining({ side: 'right', fields: { r_name: 'Ada Lovelace' } }),
    ]);
  });

  it('lets a blank win once the pair has synced: clearing a field is an edit', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, records: [{ id: 'L1', fields: { l_email: 'a@x.com', l_name: null } }] },
      right: none,
    });
    expect(r.operations).toEqual([expect.objectContaining({ side: 'right', fields: { r_name: null } })]);
  });

  it('does nothing for an echo of our own write (a change means "differs from the shadow")', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: none,
      right: { ...none, records: [R('R1', 'Ada')] },
    });
    expect(r.operations).toEqual([]);
    expect(r.stats.unchanged).toBe(1);
  });

  it('moves only the shadow on a false conflict (both sides changed to the same value)', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, records: [L('L1', 'Ada B')] },
      right: { ...none, records: [R('R1', 'Ada B')] },
    });
    expect(r.operations).toEqual([]);
    expect(r.shadowUpdates[0]?.shadow.name).toEqual({ l: 'Ada B', r: 'Ada B' });
    expect(r.stats.falseConflicts).toBe(1);
  });

  it('resolves a conflict by the winner side, or by a per-field owner, deterministically', () => {
    const input = {
      links: [link('Ada')],
      left: { ...none, records: [L('L1', 'From left')] },
      right: { ...none, records: [R('R1', 'From right')] },
    };
    const byWinner = reconcile({ mapping: mapping({ conflictWinner: 'right' }), ...input });
    expect(byWinner.operations).toEqual([
      expect.objectContaining({ side: 'left', fields: { l_name: 'From right' } }),
    ]);
    expect(byWinner.resolvedConflicts).toEqual([
      expect.objectContaining({ fieldMappingId: 'name', winner: 'right' }),
    ]);
    const m = mapping({ conflictWinner: 'right' });
    m.fields[1] = { ...(m.fields[1] as (typeof m.fields)[number]), owner: 'left' };
    const byOwner = reconcile({ mapping: m, ...input });
    expect(byOwner.operations).toEqual([
      expect.objectContaining({ side: 'right', fields: { r_name: 'From left' } }),
    ]);
    expect(reconcile({ mapping: m, ...input })).toEqual(byOwner);
  });

  it('holds a conflict for review when asked, writing nothing', () => {
    const r = reconcile({
      mapping: mapping({ conflictReview: true }),
      links: [link('Ada')],
      left: { ...none, records: [L('L1', 'A')] },
      right: { ...none, records: [R('R1', 'B')] },
    });
    expect(r.operations).toEqual([]);
    expect(r.heldConflicts).toEqual([
      expect.objectContaining({ fieldMappingId: 'name', left: 'A', right: 'B' }),
    ]);
  });

  it('respects field directions: a one-way field ignores edits on its receiving side', () => {
    const m = mapping();
    m.fields[1] = { ...(m.fields[1] as (typeof m.fields)[number]), direction: 'left_to_right' };
    const r = reconcile({
      mapping: m,
      links: [link('Ada')],
      left: none,
      right: { ...none, records: [R('R1', 'Edited on right')] },
    });
    expect(r.operations).toEqual([]);
    expect(r.shadowUpdates[0]?.shadow.name).toEqual({ l: 'Ada', r: 'Edited on right' });
  });

  it('creates unlinked records on the other side with a stable idempotency key, within the filter', () => {
    const m = mapping({}, { filter: { side: 'left', fieldId: 'l_name', op: 'neq', value: 'skip me' } });
    const input = {
      mapping: m,
      links: [],
      left: { ...none, records: [L('L7', 'New', 'n@x.com'), L('L8', 'skip me', 's@x.com')] },
      right: none,
    };
    const r1 = reconcile(input);
    expect(r1.operations).toEqual([
      expect.objectContaining({
        kind: 'create',
        side: 'right',
        sourceId: 'L7',
        fields: { r_email: 'n@x.com', r_name: 'New' },
      }),
    ]);
    expect(reconcile(input).operations[0]?.idempotencyKey).toBe(r1.operations[0]?.idempotencyKey);
  });

  it('deletes only on positive evidence: a delete event, or absence after a complete scan', () => {
    const partial = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { records: [], deletedIds: [], scanComplete: false },
      right: none,
    });
    expect(partial.operations).toEqual([]);
    const scan = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { records: [], deletedIds: [], scanComplete: true },
      right: none,
    });
    expect(scan.operations).toEqual([
      expect.objectContaining({ kind: 'delete', side: 'right', remoteId: 'R1' }),
    ]);
    const event = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, deletedIds: ['L1'] },
      right: none,
    });
    expect(event.operations).toEqual([expect.objectContaining({ kind: 'delete', side: 'right' })]);
  });

  it('treats delete on one side and edit on the other as a conflict: the edited record comes back', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, deletedIds: ['L1'] },
      right: { ...none, records: [R('R1', 'Edited')] },
    });
    expect(r.operations).toEqual([
      expect.objectContaining({
        kind: 'create',
        side: 'left',
        linkId: 'k1',
        fields: { l_email: 'a@x.com', l_name: 'Edited' },
      }),
    ]);
  });

  it('sends deletes to the approval queue under delete protection', () => {
    const r = reconcile({
      mapping: mapping({ deleteProtection: true }),
      links: [link('Ada')],
      left: { ...none, deletedIds: ['L1'] },
      right: none,
    });
    expect(r.operations).toEqual([]);
    expect(r.deleteApprovals).toEqual([expect.objectContaining({ side: 'right', remoteId: 'R1' })]);
  });

  it('trips the mass-delete circuit breaker instead of deleting a fifth of the table', () => {
    const links: Link[] = Array.from({ length: 50 }, (_, i) => ({
      ...link('x'),
      id: `k${i}`,
      leftId: `L${i}`,
      rightId: `R${i}`,
    }));
    const r = reconcile({
      mapping: mapping(),
      links,
      left: { ...none, deletedIds: links.slice(0, 11).map((l) => l.leftId as string) },
      right: none,
    });
    expect(r.operations.filter((o) => o.kind === 'delete')).toEqual([]);
    expect(r.circuitBreakers).toEqual([{ side: 'right', wouldDelete: 11, linked: 50 }]);
    // Held, not dropped: every delete waits in the approval queue for the user's decision.
    expect(r.deleteApprovals.map((d) => d.remoteId).sort()).toEqual(
      links
        .slice(0, 11)
        .map((l) => l.rightId as string)
        .sort(),
    );
    const few = reconcile({
      mapping: mapping(),
      links,
      left: { ...none, deletedIds: ['L0', 'L1'] },
      right: none,
    });
    expect(few.operations.filter((o) => o.kind === 'delete')).toHaveLength(2);
  });

  it('weighs deletes per transaction where the app tells: a backlog of single deletes is no mass delete', () => {
    const links: Link[] = Array.from({ length: 2000 }, (_, i) => ({
      ...link('x'),
      id: `k${i}`,
      leftId: `L${i}`,
      rightId: `R${i}`,
    }));
    const deleted = links.slice(0, 150).map((l) => l.leftId as string);
    const backlog = reconcile({
      mapping: mapping(),
      links,
      left: { ...none, deletedIds: deleted, largestDeleteBatch: 1 },
      right: none,
    });
    expect(backlog.circuitBreakers).toEqual([]);
    expect(backlog.operations.filter((o) => o.kind === 'delete')).toHaveLength(150);
    // One statement deleting 150 rows: held for review.
    const bulk = reconcile({
      mapping: mapping(),
      links,
      left: { ...none, deletedIds: deleted, largestDeleteBatch: 150 },
      right: none,
    });
    expect(bulk.circuitBreakers).toEqual([{ side: 'right', wouldDelete: 150, linked: 2000 }]);
    // Without transaction information, all of a run's deletes count together, as before.
    const unknown = reconcile({
      mapping: mapping(),
      links,
      left: { ...none, deletedIds: deleted },
      right: none,
    });
    expect(unknown.circuitBreakers).toHaveLength(1);
  });

  it('trips the breaker on each side separately when both sides lose many records in one run', () => {
    const links: Link[] = Array.from({ length: 50 }, (_, i) => ({
      ...link('x'),
      id: `k${i}`,
      leftId: `L${i}`,
      rightId: `R${i}`,
    }));
    const r = reconcile({
      mapping: mapping(),
      links,
      left: { ...none, deletedIds: links.slice(0, 12).map((l) => l.leftId as string) },
      right: { ...none, deletedIds: links.slice(20, 31).map((l) => l.rightId as string) },
    });
    expect(r.circuitBreakers.map((c) => [c.side, c.wouldDelete])).toEqual([
      ['left', 11],
      ['right', 12],
    ]);
    expect(r.deleteApprovals).toHaveLength(23);
    expect(r.operations).toEqual([]);
  });

  it('maps relations through the links of the target mapping, and waits for missing ones', () => {
    const m = mapping();
    m.fields.push({
      id: 'company',
      left: field('l_company', 'relations'),
      right: field('r_company', 'relations'),
      direction: 'both',
    });
    const known = new Map([['LC1', 'RC1']]);
    const resolveRelation = (_f: string, _side: 'left' | 'right', id: string) => known.get(id) ?? null;
    const ok = reconcile({
      mapping: m,
      links: [],
      left: {
        ...none,
        records: [{ id: 'L9', fields: { l_email: 'z@x.com', l_name: 'Z', l_company: ['LC1'] } }],
      },
      right: none,
      resolveRelation,
    });
    expect(ok.operations[0]).toMatchObject({ kind: 'create', fields: { r_company: ['RC1'] } });
    const waiting = reconcile({
      mapping: m,
      links: [],
      left: {
        ...none,
        records: [{ id: 'L9', fields: { l_email: 'z@x.com', l_name: 'Z', l_company: ['LC2'] } }],
      },
      right: none,
      resolveRelation,
    });
    expect(waiting.operations[0]?.kind).toBe('create');
    expect(
      waiting.operations[0] && 'fields' in waiting.operations[0] ? waiting.operations[0].fields : {},
    ).not.toHaveProperty('r_company');
    expect(waiting.problems).toEqual([expect.objectContaining({ code: 'relation_pending' })]);
    expect(waiting.pendingRelations).toEqual([
      { fieldMappingId: 'company', from: 'left', sourceId: 'L9', value: ['LC2'], missing: ['LC2'] },
    ]);
    // The shadow says the right side has no company yet, so a re-read is not an edit again.
    expect(waiting.operations[0]).toMatchObject({ intended: { company: { l: ['LC2'], r: null } } });
  });

  it('moves the shadow of a relation edit that waits, and writes the other fields', () => {
    const m = mapping();
    m.fields.push({
      id: 'company',
      left: field('l_company', 'relations'),
      right: field('r_company', 'relations'),
      direction: 'both',
    });
    const linked: Link = {
      ...link('Ada'),
      shadow: { ...link('Ada').shadow, company: { l: ['LC1'], r: ['RC1'] } },
    };
    const resolveRelation = (_f: string, _side: 'left' | 'right', id: string) =>
      id === 'LC1' ? 'RC1' : null;
    const r = reconcile({
      mapping: m,
      links: [linked],
      left: {
        ...none,
        records: [{ id: 'L1', fields: { l_email: 'a@x.com', l_name: 'Ada L.', l_company: ['LC2'] } }],
      },
      right: none,
      resolveRelation,
    });
    expect(r.operations).toEqual([
      expect.objectContaining({
        kind: 'update',
        fields: { r_name: 'Ada L.' },
        intended: expect.objectContaining({ company: { l: ['LC2'], r: ['RC1'] } }),
      }),
    ]);
    expect(r.pendingRelations).toEqual([
      expect.objectContaining({ sourceId: 'L1', from: 'left', value: ['LC2'], missing: ['LC2'] }),
    ]);
    // Read again before the linked record syncs: nothing to do (the runtime writes it later).
    const again = reconcile({
      mapping: m,
      links: [{ ...linked, shadow: r.operations[0]?.kind === 'update' ? r.operations[0].intended : null }],
      left: {
        ...none,
        records: [{ id: 'L1', fields: { l_email: 'a@x.com', l_name: 'Ada L.', l_company: ['LC2'] } }],
      },
      right: none,
      resolveRelation,
    });
    expect(again.operations).toEqual([]);
    expect(again.pendingRelations).toEqual([]);
  });

  it('reports a value of the wrong type as a problem and leaves that field alone', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, records: [{ id: 'L1', fields: { l_email: 42, l_name: 'New' } as never }] },
      right: none,
    });
    expect(r.problems).toEqual([
      expect.objectContaining({ code: 'type_mismatch', fieldId: 'l_email', recordId: 'L1' }),
    ]);
    expect(r.operations).toEqual([expect.objectContaining({ fields: { r_name: 'New' } })]);
  });

  it('stores the post-image as the shadow, so app normalisation is not an edit', () => {
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...none, records: [L('L1', 'ada lovelace')] },
      right: none,
    });
    const op = r.operations[0];
    if (op?.kind !== 'update') throw new Error('expected an update');
    const shadow = shadowAfterWrite(mapping(), op, {
      id: 'R1',
      fields: { r_email: 'a@x.com', r_name: 'Ada Lovelace' },
    });
    expect(shadow.name).toEqual({ l: 'ada lovelace', r: 'Ada Lovelace' });
  });

  it("keeps a created record's app-stamped read-only value as the shadow, never carrying it back over the source", () => {
    // Left stamps its own created time (read-only there); right's created_at is writable.
    const m = mapping(
      {},
      {
        fields: [
          ...mapping().fields,
          {
            id: 'created',
            left: field('l_created', 'datetime', { readOnly: true }),
            right: field('r_created', 'datetime'),
            direction: 'both',
          },
        ],
      },
    );
    const source = {
      id: 'R9',
      fields: { r_email: 'b@x.com', r_name: 'Bo', r_created: '2020-01-01T00:00:00Z' },
    };
    const first = reconcile({ mapping: m, links: [], left: none, right: { ...none, records: [source] } });
    const create = first.operations[0];
    if (create?.kind !== 'create') throw new Error('expected a create');
    expect(Object.keys(create.fields).sort()).toEqual(['l_email', 'l_name']);
    const made = {
      id: 'L9',
      fields: { l_email: 'b@x.com', l_name: 'Bo', l_created: '2026-11-25T09:00:00Z' },
    };
    const shadow = shadowAfterWrite(m, create, made);
    const next = reconcile({
      mapping: m,
      links: [{ id: 'k9', leftId: 'L9', rightId: 'R9', version: 1, shadow }],
      left: { ...none, records: [made] },
      right: { ...none, records: [source] },
    });
    expect(next.operations).toEqual([]);
  });

  it('cuts writes into batches of the connector size, creates first', () => {
    const left = {
      ...none,
      records: Array.from({ length: 7 }, (_, i) => L(`L${i + 10}`, `N${i}`, `${i}@x.com`)),
    };
    const r = reconcile({
      mapping: mapping(),
      links: [link('Ada')],
      left: { ...left, records: [...left.records, L('L1', 'Changed')] },
      right: none,
    });
    const batches = planWrites(r.operations, { left: 10, right: 3 });
    expect(batches.map((b) => [b.kind, b.side, b.operations.length])).toEqual([
      ['create', 'right', 3],
      ['create', 'right', 3],
      ['create', 'right', 1],
      ['update', 'right', 1],
    ]);
  });
});

describe('reconcile of date-times with microseconds', () => {
  // Left: a PostgreSQL timestamptz (microseconds). Right: an app that holds milliseconds, or another timestamptz.
  const pg = field('l_at', 'datetime', { options: { datetimeDigits: 6 } });
  const at = (right: FieldSpec): TableMappingSpec => ({
    ...mapping(),
    fields: [{ id: 'at', left: pg, right, direction: 'both' }],
  });
  const pair = (shadow: Link['shadow']): Link => ({
    id: 'k1',
    leftId: 'L1',
    rightId: 'R1',
    version: 1,
    shadow,
  });
  const micro = '2026-01-02 10:11:12.987654+00';

  it('sees a first-sync pair equal at the milliseconds an app holds, and writes nothing', () => {
    const r = reconcile({
      mapping: at(field('r_at', 'datetime')),
      links: [pair(null)],
      left: { ...none, records: [{ id: 'L1', fields: { l_at: micro } }] },
      right: { ...none, records: [{ id: 'R1', fields: { r_at: '2026-01-02T10:11:12.987Z' } }] },
    });
    expect(r.operations).toEqual([]);
    expect(r.shadowUpdates).toEqual([
      { linkId: 'k1', shadow: { at: { l: '2026-01-02T10:11:12.987654Z', r: '2026-01-02T10:11:12.987Z' } } },
    ]);
  });

  it('writes a microsecond edit to a side that holds microseconds', () => {
    const r = reconcile({
      mapping: at(field('r_at', 'datetime', { options: { datetimeDigits: 6 } })),
      links: [pair({ at: { l: '2026-01-02T10:11:12.987Z', r: '2026-01-02T10:11:12.987Z' } })],
      left: { ...none, records: [{ id: 'L1', fields: { l_at: micro } }] },
      right: { ...none, records: [{ id: 'R1', fields: { r_at: '2026-01-02 10:11:12.987+00' } }] },
    });
    expect(r.operations).toEqual([
      expect.objectContaining({
        kind: 'update',
        side: 'right',
        fields: { r_at: '2026-01-02T10:11:12.987654Z' },
      }),
    ]);
  });

  it('moves only the shadow for a microsecond edit an app cannot hold', () => {
    const r = reconcile({
      mapping: at(field('r_at', 'datetime')),
      links: [pair({ at: { l: '2026-01-02T10:11:12.987Z', r: '2026-01-02T10:11:12.987Z' } })],
      left: { ...none, records: [{ id: 'L1', fields: { l_at: micro } }] },
      right: { ...none, records: [{ id: 'R1', fields: { r_at: '2026-01-02T10:11:12.987Z' } }] },
    });
    expect(r.operations).toEqual([]);
    expect(r.stats.echoes).toBe(1);
  });
});

describe('reconcile with a field the other app requires', () => {
  // The right side's name is a NOT NULL column without a default.
  const requiring = (): TableMappingSpec => {
    const m = mapping();
    m.fields = m.fields.map((fm) =>
      fm.id === 'name' ? { ...fm, right: { ...fm.right, options: { required: true } } } : fm,
    );
    return m;
  };
  const Lnull = (id: string) => ({ id, fields: { l_email: 'b@x.com', l_name: null } });

  it('creates no record whose required value is empty, and says which field', () => {
    const r = reconcile({
      mapping: requiring(),
      links: [],
      left: { ...none, records: [Lnull('L2'), L('L3', 'Grace', 'g@x.com')] },
      right: none,
    });
    expect(r.operations.map((o) => (o.kind === 'create' ? o.sourceId : o.kind))).toEqual(['L3']);
    expect(r.problems).toEqual([
      expect.objectContaining({ code: 'required_missing', side: 'left', recordId: 'L2', fieldId: 'l_name' }),
    ]);
    // The other direction has no requirement: an empty name is created as empty.
    const back = reconcile({
      mapping: requiring(),
      links: [],
      left: none,
      right: { ...none, records: [{ id: 'R2', fields: { r_email: 'c@x.com', r_name: null } }] },
    });
    expect(back.operations).toHaveLength(1);
    expect(back.problems).toEqual([]);
  });

  it('does not write an emptied value into a required field, and keeps reporting it until it is filled', () => {
    const r = reconcile({
      mapping: requiring(),
      links: [link('Ada')],
      left: { ...none, records: [{ id: 'L1', fields: { l_email: 'a@x.com', l_name: null } }] },
      right: none,
    });
    expect(r.operations).toEqual([]);
    expect(r.shadowUpdates).toEqual([]);
    expect(r.problems).toEqual([
      expect.objectContaining({ code: 'required_missing', side: 'left', recordId: 'L1' }),
    ]);
  });
});
