import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type StripeSimulator, startStripeSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query, setUpAppPostgresSync } from '../../test/pg-pair';
import { settleSync, syncRuns } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { stripeRuntimeFactory } from './runtime-connectors';

// Stripe (the simulator, as LOCKSTEP_STRIPE_API_URL, with its rate limits on) <-> PostgreSQL, set
// up over REST as a user would with a secret key, and run by the real job queue. Stripe's changes
// are read from its events by sync-now (no webhooks yet). The server reaches the simulator through
// a pass-through proxy that lets the test act at a chosen request (an edit in Stripe right as the
// runtime is about to write; a burst of 429s after some creates landed).
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sim: StripeSimulator;
let proxy: Server;
let proxyUrl = '';
/** Called before each request is passed on to the simulator. */
let onRequest: (method: string, path: string) => void = () => {};
let pgUrl = '';

/** One query on the PostgreSQL side, as a user editing it. */
const sql = (text: string, params: unknown[] = []) => query(pgUrl, text, params);

/** REST calls as the signed-in user (set up before the test). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** Passes every request on to the simulator unchanged, after `onRequest`. */
async function startProxy(target: string): Promise<void> {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const method = req.method ?? 'GET';
        onRequest(method, new URL(req.url ?? '/', 'http://x').pathname);
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers.set(k, v);
        const answer = await fetch(`${target}${req.url}`, {
          method,
          headers,
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        const out: Record<string, string> = {};
        answer.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
        });
        res.writeHead(answer.status, out);
        res.end(Buffer.from(await answer.arrayBuffer()));
      } catch (error) {
        res.writeHead(502);
        res.end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  sim = await startStripeSimulator({ idSeed: 11 });
  await startProxy(sim.url);
  t = await createTestApp({ LOCKSTEP_STRIPE_API_URL: proxyUrl });
  // The real runtime factory, with short backoffs after a 429 to keep the test fast.
  t.ctx.runtimeConnectors.register(
    'stripe',
    stripeRuntimeFactory({
      apiUrl: proxyUrl,
      pool: t.ctx.pool,
      client: { baseDelayMs: 50, maxDelayMs: 200 },
    }),
  );
  user = await signUp(t.app, 'stripe-pg@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  const name = `st_pg_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(inject('adminDatabaseUrl'), name);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  pgUrl = u.toString();
  await sql(
    `create table customers (id serial primary key, email text not null unique, name text, city text, crm_id text)`,
  );
  await sql(
    `create table prices (id serial primary key, nickname text, amount numeric(12, 2), lookup_key text)`,
  );
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  await sim?.close();
});

type Customer = { id: string; email?: string; name?: string; city?: string; crm_id?: string };

/** The customers Stripe holds (not deleted), in test mode. */
function customers(): Customer[] {
  return sim.state.all('customer', false).map((c) => ({
    id: c.id as string,
    email: (c.email as string | null) ?? undefined,
    name: (c.name as string | null) ?? undefined,
    city: ((c.address as { city?: string } | null)?.city as string | undefined) ?? undefined,
    crm_id: (c.metadata as Record<string, string> | undefined)?.crm_id,
  }));
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 70_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check);
}

