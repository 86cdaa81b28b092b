import type { CurrentUser } from '@lockstep/contract';
import { render } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { resetAnalyticsForTests } from '../lib/analytics';
import type { AppConfig } from '../lib/queries';
import { AnalyticsBridge } from './analytics-bridge';

const posthog = vi.hoisted(() => ({
  init: vi.fn(),
  identify: vi.fn(),
  capture: vi.fn(),
  reset: vi.fn(),
  opt_out_capturing: vi.fn(),
  stopSessionRecording: vi.fn(),
}));
vi.mock('posthog-js', () => ({ default: posthog }));

const state = vi.hoisted(() => ({
  config: null as unknown,
  me: undefined as unknown,
  signedIn: true,
}));
vi.mock('../lib/queries', () => ({
  useAppConfig: () => ({ data: state.config }),
  useCurrentUser: () => ({ data: state.me }),
}));
vi.mock('../lib/session', () => ({ useSession: () => ({ checked: true, signedIn: state.signedIn }) }));

function config(environment: AppConfig['environment']): AppConfig {
  return {
    environment,
    supportEmail: 'help@x.test',
    pricingUrl: 'https://x.test/pricing',
    oidcProviders: [],
    payments: false,
    analytics: { posthogKey: 'phc_test', posthogHost: 'https://ph.example.test' },
    tagManager: null,
    supportChat: null,
  };
}
function user(impersonatedBy: string | null): CurrentUser {
  return {
    id: 'u1',
    displayName: 'Ada',
    email: 'ada@example.test',
    role: 'user',
    impersonatedBy,
    lockstepUser: { subscription: { planDisplayName: 'Pro' } },
  } as unknown as CurrentUser;
}

describe('the analytics bridge', () => {
  beforeEach(() => {
    resetAnalyticsForTests();
    for (const fn of Object.values(posthog)) fn.mockReset();
    state.signedIn = true;
  });

  it('starts analytics and identifies the user after sign-in in production', () => {
    state.config = config('production');
    state.me = user(null);
    render(<AnalyticsBridge />);
    expect(posthog.init).toHaveBeenCalledTimes(1);
    expect(posthog.identify).toHaveBeenCalledWith('u1', { email: 'ada@example.test', plan: 'Pro' });
  });

  it('never starts, so never identifies, while staff impersonate the user', () => {
    state.config = config('production');
    state.me = user('staff-1');
    render(<AnalyticsBridge />);
    expect(posthog.init).not.toHaveBeenCalled();
    expect(posthog.identify).not.toHaveBeenCalled();
  });

  it('waits for the current user before starting a signed-in session', () => {
    state.config = config('production');
    state.me = undefined;
    render(<AnalyticsBridge />);
    expect(posthog.init).not.toHaveBeenCalled();
  });

  it('starts for a visitor who is not signed in (the sign-in page), without identifying', () => {
    state.config = config('staging');
    state.me = undefined;
    state.signedIn = false;
    render(<AnalyticsBridge />);
    expect(posthog.init).toHaveBeenCalledTimes(1);
    expect(posthog.identify).not.toHaveBeenCalled();
  });

  it('does nothing in local or test mode', () => {
    for (const environment of ['local', 'test'] as const) {
      state.config = config(environment);
      state.me = user(null);
      render(<AnalyticsBridge />);
    }
    expect(posthog.init).not.toHaveBeenCalled();
    expect(posthog.identify).not.toHaveBeenCalled();
  });
});
