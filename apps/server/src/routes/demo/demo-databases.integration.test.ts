import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDemoDatabases } from '../../demo/demo-databases';

let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await createTestApp();
  await ensureDemoDatabases((db = 'postgres') => t.ctx.embeddedDatabaseUrl?.(db) as string);
  user = await signUp(t.app, 'demo@test.test');
  await t.app.inject({
    method: 'POST',
    url: '/rest/users/current/choose-plan',
    headers: { ...user.auth, ...json },
    payload: { productType: 'pro' },
  });
});
afterAll(async () => t.close());

describe('demo databases', () => {
  it('connects a demo database in one call, and its schema is discovered with types, enums and generated columns', async () => {
    const list = (await t.app.inject({ url: '/rest/demo-databases', headers: user.auth })).json();
    expect(list.available).toBe(true);
    expect(list.items.map((i: { name: string }) => i.name)).toEqual(['demo_crm', 'demo_newsletter']);
    const conn = await t.app.inject({
      method: 'POST',
      url: '/rest/demo-databases/demo_crm/connect',
      headers: user.auth,
    });
    expect(conn.statusCode).toBe(201);
    expect(conn.json()).toMatchObject({
      type: 'postgresql',
      name: 'Demo CRM',
      status: 'ok',
      connectionItems: {},
    });
    const core = (
      await t.app.inject({
        method: 'POST',
        url: '/rest/core-bases',
        headers: { ...user.auth, ...json },
        payload: {},
      })
    ).json();
    const full = await t.app.inject({
      method: 'POST',
      url: '/rest/external-bases',
      headers: { ...user.auth, ...json },
      payload: {
        type: 'postgresql',
        name: 'Demo CRM',
        remoteId: 'public',
        coreBaseId: core.id,
        externalConnectionId: conn.json().id,
        side: 'left',
      },
    });
    expect(full.statusCode).toBe(201);
    const tables = full.json().leftExternalBase.externalTables;
    expect(tables.map((x: { name: string }) => x.name)).toEqual(['companies', 'contacts']);
    const contacts = tables.find((x: { name: string }) => x.name === 'contacts');
    const col = (name: string) => contacts.externalColumns.find((c: { name: string }) => c.name === name);
    expect(col('stage')).toMatchObject({
      fieldType: 'single_select',
      options: expect.objectContaining({ choices: ['lead', 'qualified', 'customer', 'churned'] }),
    });
    expect(col('full_name_upper')).toMatchObject({ readOnly: true });
    expect(col('id')).toMatchObject({ readOnly: true, fieldType: 'number' });
    expect(col('company_id').options.references).toBe('public.companies.id');
    expect(
      (await t.app.inject({ method: 'POST', url: '/rest/demo-databases/nope/connect', headers: user.auth }))
        .statusCode,
    ).toBe(400);
  });

  it('keeps working when the embedded PostgreSQL comes back on another port', async () => {
    const realUrl = t.ctx.embeddedDatabaseUrl as (database: string) => string;
    // The "first start": the embedded server reached through a port that later goes away.
    const proxy = net.createServer((socket) => {
      const upstream = net.connect(Number(new URL(realUrl('postgres')).port), '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const oldPort = (proxy.address() as net.AddressInfo).port;
    t.ctx.embeddedDatabaseUrl = (database) => {
      const u = new URL(realUrl(database));
      u.port = String(oldPort);
      return u.toString();
    };
    const base = async (connectionId: string) => {
      const core = (
        await t.app.inject({
          method: 'POST',
          url: '/rest/core-bases',
          headers: { ...user.auth, ...json },
          payload: {},
        })
      ).json();
      return t.app.inject({
        method: 'POST',
        url: '/rest/external-bases',
        headers: { ...user.auth, ...json },
        payload: {
          type: 'postgresql',
          name: 'CRM',
          remoteId: 'public',
          coreBaseId: core.id,
          externalConnectionId: connectionId,
          side: 'left',
        },
      });
    };
    try {
      const conn = (
        await t.app.inject({
          method: 'POST',
          url: '/rest/demo-databases/demo_crm/connect',
          headers: user.auth,
        })
      ).json();
      expect((await base(conn.id)).statusCode).toBe(201);
      // Restarted: the old port is gone, the server listens on another one.
      await new Promise((r) => proxy.close(r));
      t.ctx.embeddedDatabaseUrl = realUrl;
      const again = await base(conn.id);
      expect(again.statusCode, again.body).toBe(201);
      expect(again.json().leftExternalBase.externalTables).toHaveLength(2);
      // The runs' connectors resolve the address at use too.
      const stored = t.ctx.secretBox.open<{ connectionItems: Record<string, string> }>(
        (
          await t.ctx.db
            .selectFrom('external_connection')
            .select('secrets')
            .where('id', '=', conn.id)
            .executeTakeFirstOrThrow()
        ).secrets,
      ).connectionItems;
      const connector = t.ctx.runtimeConnectors.forConnection('postgresql', stored);
      const page = await connector?.read('public.contacts', null, { pageSize: 5 });
      expect(page?.records.length).toBe(5);
    } finally {
      t.ctx.embeddedDatabaseUrl = realUrl;
      proxy.close();
    }
  });
});
