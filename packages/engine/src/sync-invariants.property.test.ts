import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MASS_DELETE, type TableMappingSpec } from './reconcile';
import { MemoryApp } from './testing/memory-app';
import { SyncSimulation } from './testing/sync-simulation';
import type { CanonicalValue, FieldSpec, Side } from './types';

// Model-based proof of the invariants of ARCHITECTURE.md: two in-memory apps that normalise what
// they store, random edits on both sides, and a runner that crashes between writes and shadow
// updates, replays pages, loses pages mid-scan and misses events (caught by full scans).
const f = (id: string, type: FieldSpec['type']): FieldSpec => ({ id, name: id, type });
const mapping = (winner: Side = 'left'): TableMappingSpec => ({
  id: 'tm',
  direction: 'both',
  fields: [
    { id: 'name', left: f('name', 'text'), right: f('full_name', 'text'), direction: 'both' },
    { id: 'score', left: f('score', 'number'), right: f('points', 'text'), direction: 'both' },
    { id: 'active', left: f('active', 'boolean'), right: f('enabled', 'boolean'), direction: 'both' },
    { id: 'tags', left: f('tags', 'multi_select'), right: f('labels', 'multi_select'), direction: 'both' },
  ],
  policy: {
    conflictWinner: winner,
    conflictReview: false,
    deleteProtection: false,
    massDelete: { ...DEFAULT_MASS_DELETE, maxCount: 1000, maxFraction: 1 },
  },
});

// The left app trims text; the right one also lower-cases nothing but omits empty values and false.
const trim = (_: string, v: CanonicalValue) => (typeof v === 'string' ? v.trim() : v);
const apps = () => ({ left: new MemoryApp('L', trim), right: new MemoryApp('R', trim, true) });

const name = fc.oneof(fc.constantFrom('Ada', ' Grace ', 'Alan', 'Édith', ''), fc.string({ maxLength: 6 }));
const score = fc.integer({ min: -50, max: 50 }).map(String);
const tags = fc.subarray(['a', 'b', 'c']);
const leftFields = fc.record({ name, score, active: fc.boolean(), tags });
const rightFields = fc.record({ full_name: name, points: score, enabled: fc.boolean(), labels: tags });

type Cmd =
  | { t: 'create'; side: Side; fields: Record<string, CanonicalValue> }
  | { t: 'edit'; side: Side; pick: number; fields: Record<string, CanonicalValue> }
  | { t: 'delete'; side: Side; pick: number }
  | { t: 'run'; crashAfterWrites?: number; replay?: boolean; fullScan?: boolean; losePageEvery?: number };

const side = fc.constantFrom<Side>('left', 'right');
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.oneof(
      leftFields.map((fields) => ({ t: 'create' as const, side: 'left' as const, fields })),
      rightFields.map((fields) => ({ t: 'create' as const, side: 'right' as const, fields })),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.oneof(
      fc.tuple(fc.nat(), leftFields).map(([pick, all]) => ({
        t: 'edit' as const,
        side: 'left' as const,
        pick,
        fields: { name: all.name, score: all.score },
      })),
      fc.tuple(fc.nat(), rightFields).map(([pick, all]) => ({
        t: 'edit' as const,
        side: 'right' as const,
        pick,
        fields: { full_name: all.full_name, enabled: all.enabled, labels: all.labels },
      })),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(side, fc.nat()).map(([s, pick]) => ({ t: 'delete' as const, side: s, pick })),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        t: fc.constant('run' as const),
        crashAfterWrites: fc.nat({ max: 6 }),
        replay: fc.boolean(),
        fullScan: fc.boolean(),
        losePageEvery: fc.integer({ min: 2, max: 4 }),
      },
      { requiredKeys: ['t'] },
    ),
  },
);

function pickId(app: MemoryApp, pick: number): string | null {
  const ids = [...app.records.keys()];
  return ids.length === 0 ? null : (ids[pick % ids.length] as string);
}

