import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/test-app';

let local: TestApp;
let behindHttps: TestApp;

beforeAll(async () => {
  local = await createTestApp();
  behindHttps = await createTestApp({ LOCKSTEP_PUBLIC_URL: 'https://sync.example.com' });
});
afterAll(async () => {
  await local.close();
  await behindHttps.close();
});

describe('security headers', () => {
  it('sends a policy that loads only our own scripts and lets no site frame us, on API answers and errors alike', async () => {
    for (const url of ['/health', '/rest/core-bases']) {
      const res = await local.app.inject(url);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('same-origin');
    }
    // The error envelope keeps them (a 401 without a token).
    expect((await local.app.inject('/rest/core-bases')).statusCode).toBe(401);
  });

  it('asks browsers for https only when the server is reached over https', async () => {
    expect((await local.app.inject('/health')).headers['strict-transport-security']).toBeUndefined();
    expect((await behindHttps.app.inject('/health')).headers['strict-transport-security']).toContain(
      'max-age=31536000',
    );
  });

  it("allows Google Tag Manager's script and hosts only where it runs: staging or production with a container id", async () => {
    const gtm = /googletagmanager/;
    const cspOf = async (env: Record<string, string>) => {
      const app = await createTestApp(env, { runWorkers: false });
      try {
        return String((await app.app.inject('/health')).headers['content-security-policy']);
      } finally {
        await app.close();
      }
    };
    // Production without mail: sign-up would need it, this test does not.
    const production = { LOCKSTEP_ENV: 'production', LOCKSTEP_EMAIL_VERIFICATION: 'off' };
    const withGtm = await cspOf({ ...production, LOCKSTEP_GTM_ID: 'GTM-AB12CD3' });
    expect(withGtm).toContain("script-src 'self' https://www.googletagmanager.com;");
    expect(withGtm).toContain("connect-src 'self' https://www.googletagmanager.com https://www.google.com;");
    // Without a container id, or outside staging and production, only our own scripts.
    expect(await cspOf(production)).not.toMatch(gtm);
    expect(await cspOf({ LOCKSTEP_GTM_ID: 'GTM-AB12CD3' })).not.toMatch(gtm);
    expect(String((await local.app.inject('/health')).headers['content-security-policy'])).toContain(
      "script-src 'self';",
    );
  });

  it('keeps the API docs working under their own policy', async () => {
    const docs = await local.app.inject('/api/docs/');
    expect(docs.statusCode).toBe(200);
    expect(String(docs.headers['content-security-policy'])).toContain('script-src');
  });
});
