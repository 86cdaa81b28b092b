import { normalizeValue } from '@lockstep/engine';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../test-support/test-database';
import { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';
import { discoverTables } from './schema';

// timestamptz holds microseconds: read, normalised and written back, a value must keep them
// (through Date they were cut to milliseconds, and the sides never agreed).
let backend: pg.Pool;
let connector: PostgresqlConnector;

beforeAll(async () => {
  const url = await createTestDatabase('pg_micro');
  backend = new pg.Pool({ connectionString: url, max: 2 });
  const name = new URL(url).pathname.slice(1);
  // The connector's sessions print timestamptz in a zone with a half-hour offset.
  await backend.query(`alter database ${name} set timezone to 'Asia/Kolkata'`);
  for (const t of ['source', 'target'])
    await backend.query(
      `create table ${t} (id int primary key, at timestamptz, local timestamp, ms timestamptz(3))`,
    );
  await backend.query(`insert into source values
    (1, '2026-01-02 10:11:12.987654+00', '2026-01-02 10:11:12.000001', '2026-01-02 10:11:12.987+00'),
    (2, '2026-01-01 23:59:59.999999+00', null, null)`);
  connector = createPostgresqlConnector({ connectionString: url });
});
afterAll(async () => {
  await connector?.end();
  await backend?.end();
});

const canonical = (raw: unknown) => {
  const r = normalizeValue('datetime', raw);
  if (!r.ok) throw new Error(r.problem.message);
  return r.value;
};

describe('PostgreSQL timestamps with microseconds', () => {
  it('are read, normalised and written to another table without losing a digit', async () => {
    const page = await connector.read('public.source', null, { pageSize: 10 });
    const rows = page.records.sort((a, b) => a.id.localeCompare(b.id));
    // Printed in the session's zone (+05:30): the offset is applied exactly.
    expect(rows[0]?.fields.at).toBe('2026-01-02 15:41:12.987654+05:30');
    const values = rows.map((r) => ({
      at: canonical(r.fields.at),
      local: canonical(r.fields.local),
      ms: canonical(r.fields.ms),
    }));
    expect(values).toEqual([
      {
        at: '2026-01-02T10:11:12.987654Z',
        local: '2026-01-02T10:11:12.000001Z',
        ms: '2026-01-02T10:11:12.987Z',
      },
      { at: '2026-01-01T23:59:59.999999Z', local: null, ms: null },
    ]);

    const results = await connector.write(
      'public.target',
      rows.map((r, i) => ({
        kind: 'create',
        idempotencyKey: `micro-${r.id}`,
        fields: { id: r.id, ...values[i] },
      })),
    );
    // The post-image (what the database stored) normalises to the value written.
    for (const [i, r] of results.entries()) {
      if (!r.ok) throw new Error(r.error.message);
      expect(canonical(r.postImage?.fields.at)).toBe(values[i]?.at);
      expect(canonical(r.postImage?.fields.local ?? null)).toBe(values[i]?.local);
    }
    const same = await backend.query(
      `select s.id, s.at = t.at as at, s.local = t.local as local, s.ms is not distinct from t.ms as ms,
              to_char(t.at at time zone 'UTC', 'SS.US') as stored
         from source s join target t using (id) order by s.id`,
    );
    expect(same.rows).toEqual([
      { id: 1, at: true, local: true, ms: true, stored: '12.987654' },
      { id: 2, at: true, local: null, ms: true, stored: '59.999999' },
    ]);
  });

  it('tells the engine how many fraction digits each column holds', async () => {
    const [source] = (await discoverTables(backend, 'public')).filter((t) => t.name === 'source');
    const digits = Object.fromEntries(source?.fields.map((f) => [f.name, f.options.datetimeDigits]) ?? []);
    expect(digits).toEqual({ id: undefined, at: 6, local: 6, ms: 3 });
  });
});
