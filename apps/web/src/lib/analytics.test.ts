import type { PostHogConfig } from 'posthog-js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AnalyticsSettings, analytics, maskEmails, resetAnalyticsForTests } from './analytics';

// posthog-js is a third-party SDK: replaced at the module boundary, recording every call.
const posthog = vi.hoisted(() => ({
  init: vi.fn(),
  identify: vi.fn(),
  capture: vi.fn(),
  reset: vi.fn(),
  opt_out_capturing: vi.fn(),
  stopSessionRecording: vi.fn(),
}));
vi.mock('posthog-js', () => ({ default: posthog }));

const keys = { posthogKey: 'phc_test', posthogHost: 'https://ph.example.test' };
const production: AnalyticsSettings = { environment: 'production', analytics: keys };
const ada = { id: 'u1', email: 'ada@example.test', plan: 'Pro' };

function initOptions(): Partial<PostHogConfig> {
  return posthog.init.mock.calls[0]?.[1] as Partial<PostHogConfig>;
}

describe('analytics (spec sections 4, 6, 8 and 9)', () => {
  beforeEach(() => {
    resetAnalyticsForTests();
    for (const fn of Object.values(posthog)) fn.mockReset();
  });
  afterEach(() => vi.restoreAllMocks());

  it('is not initialised in local or test, nor in staging or production without a key', () => {
    for (const environment of ['local', 'test'] as const)
      expect(analytics.start({ environment, analytics: keys })).toBe(false);
    expect(analytics.start({ environment: 'staging', analytics: null })).toBe(false);
    expect(analytics.start({ environment: 'production', analytics: { ...keys, posthogKey: '' } })).toBe(
      false,
    );
    analytics.setUser(ada, false);
    analytics.track('anything');
    analytics.signedOut();
    expect(posthog.init).not.toHaveBeenCalled();
    expect(posthog.identify).not.toHaveBeenCalled();
    expect(posthog.capture).not.toHaveBeenCalled();
    expect(posthog.reset).not.toHaveBeenCalled();
  });

  it('starts once in staging and production with the key and host', () => {
    expect(analytics.start({ environment: 'staging', analytics: keys })).toBe(true);
    expect(analytics.start(production)).toBe(true);
    expect(posthog.init).toHaveBeenCalledTimes(1);
    expect(posthog.init).toHaveBeenCalledWith(
      'phc_test',
      expect.objectContaining({ api_host: keys.posthogHost }),
    );
  });

  it('records sessions with every input masked, passwords and emails included, and emails in text', () => {
    analytics.start(production);
    const options = initOptions();
    expect(options.disable_session_recording).toBe(false);
    expect(options.session_recording?.maskAllInputs).toBe(true);
    expect(options.session_recording?.maskInputOptions).toEqual({ password: true, email: true });
    expect(options.session_recording?.maskTextSelector).toBe('*');
    const maskText = options.session_recording?.maskTextFn;
    expect(maskText?.('Signed in as ada.l@example.co.uk (Pro)')).toBe(
      `Signed in as ${'*'.repeat('ada.l@example.co.uk'.length)} (Pro)`,
    );
    expect(maskText?.('3 syncs, 1,200 records')).toBe('3 syncs, 1,200 records');
    expect(maskEmails('a@b.io, c@d.io')).toBe('******, ******');
  });

  it('identifies the signed-in user with id, email and plan', () => {
    analytics.start(production);
    analytics.setUser(ada, false);
    expect(posthog.identify).toHaveBeenCalledWith('u1', { email: 'ada@example.test', plan: 'Pro' });
  });

  it('neither identifies nor captures while staff impersonate the user', () => {
    analytics.start(production);
    analytics.setUser(ada, true);
    analytics.track('sync_created');
    analytics.signedOut();
    expect(posthog.identify).not.toHaveBeenCalled();
    expect(posthog.capture).not.toHaveBeenCalled();
    expect(posthog.reset).not.toHaveBeenCalled();
    expect(posthog.opt_out_capturing).toHaveBeenCalled();
    expect(posthog.stopSessionRecording).toHaveBeenCalled();
  });

  it('tracks a sign-in as the user once they are identified', () => {
    analytics.start(production);
    analytics.signedIn('email');
    expect(posthog.capture).not.toHaveBeenCalled();
    analytics.setUser(ada, false);
    expect(posthog.capture).toHaveBeenCalledWith('signed_in', { method: 'email' });
    expect(posthog.identify.mock.invocationCallOrder[0]).toBeLessThan(
      posthog.capture.mock.invocationCallOrder[0] ?? 0,
    );
    // Once only: the next page load of the same tab is not a new sign-in.
    analytics.setUser(ada, false);
    expect(posthog.capture).toHaveBeenCalledTimes(1);
  });

  it('records the sign-out at once and then resets', () => {
    analytics.start(production);
    analytics.setUser(ada, false);
    analytics.signedOut();
    expect(posthog.capture).toHaveBeenCalledWith('signed_out', undefined, {
      send_instantly: true,
      transport: 'sendBeacon',
    });
    expect(posthog.reset).toHaveBeenCalledTimes(1);
    expect(posthog.capture.mock.invocationCallOrder[0]).toBeLessThan(
      posthog.reset.mock.invocationCallOrder[0] ?? 0,
    );
  });

  it('logs a failed start to the console only, and stays off', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    posthog.init.mockImplementation(() => {
      throw new Error('blocked by an ad blocker');
    });
    expect(() => analytics.start(production)).not.toThrow();
    expect(analytics.start(production)).toBe(false);
    expect(error).toHaveBeenCalledWith('Analytics: start failed', expect.any(Error));
    analytics.track('sync_created');
    expect(posthog.capture).not.toHaveBeenCalled();
  });

  it('logs a failed tracking call to the console only', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    analytics.start(production);
    posthog.capture.mockImplementation(() => {
      throw new Error('network down');
    });
    posthog.identify.mockImplementation(() => {
      throw new Error('network down');
    });
    expect(() => analytics.setUser(ada, false)).not.toThrow();
    expect(() => analytics.track('sync_created')).not.toThrow();
    expect(() => analytics.signedOut()).not.toThrow();
    expect(error).toHaveBeenCalledWith('Analytics: identify failed', expect.any(Error));
    expect(error).toHaveBeenCalledWith('Analytics: tracking sync_created failed', expect.any(Error));
    // The reset still happens after a failed sign-out event.
    expect(posthog.reset).toHaveBeenCalled();
  });
});
