import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/test-app';

describe('GET /api/config: analytics and the support chat', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('says null for both by default, and gives the PostHog key and the chat when configured', async () => {
    const plain = await createTestApp({}, { runWorkers: false });
    apps.push(plain);
    const off = (await plain.app.inject({ url: '/api/config' })).json();
    expect(off.analytics).toBeNull();
    expect(off.supportChat).toBeNull();
    expect(off.tagManager).toBeNull();

    const configured = await createTestApp(
      {
        LOCKSTEP_POSTHOG_KEY: 'phc_public',
        LOCKSTEP_POSTHOG_HOST: 'https://eu.i.posthog.com',
        LOCKSTEP_CHATWOOT_WEBSITE_TOKEN: 'web-token',
        LOCKSTEP_CHATWOOT_BASE_URL: 'https://chat.example.test',
        LOCKSTEP_GTM_ID: 'GTM-AB12CD3',
      },
      { runWorkers: false },
    );
    apps.push(configured);
    const res = await configured.app.inject({ url: '/api/config' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      analytics: { posthogKey: 'phc_public', posthogHost: 'https://eu.i.posthog.com' },
      supportChat: { kind: 'chatwoot', websiteToken: 'web-token', baseUrl: 'https://chat.example.test' },
      tagManager: { gtmId: 'GTM-AB12CD3' },
    });
    // No secret travels with them.
    expect(JSON.stringify(res.json())).not.toMatch(/secret/i);
  });
});
