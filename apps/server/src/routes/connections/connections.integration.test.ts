import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  t = await createTestApp();
  user = await signUp(t.app, 'connections@test.test');
});
afterAll(async () => t.close());

describe('connections', () => {
  it('lists the thirteen connectors with what each needs, and which can be chosen', async () => {
    const info = (await t.app.inject({ url: '/rest/connector-info', headers: user.auth })).json();
    expect(info).toHaveLength(13);
    const types = info.map((c: { connectorType: string }) => c.connectorType).sort();
    expect(types).toEqual([
      'affinity',
      'airtable',
      'attio',
      'google_sheets',
      'hubspot',
      'memberstack',
      'notion',
      'pipedrive',
      'postgresql',
      'salesforce',
      'stripe',
      'supabase',
      'webflow',
    ]);
    for (const c of info) {
      expect(c.available || c.unavailableReason).toBeTruthy();
      expect(Array.isArray(c.auth.requiredItems)).toBe(true);
    }
    const stripe = info.find((c: { connectorType: string }) => c.connectorType === 'stripe');
    expect(stripe.auth.requiredItems[0]).toMatchObject({ name: 'secretKey', secret: true });
  });

  it('offers all thirteen connectors, and refuses one this server lacks, storing nothing', async () => {
    const info = (await t.app.inject({ url: '/rest/connector-info', headers: user.auth })).json();
    expect(info).toHaveLength(13);
    expect(info.filter((c: { available: boolean }) => !c.available)).toEqual([]);
    // A server built without one of them (its port missing from the registry) refuses it.
    const registry = t.ctx.connectors;
    t.ctx.connectors = { get: (type) => (type === 'stripe' ? undefined : registry.get(type)) };
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/rest/external-connections',
        headers: { ...user.auth, 'content-type': 'application/json' },
        payload: { type: 'stripe', connectionItems: { secretKey: 'sk_test_x' } },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().response.userFacingMessage).toBe('Stripe is not available yet. Choose another app.');
    } finally {
      t.ctx.connectors = registry;
    }
    expect((await t.app.inject({ url: '/rest/external-connections', headers: user.auth })).json().total).toBe(
      0,
    );
  });

  it('refuses an unknown connector type and unknown ids', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: { type: 'myspace', connectionItems: {} },
    });
    expect(res.statusCode).toBe(400);
    const missing = '00000000-0000-4000-8000-000000000000';
    expect(
      (await t.app.inject({ url: `/rest/external-connections/${missing}`, headers: user.auth })).statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ url: `/rest/external-bases/${missing}`, headers: user.auth })).statusCode,
    ).toBe(404);
  });
});
