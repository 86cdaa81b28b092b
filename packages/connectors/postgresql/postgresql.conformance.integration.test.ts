import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type ConformanceHarness, runConformanceSuite } from '../sdk/conformance/index';
import { createTestDatabase } from '../test-support/test-database';
import type { PgConnectionItems } from './connection';
import { postgresqlPort } from './port';
import { createPostgresqlConnector, type PostgresqlConnector } from './postgresql-connector';

// The connector against a real PostgreSQL (the run's embedded one, wal_level=logical), in a database
// of its own, once per change capture. PostgreSQL cannot be made to answer 429 or 5xx, so those tests
// skip; a wrong password is the refused credential.
runConformanceSuite('PostgreSQL', () => harness({}));
runConformanceSuite('PostgreSQL with logical decoding', () => harness({ changeCapture: 'logical' }));

async function harness(options: Pick<PgConnectionItems, 'changeCapture'>) {
  const connectionString = await createTestDatabase('conf_pg');

  const backend = new pg.Pool({ connectionString, max: 2 });
  await backend.query(`create table items (
    id serial primary key,
    name text not null,
    email text unique,
    note text check (length(note) < 40))`);

  let n = 0;
  const sample = () => {
    n++;
    return { name: `Item ${n}`, email: `item${n}@example.com`, note: `note ${n}` };
  };
  const connectors: PostgresqlConnector[] = [];
  const connector = createPostgresqlConnector({ connectionString, ...options });
  connectors.push(connector);

  return {
    connector,
    tableId: 'public.items',
    sampleFields: sample,
    invalidFields: () => ({ name: null, email: `bad${++n}@example.com` }),
    async seed(count) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const f = sample();
        const r = await backend.query(
          'insert into items (name, email, note) values ($1, $2, $3) returning id',
          [f.name, f.email, f.note],
        );
        ids.push(String(r.rows[0].id));
      }
      return ids;
    },
    async mutate(id) {
      const note = `changed ${randomBytes(3).toString('hex')}`;
      await backend.query('update items set note = $1 where id = $2', [note, Number(id)]);
      return { note };
    },
    async remove(id) {
      await backend.query('delete from items where id = $1', [Number(id)]);
    },
    discover: () => postgresqlPort.discoverSchema({ connectionString, ...options }, 'public'),
    async badAuthConnector() {
      const wrong = new URL(connectionString);
      wrong.password = 'not-the-password';
      const bad = createPostgresqlConnector({ connectionString: wrong.toString(), ...options });
      connectors.push(bad);
      return bad;
    },
    async close() {
      for (const c of connectors) await c.end();
      // A logical slot keeps WAL until dropped: the test database's goes with it.
      await backend.query(
        `select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = current_database()`,
      );
      await backend.end();
    },
  } satisfies ConformanceHarness;
}
