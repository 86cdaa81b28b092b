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

  it('keeps the API docs working under their own policy', async () => {
    const docs = await local.app.inject('/api/docs/');
    expect(docs.statusCode).toBe(200);
    expect(String(docs.headers['content-security-policy'])).toContain('script-src');
  });
});
