import { randomBytes } from 'node:crypto';
import type { TableConnector } from '@lockstep/connectors';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { handleSyncRun } from '../jobs/sync-run';
import { createSyncRunner } from './run-sync-chunk';
import type { RuntimeConnectors } from './runtime-connectors';

// A first sync's chunks send their creates with keys the target keeps per batch, unlooked-up
// (freshKeys). A process that dies after the target committed a batch and before Lockstep linked it
// reconciles that chunk again: those creates must then be looked up and linked, never made twice.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const ROWS = 3000;

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  api = apiAs(t.app, (await signUp(t.app, 'first-sync-crash@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `fsc_${side}_${suffix}`);
    urls[side] = databaseUrl(`fsc_${side}_${suffix}`);
    // No unique email on the right: a create made twice would not be refused, it would be a duplicate.
    await query(
      urls[side],
      `create table people (id serial primary key, email text not null ${side === 'left' ? 'unique' : ''}, name text)`,
    );
  }
  await query(
    urls.left,
    `insert into people (email, name) select 'p' || g || '@example.com', 'Person ' || g from generate_series(1, ${ROWS}) g`,
  );
});
afterAll(async () => {
  await t.close();
});

/** The real connectors, except that one write to `right` dies once the database has committed it. */
function dyingAfterWrite(real: RuntimeConnectors, rightUrl: string, which: number) {
  let writes = 0;
  return {
    forConnection(type, secrets, save) {
      const c = real.forConnection(type, secrets, save);
      if (!c || secrets.connectionString !== rightUrl) return c;
      const wrapped: TableConnector = {
        ...c,
        read: c.read.bind(c),
        write: async (table, requests, options) => {
          const results = await c.write(table, requests, options);
          writes += 1;
          if (writes === which) throw new Error('worker killed after the write committed');
          return results;
        },
      };
      return wrapped;
    },
  } satisfies RuntimeConnectors;
}

describe('a first sync that dies between a write and its bookkeeping', () => {
  it('links the committed creates when the chunk runs again: none made twice', async () => {
    const { id } = await setUpPeopleSync(api, urls, { name: 'first sync crash' });
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', id).execute();
    // The chunk's second batch of 1,000 creates is committed in the target, then the process dies.
    const dying = createSyncRunner({
      db: t.ctx.db,
      secretBox: t.ctx.secretBox,
      connectors: dyingAfterWrite(t.ctx.runtimeConnectors, urls.right, 2),
    });
    let crash: unknown = null;
    for (let i = 0; i < 20 && crash === null; i++)
      await handleSyncRun(
        t.ctx.db,
        t.ctx.boss,
        dying,
        { coreBaseId: id, trigger: 'test' },
        { chain: false },
      ).catch((e: unknown) => {
        crash = e;
      });
    expect(String(crash)).toMatch(/killed/);
    expect(Number((await query(urls.right, 'select count(*)::int as n from people'))[0]?.n)).toBe(2000);

    const runner = createSyncRunner({
      db: t.ctx.db,
      secretBox: t.ctx.secretBox,
      connectors: t.ctx.runtimeConnectors,
    });
    for (let i = 0; i < 20; i++) {
      const r = await handleSyncRun(
        t.ctx.db,
        t.ctx.boss,
        runner,
        { coreBaseId: id, trigger: 'test' },
        { chain: false },
      );
      if (r === 'done') break;
    }
    const right = await query(
      urls.right,
      'select email, count(*)::int as n from people group by email having count(*) > 1',
    );
    expect(right).toEqual([]);
    expect(Number((await query(urls.right, 'select count(*)::int as n from people'))[0]?.n)).toBe(ROWS);
    const links = await t.ctx.db
      .selectFrom('core_meta_record')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('core_base_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Number(links.n)).toBe(ROWS);
    // The bulk's keys were kept per batch in the target (the point of fresh keys).
    const batches = await query(urls.right, 'select count(*)::int as n from lockstep.applied_batches');
    expect(Number(batches[0]?.n)).toBeGreaterThan(0);
  });
});
