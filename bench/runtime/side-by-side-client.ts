import pg from 'pg';

/**
 * The application side of the Bucardo side-by-side bench, in a process of its own (forked by it):
 * it writes to the source and watches the target, so its timings do not wait on the event loop of
 * the Lockstep that runs in the bench's process. Requests come over IPC as { id, op, args } and
 * are answered with { id, result } or { id, error }.
 */
type Args = Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function client(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/** Polls `check` every `everyMs` until it holds; the time it took, or null after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs: number) {
  const t0 = performance.now();
  for (;;) {
    if (await check()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) return null;
    await sleep(everyMs);
  }
}

const ops: Record<string, (a: Args) => Promise<unknown>> = {
  /** One transaction updating ids from..to on the source; ms from its commit until the target shows all of it. */
  async bulkUpdate(a) {
    const src = await client(a.src as string);
    const dst = await client(a.dst as string);
    try {
      const range = [a.from, a.to];
      const sum = 'select coalesce(sum(visits), 0)::text as s from contacts where id between $1 and $2';
      const before = BigInt((await src.query(sum, range)).rows[0].s as string);
      const n = (
        await src.query('update contacts set visits = visits + 1000 where id between $1 and $2', range)
      ).rowCount as number;
      const committed = performance.now();
      const expected = String(before + 1000n * BigInt(n));
      const ms = await until(
        async () => (await dst.query(sum, range)).rows[0].s === expected,
        a.timeoutMs as number,
        5,
      );
      return ms === null ? null : performance.now() - committed;
    } finally {
      await src.end();
      await dst.end();
    }
  },

  /** One transaction inserting n new rows from id `from`; ms from its commit until the target has them all. */
  async bulkInsert(a) {
    const src = await client(a.src as string);
    const dst = await client(a.dst as string);
    try {
      const from = a.from as number;
      const to = from + (a.n as number) - 1;
      await src.query(
        `insert into contacts select g, 'new' || g || '@example.com', 'New ' || g, 'Company ' || (g % 1000), (g % 1000) / 7.0,
          g % 2 = 0, now(), now(), 'inserted ' || g, g % 97 from generate_series($1::bigint, $2::bigint) g`,
        [from, to],
      );
      const committed = performance.now();
      const ms = await until(
        async () =>
          Number(
            (await dst.query('select count(*) from contacts where id between $1 and $2', [from, to])).rows[0]
              .count,
          ) ===
          to - from + 1,
        a.timeoutMs as number,
        5,
      );
      return ms === null ? null : performance.now() - committed;
    } finally {
      await src.end();
      await dst.end();
    }
  },

  /**
   * n single-row updates one at a time (the next once the last is seen, and no sooner than
   * spacingMs after it started), each timed from its commit until the target shows it (polled
   * every millisecond). Returns the times; a null where it was not seen within timeoutMs.
   */
  async singleUpdates(a) {
    const src = await client(a.src as string);
    const dst = await client(a.dst as string);
    try {
      const times: (number | null)[] = [];
      const rows = a.rows as number;
      for (let i = 1; i <= (a.n as number); i++) {
        const started = performance.now();
        const id = 1 + ((i * 7919) % rows);
        const value = 5_000_000 + i;
        await src.query('update contacts set visits = $1 where id = $2', [value, id]);
        const committed = performance.now();
        const ms = await until(
          async () =>
            (await dst.query('select visits from contacts where id = $1', [id])).rows[0]?.visits === value,
          a.timeoutMs as number,
          1,
        );
        times.push(ms === null ? null : performance.now() - committed);
        const wait = (a.spacingMs as number) - (performance.now() - started);
        if (wait > 0) await sleep(wait);
      }
      return times;
    } finally {
      await src.end();
      await dst.end();
    }
  },

  /** n autocommit single-row INSERTs from id `from`, one after the other: total ms. */
  async autocommitInserts(a) {
    const c = await client(a.url as string);
    try {
      const from = a.from as number;
      const sql = `insert into contacts values ($1, $2, $3, 'Writer Co', 12.5, true, now(), now(), 'written one by one', 1)`;
      // One warm-up statement outside the timing (the plan, the connection's first use).
      await c.query(sql, [from, `w${from}@example.com`, `Writer ${from}`]);
      const t0 = performance.now();
      for (let id = from + 1; id < from + (a.n as number); id++)
        await c.query(sql, [id, `w${id}@example.com`, `Writer ${id}`]);
      return performance.now() - t0;
    } finally {
      await c.end();
    }
  },
};

process.on('message', async (m: { id: number; op: string; args: Args }) => {
  try {
    const op = ops[m.op];
    if (!op) throw new Error(`unknown op ${m.op}`);
    process.send?.({ id: m.id, result: await op(m.args) });
  } catch (error) {
    process.send?.({ id: m.id, error: error instanceof Error ? error.message : String(error) });
  }
});
process.on('disconnect', () => process.exit(0));