describe('Stripe <-> PostgreSQL through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'stripe',
      connectionItems: { secretKey: sim.token },
    });
    // The connection says which mode its key is in.
    expect(conn.name).toMatch(/test mode/);
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string; name: string }[];
    expect(base?.name).toMatch(/test mode/);
    const seeded = customers();
    expect(seeded).toHaveLength(25);
    const [first, second, third] = seeded as [Customer, Customer, Customer];
    // PostgreSQL already knows two of the customers (other names) and one person Stripe does not.
    await sql(
      `insert into customers (email, name, city, crm_id) values ($1, 'Old Name 1', 'Nowhere', null), ($2, 'Old Name 2', null, null), ('new.person@example.com', 'New Person', 'Lyon', 'crm-new')`,
      [first.email, second.email],
    );

    const pgConn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: pgUrl },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Stripe customers <-> customers' });
    await api('POST', '/rest/external-bases', {
      type: 'stripe',
      name: 'Stripe',
      remoteId: base?.remoteId,
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: 'Customers',
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: pgConn.id,
      side: 'right',
    });
    type Table = {
      id: string;
      name: string;
      externalColumns: { id: string; name: string; remoteId?: string; readOnly?: boolean }[];
    };
    const tables = full.leftExternalBase.externalTables as Table[];
    expect(tables.map((x) => x.name).sort()).toEqual([
      'Coupons',
      'Customers',
      'Invoices',
      'Prices',
      'Products',
      'Subscriptions',
    ]);
    const lt = tables.find((x) => x.name === 'Customers') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find(
      (x) => x.name === 'customers',
    ) as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name} in ${tbl.externalColumns.map((x) => x.name).join(', ')}`);
      return c.id;
    };
    const pairs = [
      ['Email', 'email'],
      ['Name', 'name'],
      ['City', 'city'],
      ['Metadata: crm_id', 'crm_id'],
    ] as const;
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Email'),
            columnMappings: pairs.map(([l, r]) => ({ leftColumnId: col(lt, l), rightColumnId: col(rt, r) })),
          },
        ],
      },
    });

    // First sync: matched on email (Stripe, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from customers'))[0]?.n === 26);
    expect(customers()).toHaveLength(26);
    const rows = await sql('select email, name, city, crm_id from customers order by id');
    expect(rows.find((p) => p.email === first.email)).toMatchObject({
      name: first.name,
      city: first.city,
      crm_id: first.crm_id,
    });
    expect(rows.find((p) => p.email === third.email)).toMatchObject({
      name: third.name,
      crm_id: third.crm_id,
    });
    const created = customers().find((c) => c.email === 'new.person@example.com');
    expect(created).toMatchObject({ name: 'New Person', city: 'Lyon', crm_id: 'crm-new' });

    // An edit in Stripe (the Dashboard) reaches PostgreSQL, read from Stripe's events.
    sim.update('customer', third.id, { name: 'Edited in Stripe', metadata: { crm_id: 'crm-edited' } });
    await syncNow(core.id, async () => {
      const [row] = await sql('select name, crm_id from customers where email = $1', [third.email]);
      return row?.name === 'Edited in Stripe' && row?.crm_id === 'crm-edited';
    });

    // An edit in PostgreSQL reaches Stripe (the other address parts kept).
    await sql(`update customers set city = 'Edited in PostgreSQL', name = 'PG Name' where email = $1`, [
      second.email,
    ]);
    await syncNow(core.id, () => {
      const c = customers().find((x) => x.id === second.id);
      return c?.city === 'Edited in PostgreSQL' && c.name === 'PG Name';
    });
    const address = sim.state.get('customer', second.id, false).address as Record<string, unknown>;
    expect(address.line1).toMatch(/Market Street/);

    // A conflict: PostgreSQL changes a name, and the same customer is edited in Stripe after the
    // run read Stripe's events but before it writes (the edit lands as the runtime reads the
    // customer right before its update). Stripe has no conditional update: the connector's check
    // refuses the stale write (version_conflict with the current values), and the pair follows the
    // winner side, Stripe; the Stripe edit is not overwritten.
    let armed = true;
    onRequest = (method, path) => {
      if (armed && method === 'GET' && path === `/v1/customers/${first.id}`) {
        armed = false;
        sim.update('customer', first.id, { name: 'Stripe wins' });
      }
    };
    await sql(`update customers set name = 'PostgreSQL loses' where email = $1`, [first.email]);
    await syncNow(core.id, async () => {
      const [row] = await sql('select name from customers where email = $1', [first.email]);
      return row?.name === 'Stripe wins';
    });
    onRequest = () => {};
    expect(armed, 'the runtime tried to write the stale name').toBe(false);
    expect(customers().find((x) => x.id === first.id)?.name).toBe('Stripe wins');

    // Deletes: a customer deleted in Stripe (customer.deleted) and a row deleted in PostgreSQL.
    const gone = seeded[10] as Customer;
    sim.remove('customer', gone.id);
    await sql(`delete from customers where email = $1`, [(seeded[11] as Customer).email]);
    await syncNow(core.id, async () => {
      const left = await sql('select email from customers');
      return !left.some((r) => r.email === gone.email) && !customers().some((c) => c.id === seeded[11]?.id);
    });
    expect(await sql('select count(*)::int as n from customers')).toEqual([{ n: 24 }]);
    expect(customers()).toHaveLength(24);

    // A 429 storm in the middle of the writes: Stripe answers POSTs with 429 more often than the
    // client retries, the run fails over to the queue's retry, and the Idempotency-Keys make the
    // retried creates replays: nothing is lost or doubled.
    const before = sim.requestLog.count({ status: 429 });
    // Until now the runs and the REST side together stayed under Stripe's 25 requests per second.
    expect(before).toBe(0);
    await sql(
      `insert into customers (email, name, city, crm_id) select 'storm' || g || '@example.com', 'Storm ' || g, 'Oslo', 'crm-s' || g from generate_series(1, 15) g`,
    );
    sim.update('customer', (seeded[20] as Customer).id, { name: 'During the storm' });
    // After 5 creates landed, 30 POSTs in a row get 429: a create fails past the client's 6
    // attempts, the run fails over to the queue's retry, and the creates it sends again (with the
    // same keys) are replayed by Stripe instead of made twice.
    let creates = 0;
    onRequest = (method, path) => {
      if (method === 'POST' && path === '/v1/customers' && ++creates === 5)
        sim.faults.next({ kind: 'rate_limit', count: 30, method: 'POST' });
    };
    await syncNow(core.id, async () => {
      const all = customers();
      const [row] = await sql('select name from customers where email = $1', [seeded[20]?.email]);
      return all.filter((c) => c.email?.startsWith('storm')).length >= 15 && row?.name === 'During the storm';
    }).catch(async (error) => {
      // The queue retries a failed chunk after a few seconds: give it the time.
      await settle(
        core.id,
        () => customers().filter((c) => c.email?.startsWith('storm')).length >= 15,
        30_000,
      ).catch(() => {
        throw error;
      });
    });
    onRequest = () => {};
    expect(sim.requestLog.count({ status: 429 }) - before).toBe(30);
    const storm = customers().filter((c) => c.email?.startsWith('storm'));
    expect(storm).toHaveLength(15);
    const emails = customers().map((c) => c.email);
    expect(new Set(emails).size).toBe(emails.length);
    expect(emails).toHaveLength(39);
    expect(await sql('select count(*)::int as n from customers')).toEqual([{ n: 39 }]);
    const [stormRow] = await sql('select name from customers where email = $1', [seeded[20]?.email]);
    expect(stormRow?.name).toBe('During the storm');
    // A quiet run afterwards changes nothing: no echo, no duplicate; both sides hold the same.
    await syncNow(core.id, () => true);
    expect(customers()).toHaveLength(39);
    const finalRows = await sql('select email, name, city, crm_id from customers');
    expect(finalRows).toHaveLength(39);
    const byEmail = new Map(customers().map((c) => [c.email, c]));
    for (const row of finalRows) {
      const c = byEmail.get(row.email);
      expect(c, row.email).toBeDefined();
      expect({ name: c?.name ?? null, city: c?.city ?? null, crm_id: c?.crm_id ?? null }).toEqual({
        name: row.name,
        city: row.city,
        crm_id: row.crm_id,
      });
    }
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
    const failed = (await syncRuns(t.ctx.db, core.id)).filter((r) => r.status === 'failed');
    expect(failed).toEqual([]);
  }, 240_000);

  it('a price whose amount changes keeps its row: Stripe answers the update with a new price, and the link follows it', async () => {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'stripe',
      connectionItems: { secretKey: sim.token },
    });
    const [base] = (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string }[];
    const core = await setUpAppPostgresSync(api, {
      name: 'Stripe prices <-> prices',
      app: { type: 'stripe', name: 'Stripe', connectionId: conn.id, remoteId: base?.remoteId as string },
      pgUrl,
      tables: [
        {
          left: 'Prices',
          right: 'prices',
          fields: [
            ['Nickname', 'nickname'],
            ['Amount', 'amount'],
            ['Lookup key', 'lookup_key'],
          ],
        },
      ],
    });
    const active = () => sim.state.all('price', false).filter((p) => p.active === true);
    const count = active().length;
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, async () => (await sql('select count(*)::int as n from prices'))[0]?.n === count);

    // The user raises a price on the PostgreSQL side. Stripe cannot change an amount: the connector
    // makes a new price and archives the old one, and answers with the new price's id.
    const link = async (rowId: number) =>
      (
        await t.ctx.db
          .selectFrom('core_meta_record')
          .select(['left_remote_id'])
          .where('core_base_id', '=', core.id)
          .where('right_remote_id', '=', String(rowId))
          .executeTakeFirst()
      )?.left_remote_id;
    const [row] = await sql('select id, amount from prices order by id limit 1');
    const rowId = row?.id as number;
    const oldPrice = (await link(rowId)) as string;
    expect(oldPrice).toMatch(/^price_/);
    const raised = (Number(row?.amount) + 1).toFixed(2);
    await sql(`update prices set amount = $1, nickname = 'Raised' where id = $2`, [raised, rowId]);
    await syncNow(core.id, () =>
      active().some((p) => p.nickname === 'Raised' && p.unit_amount === Math.round(Number(raised) * 100)),
    );
    const newPrice = active().find((p) => p.nickname === 'Raised')?.id as string;
    expect(newPrice).not.toBe(oldPrice);
    expect(sim.state.get('price', oldPrice, false).active).toBe(false);
    expect(await link(rowId)).toBe(newPrice);

    // The next runs read the old price archived and the new one as new: neither touches the row.
    await syncNow(core.id, () => true);
    await syncNow(core.id, () => true);
    expect(
      await sql('select id, nickname, amount::text as amount from prices where id = $1', [rowId]),
    ).toEqual([{ id: rowId, nickname: 'Raised', amount: raised }]);
    expect(await sql('select count(*)::int as n from prices')).toEqual([{ n: count }]);
    expect(active()).toHaveLength(count);

    // An edit of the new price in Stripe reaches the same row.
    sim.update('price', newPrice, { nickname: 'Renamed in Stripe' });
    await syncNow(core.id, async () => {
      const [r] = await sql('select nickname from prices where id = $1', [rowId]);
      return r?.nickname === 'Renamed in Stripe';
    });
    expect(await sql('select count(*)::int as n from prices')).toEqual([{ n: count }]);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
  }, 120_000);
});