function execute(sim: SyncSimulation, c: Cmd) {
  const app = sim.apps[c.t === 'run' ? 'left' : c.side];
  if (c.t === 'create') app.userCreate(c.fields);
  else if (c.t === 'edit') {
    const id = pickId(app, c.pick);
    if (id) app.userUpdate(id, c.fields);
  } else if (c.t === 'delete') {
    const id = pickId(app, c.pick);
    if (id) app.userDelete(id);
  } else {
    const { result, reads } = sim.run(c);
    // Delete safety: a delete needs positive evidence from the other side: a delete event, or
    // absence after a complete scan. A scan that lost a page is never evidence.
    for (const op of result.operations) {
      if (op.kind !== 'delete') continue;
      const evidence = reads[op.side === 'left' ? 'right' : 'left'];
      const link = sim.links.get(op.linkId);
      const sourceId = link ? (op.side === 'left' ? link.rightId : link.leftId) : null;
      expect(
        evidence.scanComplete ||
          (sourceId !== null && evidence.deletedIds.includes(sourceId)) ||
          link === undefined,
      ).toBe(true);
    }
  }
}

/** Runs until nothing more happens: a full scan (catches missed events), then incremental runs. */
function settle(sim: SyncSimulation) {
  sim.run({ fullScan: true });
  for (let i = 0; i < 4; i++) if (sim.run().result.operations.length === 0) break;
}

const RUNS = Number(process.env.LOCKSTEP_PROPERTY_RUNS ?? 2000);

