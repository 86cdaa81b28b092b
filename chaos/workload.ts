import pg from 'pg';
import type { ChaosOptions } from './options';

export type Side = 'a' | 'b';
/** Every write that changed a row, with when it committed (the log the comparison is made against). */
export type Write = {
  seq: number;
  side: Side;
  op: 'update' | 'insert' | 'delete';
  id: number;
  column?: 'name' | 'score' | 'note';
  value?: string | number;
  /** Part of a deliberate same-row, same-column conflict pair (both halves share the number). */
  conflict?: number;
  /** A long transaction that committed late (seconds after it wrote). */
  late?: boolean;
  committedAt: number;
};

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
const COLUMNS = ['name', 'score', 'note'] as const;

/**
 * Two writers, one per side, each at `rate` writes a second: single-column updates of random rows,
 * inserts (a share of them the same new id on both sides at once), deletes, long transactions that
 * commit seconds later, and `conflicts` deliberate same-row same-column pairs a second. Values are
 * unique per write (`a-<seq>`, `b-<seq>`, the sequence number as score), so the comparison can tell
 * which write survived.
 */
export function startWorkload(urls: { a: string; b: string }, rows: number, o: ChaosOptions) {
  const pools = {
    a: new pg.Pool({ connectionString: urls.a, max: 8 }),
    b: new pg.Pool({ connectionString: urls.b, max: 8 }),
  };
  for (const p of Object.values(pools)) p.on('error', () => {});
  const log: Write[] = [];
  const failures: string[] = [];
  // Rows a writer may pick (deleted ones stay: their updates change nothing and are not logged).
  const ids: number[] = Array.from({ length: rows }, (_, i) => i + 1);
  let seq = 0;
  const nextOwn = { a: 10_000_000, b: 20_000_000 };
  let nextShared = 30_000_000;
  let conflictNo = 0;
  const inFlight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    const t = p.catch((e: unknown) => {
      if (failures.length < 20) failures.push(e instanceof Error ? e.message : String(e));
    });
    inFlight.add(t);
    void t.finally(() => inFlight.delete(t));
  };
  const value = (side: Side, column: (typeof COLUMNS)[number], s: number) =>
    column === 'score' ? s : `${side}-${s}`;

  async function update(
    side: Side,
    id: number,
    column: (typeof COLUMNS)[number],
    extra: Partial<Write> = {},
  ) {
    const s = ++seq;
    const v = value(side, column, s);
    const r = await pools[side].query(
      `update contacts set ${column} = $1, updated = clock_timestamp() where id = $2`,
      [v, id],
    );
    if (r.rowCount)
      log.push({ seq: s, side, op: 'update', id, column, value: v, committedAt: Date.now(), ...extra });
  }
  async function insert(side: Side, id: number) {
    const s = ++seq;
    const r = await pools[side].query(
      `insert into contacts (id, email, name, score, note, updated) values ($1, $2, $3, $4, $5, clock_timestamp())
         on conflict (id) do nothing`,
      [id, `c${id}@example.com`, `${side}-${s}`, s, `${side}-${s}`],
    );
    if (r.rowCount) {
      ids.push(id);
      log.push({ seq: s, side, op: 'insert', id, committedAt: Date.now() });
    }
  }
  async function remove(side: Side, id: number) {
    const s = ++seq;
    const r = await pools[side].query('delete from contacts where id = $1', [id]);
    if (r.rowCount) log.push({ seq: s, side, op: 'delete', id, committedAt: Date.now() });
  }
  /** Begins, writes, holds the transaction 2-6 s (later changes commit meanwhile), then commits. */
  async function late(side: Side, id: number, column: (typeof COLUMNS)[number]) {
    const client = await pools[side].connect();
    try {
      const s = ++seq;
      const v = value(side, column, s);
      await client.query('begin');
      const r = await client.query(
        `update contacts set ${column} = $1, updated = clock_timestamp() where id = $2`,
        [v, id],
      );
      await new Promise((res) => setTimeout(res, 2000 + Math.random() * 4000));
      await client.query('commit');
      if (r.rowCount)
        log.push({ seq: s, side, op: 'update', id, column, value: v, late: true, committedAt: Date.now() });
    } finally {
      client.release();
    }
  }

  function one(side: Side) {
    const roll = Math.random();
    const id = pick(ids);
    if (roll < 0.62) track(update(side, id, pick(COLUMNS)));
    else if (roll < 0.8) {
      if (Math.random() < o.colliding) {
        const shared = ++nextShared;
        track(insert('a', shared));
        track(insert('b', shared));
      } else track(insert(side, ++nextOwn[side]));
    } else if (roll < 0.97) track(remove(side, id));
    else track(late(side, id, pick(COLUMNS)));
  }
  function conflict() {
    const id = Math.ceil(Math.random() * rows);
    const column = pick(COLUMNS);
    const n = ++conflictNo;
    track(update('a', id, column, { conflict: n }));
    track(update('b', id, column, { conflict: n }));
  }

  const timers: ReturnType<typeof setInterval>[] = [];
  const every = (perSecond: number, f: () => void) => {
    if (perSecond <= 0) return;
    // Ticks of 10 ms, each doing its share: steady rates without a timer per write.
    let owed = 0;
    timers.push(
      setInterval(() => {
        owed += perSecond / 100;
        while (owed >= 1) {
          owed -= 1;
          f();
        }
      }, 10),
    );
  };
  every(o.rate, () => one('a'));
  every(o.rate, () => one('b'));
  every(o.conflicts, conflict);

  return {
    log,
    failures,
    /** Stops issuing writes and waits for those in flight (late transactions included) to commit. */
    async stop() {
      for (const t of timers) clearInterval(t);
      while (inFlight.size) await Promise.all([...inFlight]);
      await Promise.all([pools.a.end(), pools.b.end()]);
      return log.reduce((m, w) => Math.max(m, w.committedAt), 0);
    },
  };
}
