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

  it('refuses a connector that cannot be chosen, storing nothing', async () => {
    const info = (await t.app.inject({ url: '/rest/connector-info', headers: user.auth })).json();
    const unavailable = info.find((c: { available: boolean }) => !c.available);
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/external-connections',
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: { type: unavailable.connectorType, connectionItems: { secretKey: 'sk_test_x' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().response.userFacingMessage).toBe(
      `${unavailable.displayName} is not available yet. Choose another app.`,
    );
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