describe('sync invariants (model-based)', () => {
  it('converges, never duplicates, and replays to nothing, whatever the edits, crashes and replays', () => {
    fc.assert(
      fc.property(fc.array(cmd, { maxLength: 30 }), (cmds) => {
        const sim = new SyncSimulation(mapping(), apps());
        for (const c of cmds) execute(sim, c);
        settle(sim);
        const state = sim.converged();
        expect(state.why).toEqual([]);
        // No duplicates: every record is linked exactly once, on both sides.
        const linked = [...sim.links.values()];
        expect(new Set(linked.map((l) => l.leftId)).size).toBe(linked.length);
        expect(new Set(linked.map((l) => l.rightId)).size).toBe(linked.length);
        expect(sim.apps.left.records.size).toBe(sim.links.size);
        expect(sim.apps.right.records.size).toBe(sim.links.size);
        // Echo suppression and idempotent replay: more runs (plain, replayed, full) write nothing.
        const writes = sim.apps.left.writes + sim.apps.right.writes;
        sim.run();
        sim.run({ replay: true });
        sim.run({ fullScan: true });
        expect(sim.apps.left.writes + sim.apps.right.writes).toBe(writes);
      }),
      { numRuns: RUNS },
    );
  });

  it('never loses an update: a one-sided edit arrives, a concurrent one follows the winner and is recorded', () => {
    fc.assert(
      fc.property(
        side,
        name.filter((n) => n.trim() !== ''),
        name.filter((n) => n.trim() !== ''),
        (winner, a, b) => {
          const sim = new SyncSimulation(mapping(winner), apps());
          const lid = sim.apps.left.userCreate({ name: 'start', score: '1', active: true, tags: ['a'] });
          settle(sim);
          const link = [...sim.links.values()][0];
          if (!link?.rightId) throw new Error('not linked');
          // One-sided edit.
          sim.apps.right.userUpdate(link.rightId, { full_name: a });
          sim.run();
          expect(sim.apps.left.records.get(lid)?.fields.name).toBe(a.trim());
          // Concurrent edits of the same field: the winner's value on both sides, the conflict recorded.
          sim.apps.left.userUpdate(lid, { name: `${a}-L` });
          sim.apps.right.userUpdate(link.rightId, { full_name: `${b}-R` });
          const { result } = sim.run();
          const expected = winner === 'left' ? `${a}-L`.trim() : `${b}-R`.trim();
          expect(sim.apps.left.records.get(lid)?.fields.name).toBe(expected);
          expect(sim.apps.right.records.get(link.rightId)?.fields.full_name).toBe(expected);
          if (`${a}-L`.trim() !== `${b}-R`.trim()) {
            expect(result.resolvedConflicts).toEqual([
              expect.objectContaining({ fieldMappingId: 'name', winner }),
            ]);
          }
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('recovers from a crash between any write and its shadow update as a false conflict, not a duplicate', () => {
    fc.assert(
      fc.property(
        fc.array(leftFields, { minLength: 1, maxLength: 8 }),
        fc.nat({ max: 8 }),
        (rows, crashAt) => {
          const sim = new SyncSimulation(mapping(), apps());
          for (const r of rows) sim.apps.left.userCreate(r);
          sim.run({ crashAfterWrites: crashAt });
          settle(sim);
          expect(sim.converged().why).toEqual([]);
          expect(sim.apps.right.records.size).toBe(rows.length);
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('never overwrites an edit made between the read and the write: the edit wins when its side is the winner', () => {
    fc.assert(
      fc.property(
        side,
        name.filter((n) => n.trim() !== ''),
        name.filter((n) => n.trim() !== ''),
        (winner, source, late) => {
          const sim = new SyncSimulation(mapping(winner), apps());
          const lid = sim.apps.left.userCreate({ name: 'start', score: '1', active: true, tags: ['a'] });
          settle(sim);
          const link = [...sim.links.values()][0];
          if (!link?.rightId) throw new Error('not linked');
          // The loser side edits; the run reads it and, before it writes to the winner side, a
          // person edits the same field there.
          const loser = winner === 'left' ? 'right' : 'left';
          if (loser === 'left') sim.apps.left.userUpdate(lid, { name: `${source}-src` });
          else sim.apps.right.userUpdate(link.rightId, { full_name: `${source}-src` });
          const lateFields: Record<string, CanonicalValue> =
            winner === 'left' ? { name: `${late}-late` } : { full_name: `${late}-late` };
          sim.run({ interleave: { side: winner, fields: lateFields } });
          for (let i = 0; i < 4; i++) if (sim.run().result.operations.length === 0) break;
          expect(sim.interleaved).not.toBeNull();
          const expected = `${late}-late`.trim();
          expect(sim.apps.left.records.get(lid)?.fields.name).toBe(expected);
          expect(sim.apps.right.records.get(link.rightId)?.fields.full_name).toBe(expected);
          expect(sim.converged().why).toEqual([]);
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('reads a change whose transaction commits late, after later changes were read (incremental runs only)', () => {
    fc.assert(
      fc.property(
        fc.array(leftFields, { minLength: 2, maxLength: 6 }),
        fc.nat(),
        fc.nat(),
        name.filter((n) => n.trim() !== ''),
        (rows, a, b, value) => {
          const sim = new SyncSimulation(mapping(), apps());
          for (const r of rows) sim.apps.left.userCreate(r);
          settle(sim);
          const ids = [...sim.apps.left.records.keys()];
          const lateId = ids[a % ids.length] as string;
          const otherId = ids[(a + 1 + (b % (ids.length - 1))) % ids.length] as string;
          const tx = sim.apps.left.userBeginUpdate(lateId, { name: `${value}-late` });
          sim.apps.left.userUpdate(otherId, { score: '42' });
          sim.run();
          tx.commit();
          // No full scan to hide a skipped change: incremental runs must find it.
          for (let i = 0; i < 3; i++) sim.run();
          expect(sim.converged().why).toEqual([]);
          const link = [...sim.links.values()].find((l) => l.leftId === lateId);
          expect(sim.apps.right.records.get(link?.rightId as string)?.fields.full_name).toBe(
            `${value}-late`.trim(),
          );
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});
