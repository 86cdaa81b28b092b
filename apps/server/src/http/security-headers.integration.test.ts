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

  describe('analytics and the support chat', () => {
    const production = { LOCKSTEP_ENV: 'production', LOCKSTEP_EMAIL_VERIFICATION: 'off' };
    /** The policy's directives by name, each a list of its sources. */
    const policyOf = async (env: Record<string, string>) => {
      const app = await createTestApp(env, { runWorkers: false });
      try {
        const csp = String((await app.app.inject('/health')).headers['content-security-policy']);
        return new Map(
          csp
            .split(';')
            .map((d) => d.trim().split(/\s+/))
            .filter((parts) => parts[0])
            .map(([name, ...sources]) => [name as string, sources]),
        );
      } finally {
        await app.close();
      }
    };
    const sourcesIn = (policy: Map<string, string[]>, directive: string) => policy.get(directive) ?? [];
    const third = /posthog|intercom|chatwoot|chat\.example|wss:|blob:/;
    const anyThirdParty = (policy: Map<string, string[]>) =>
      [...policy].filter(([, sources]) => sources.some((source) => third.test(source)));

    it("allows PostHog's host, PostHog Cloud's subdomains and the recorder's blob: worker in production with a key", async () => {
      const policy = await policyOf({ ...production, LOCKSTEP_POSTHOG_KEY: 'phc_test' });
      for (const directive of ['script-src', 'connect-src']) {
        expect(sourcesIn(policy, directive)).toEqual([
          "'self'",
          'https://us.i.posthog.com',
          'https://*.posthog.com',
        ]);
      }
      expect(sourcesIn(policy, 'worker-src')).toEqual(["'self'", 'blob:']);
      // A self-hosted instance (or a reverse proxy): its origin only, no posthog.com.
      const own = await policyOf({
        LOCKSTEP_ENV: 'staging',
        LOCKSTEP_EMAIL_VERIFICATION: 'off',
        LOCKSTEP_POSTHOG_KEY: 'phc_test',
        LOCKSTEP_POSTHOG_HOST: 'https://ph.example.org/ingest/',
      });
      expect(sourcesIn(own, 'script-src')).toEqual(["'self'", 'https://ph.example.org']);
      expect(sourcesIn(own, 'connect-src')).toEqual(["'self'", 'https://ph.example.org']);
    });

    it("allows Intercom's documented US hosts, its websockets and frames where it is configured", async () => {
      const policy = await policyOf({ ...production, LOCKSTEP_INTERCOM_APP_ID: 'abc123' });
      expect(sourcesIn(policy, 'script-src')).toEqual(
        expect.arrayContaining([
          'https://widget.intercom.io',
          'https://js.intercomcdn.com',
          'https://app.intercom.io',
        ]),
      );
      expect(sourcesIn(policy, 'connect-src')).toEqual(
        expect.arrayContaining([
          'https://api-iam.intercom.io',
          'wss://nexus-websocket-a.intercom.io',
          'wss://nexus-websocket-b.intercom.io',
          'wss://*.intercom-messenger.com',
          'https://uploads.intercomcdn.com',
        ]),
      );
      expect(sourcesIn(policy, 'font-src')).toContain('https://js.intercomcdn.com');
      expect(sourcesIn(policy, 'media-src')).toEqual(["'self'", 'https://js.intercomcdn.com']);
      expect(sourcesIn(policy, 'frame-src')).toContain('https://intercom-sheets.com');
      expect(sourcesIn(policy, 'form-action')).toEqual([
        "'self'",
        'https://intercom.help',
        'https://api-iam.intercom.io',
      ]);
      expect(sourcesIn(policy, 'img-src')).toContain('blob:');
      // Nothing of PostHog's without its key.
      expect(sourcesIn(policy, 'script-src').join(' ')).not.toMatch(/posthog/);
    });

    it("allows the Chatwoot instance's scripts, frame, API and websocket where it is configured", async () => {
      const policy = await policyOf({
        ...production,
        LOCKSTEP_CHATWOOT_WEBSITE_TOKEN: 'tok',
        LOCKSTEP_CHATWOOT_BASE_URL: 'https://chat.example.com/',
      });
      expect(sourcesIn(policy, 'script-src')).toEqual(["'self'", 'https://chat.example.com']);
      expect(sourcesIn(policy, 'connect-src')).toEqual([
        "'self'",
        'https://chat.example.com',
        'wss://chat.example.com',
      ]);
      expect(sourcesIn(policy, 'frame-src')).toEqual(["'self'", 'https://chat.example.com']);
      expect(sourcesIn(policy, 'script-src').join(' ')).not.toMatch(/intercom/);
    });

    it('allows no analytics host outside staging and production, and nothing from outside when none is configured', async () => {
      // The web app starts PostHog only in staging and production.
      const local = await policyOf({ LOCKSTEP_ENV: 'local', LOCKSTEP_POSTHOG_KEY: 'phc_test' });
      expect(anyThirdParty(local)).toEqual([]);
      expect(anyThirdParty(await policyOf({ LOCKSTEP_POSTHOG_KEY: 'phc_test' }))).toEqual([]);
      // Nothing configured, in production: our own sources only, no extra directives.
      const bare = await policyOf(production);
      expect(anyThirdParty(bare)).toEqual([]);
      expect(sourcesIn(bare, 'script-src')).toEqual(["'self'"]);
      expect(sourcesIn(bare, 'connect-src')).toEqual(["'self'"]);
      expect(sourcesIn(bare, 'form-action')).toEqual(["'self'"]);
      for (const directive of ['frame-src', 'media-src', 'worker-src'])
        expect(bare.has(directive)).toBe(false);
    });

    it('allows the configured support chat in every environment, as the web app loads it in every one', async () => {
      const policy = await policyOf({ LOCKSTEP_INTERCOM_APP_ID: 'abc123' });
      expect(sourcesIn(policy, 'script-src')).toContain('https://widget.intercom.io');
      expect(sourcesIn(policy, 'worker-src')).toEqual([]);
    });
  });

  it('keeps the API docs working under their own policy', async () => {
    const docs = await local.app.inject('/api/docs/');
    expect(docs.statusCode).toBe(200);
    expect(String(docs.headers['content-security-policy'])).toContain('script-src');
  });
});
