import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../packages/connectors/test-support/tls-endpoint';
import { loadConfig } from './config';

const argv = ['node', 'server'];

describe('the listen address', () => {
  it('is this machine only on the embedded default, every address with a PostgreSQL server, and HOST when set', () => {
    expect(loadConfig({}, argv).host).toBe('127.0.0.1');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/lockstep' }, argv).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }, argv).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::1', DATABASE_URL: 'postgres://db/lockstep' }, argv).host).toBe('::1');
  });
});

describe("LOCKSTEP_SUPABASE_ROOT_CA (Supabase's root CA, issue 18 item 9)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'supabase-ca-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is read once at start; an unreadable file or one without a certificate stops the server, saying what to do', () => {
    const { certPem } = selfSignedCertificate('Supabase Root Test CA');
    const good = path.join(dir, 'root.crt');
    writeFileSync(good, `Supabase's root CA\n${certPem}`);
    expect(loadConfig({ LOCKSTEP_SUPABASE_ROOT_CA: good }, argv).supabase.rootCa).toBe(certPem.trim());
    expect(loadConfig({}, argv).supabase.rootCa).toBeUndefined();

    expect(() => loadConfig({ LOCKSTEP_SUPABASE_ROOT_CA: path.join(dir, 'missing.crt') }, argv)).toThrow(
      /LOCKSTEP_SUPABASE_ROOT_CA: cannot read .*missing\.crt.*Download certificate/,
    );
    const notPem = path.join(dir, 'not.pem');
    writeFileSync(notPem, 'hello');
    expect(() => loadConfig({ LOCKSTEP_SUPABASE_ROOT_CA: notPem }, argv)).toThrow(/holds no PEM certificate/);
    const broken = path.join(dir, 'broken.pem');
    writeFileSync(
      broken,
      '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
    );
    expect(() => loadConfig({ LOCKSTEP_SUPABASE_ROOT_CA: broken }, argv)).toThrow(/cannot be read/);
  });
});

describe('payments (LOCKSTEP_STRIPE_*)', () => {
  const all = {
    LOCKSTEP_STRIPE_SECRET_KEY: 'sk_test_123',
    LOCKSTEP_STRIPE_WEBHOOK_SECRET: 'whsec_123',
    LOCKSTEP_STRIPE_PRICES: ' starter=price_s , PRO_V2=price_p2,pro=price_p ',
  };

  it('are off without the variables, and on with all three (Stripe API host by default)', () => {
    expect(loadConfig({}, argv).billing).toBeNull();
    expect(loadConfig(all, argv).billing).toEqual({
      secretKey: 'sk_test_123',
      webhookSecret: 'whsec_123',
      apiUrl: 'https://api.stripe.com',
      prices: { starter: 'price_s', pro_v2: 'price_p2', pro: 'price_p' },
    });
    expect(
      loadConfig({ ...all, LOCKSTEP_STRIPE_API_URL: 'http://127.0.0.1:4242/' }, argv).billing?.apiUrl,
    ).toBe('http://127.0.0.1:4242');
  });

  it('stop the server when half set up, or when a price names no tier, saying what is wrong', () => {
    expect(() => loadConfig({ LOCKSTEP_STRIPE_SECRET_KEY: 'sk_test_123' }, argv)).toThrow(
      /LOCKSTEP_STRIPE_WEBHOOK_SECRET and LOCKSTEP_STRIPE_PRICES are missing/,
    );
    expect(() => loadConfig({ ...all, LOCKSTEP_STRIPE_WEBHOOK_SECRET: '' }, argv)).toThrow(
      /LOCKSTEP_STRIPE_WEBHOOK_SECRET is missing/,
    );
    expect(() => loadConfig({ ...all, LOCKSTEP_STRIPE_PRICES: 'gold=price_g' }, argv)).toThrow(
      /"gold" is not a plan tier/,
    );
    expect(() => loadConfig({ ...all, LOCKSTEP_STRIPE_PRICES: 'pro' }, argv)).toThrow(/is not tier=price_id/);
  });
});

