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
});