describe('analytics and the support chat', () => {
  it('are off without their variables', () => {
    const config = loadConfig({}, argv);
    expect(config.analytics).toBeNull();
    expect(config.supportChat).toBeNull();
  });

  it('take the PostHog key with PostHog Cloud US as the default host, or a self-hosted one', () => {
    expect(loadConfig({ LOCKSTEP_POSTHOG_KEY: 'phc_1' }, argv).analytics).toEqual({
      posthogKey: 'phc_1',
      posthogHost: 'https://us.i.posthog.com',
    });
    expect(
      loadConfig({ LOCKSTEP_POSTHOG_KEY: 'phc_1', LOCKSTEP_POSTHOG_HOST: 'https://ph.example.com/' }, argv)
        .analytics?.posthogHost,
    ).toBe('https://ph.example.com');
  });

  it('load Intercom when its app id is set, else Chatwoot with both its settings', () => {
    const chatwoot = {
      LOCKSTEP_CHATWOOT_WEBSITE_TOKEN: 'tok',
      LOCKSTEP_CHATWOOT_BASE_URL: 'https://chat.example.com/',
    };
    expect(loadConfig(chatwoot, argv).supportChat).toEqual({
      kind: 'chatwoot',
      websiteToken: 'tok',
      baseUrl: 'https://chat.example.com',
    });
    expect(loadConfig({ ...chatwoot, LOCKSTEP_INTERCOM_APP_ID: 'abc123' }, argv).supportChat).toEqual({
      kind: 'intercom',
      appId: 'abc123',
    });
    expect(() => loadConfig({ LOCKSTEP_CHATWOOT_WEBSITE_TOKEN: 'tok' }, argv)).toThrow(
      /LOCKSTEP_CHATWOOT_WEBSITE_TOKEN and LOCKSTEP_CHATWOOT_BASE_URL together/,
    );
  });
});

describe('third-party addresses that reach the content security policy', () => {
  it('stops the server when the PostHog host or the Chatwoot base URL is not an http(s) address', () => {
    const chatwoot = { LOCKSTEP_CHATWOOT_WEBSITE_TOKEN: 'tok' };
    for (const bad of ['ftp://chat.example.com', 'javascript:alert(1)', 'data:text/html,x']) {
      expect(() => loadConfig({ LOCKSTEP_POSTHOG_HOST: bad }, argv), bad).toThrow(/LOCKSTEP_POSTHOG_HOST/);
      expect(() => loadConfig({ ...chatwoot, LOCKSTEP_CHATWOOT_BASE_URL: bad }, argv), bad).toThrow(
        /LOCKSTEP_CHATWOOT_BASE_URL/,
      );
    }
    expect(
      loadConfig({ LOCKSTEP_POSTHOG_KEY: 'k', LOCKSTEP_POSTHOG_HOST: 'http://ph.local:8000' }, argv)
        .analytics,
    ).toEqual({
      posthogKey: 'k',
      posthogHost: 'http://ph.local:8000',
    });
  });
});

describe('LOCKSTEP_GTM_ID (Google Tag Manager)', () => {
  it('is off without it, a container id when set, and stops the server when it is not one', () => {
    expect(loadConfig({}, argv).tagManager).toBeNull();
    expect(loadConfig({ LOCKSTEP_GTM_ID: '' }, argv).tagManager).toBeNull();
    expect(loadConfig({ LOCKSTEP_GTM_ID: ' GTM-AB12CD3 ' }, argv).tagManager).toEqual({
      gtmId: 'GTM-AB12CD3',
    });
    for (const bad of ['AB12CD3', 'GTM-', 'G-AB12CD3', 'GTM-ab12cd3', 'GTM-AB12"><script>']) {
      expect(() => loadConfig({ LOCKSTEP_GTM_ID: bad }, argv), bad).toThrow(/LOCKSTEP_GTM_ID/);
    }
  });
});
