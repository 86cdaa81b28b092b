import type { CurrentUser } from '@lockstep/contract';
import { render } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppConfig } from '../lib/queries';
import { GTM_SCRIPT_ID, resetTagManagerForTests, tagManager } from '../lib/tag-manager';
import { TagManagerBridge } from './tag-manager-bridge';

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

function config(environment: AppConfig['environment'], gtmId: string | null = 'GTM-AB12CD3'): AppConfig {
  return {
    environment,
    supportEmail: 'help@x.test',
    pricingUrl: 'https://x.test/pricing',
    oidcProviders: [],
    payments: false,
    analytics: null,
    tagManager: gtmId ? { gtmId } : null,
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

const script = () => document.getElementById(GTM_SCRIPT_ID) as HTMLScriptElement | null;
const dataLayer = () => (window as Window & { dataLayer?: Record<string, unknown>[] }).dataLayer;

describe('the tag manager bridge', () => {
  beforeEach(() => {
    resetTagManagerForTests();
    state.signedIn = true;
  });

  it('loads the container in production with an id: the gtm.start event first, then gtm.js, asynchronously', () => {
    state.config = config('production');
    state.me = user(null);
    const before = Date.now();
    render(<TagManagerBridge />);
    expect(script()?.src).toBe('https://www.googletagmanager.com/gtm.js?id=GTM-AB12CD3');
    expect(script()?.async).toBe(true);
    expect(dataLayer()?.[0]).toMatchObject({ event: 'gtm.js' });
    expect(dataLayer()?.[0]?.['gtm.start']).toBeGreaterThanOrEqual(before);
    // Rendered again (a new current user answer): still one script.
    render(<TagManagerBridge />);
    expect(document.querySelectorAll(`#${GTM_SCRIPT_ID}`)).toHaveLength(1);
  });

  it('loads for a visitor who is not signed in (the sign-in page), in staging too', () => {
    state.config = config('staging');
    state.me = undefined;
    state.signedIn = false;
    render(<TagManagerBridge />);
    expect(script()).not.toBeNull();
  });

  it('loads nothing in local or test mode, nor without a container id, nor with one that is not an id', () => {
    for (const c of [
      config('local'),
      config('test'),
      config('production', null),
      config('production', 'GTM-1"x'),
    ]) {
      state.config = c;
      state.me = user(null);
      render(<TagManagerBridge />);
    }
    expect(script()).toBeNull();
    expect(dataLayer()).toBeUndefined();
  });

  it('loads nothing, and pushes nothing, while staff impersonate the user', () => {
    state.config = config('production');
    state.me = user('staff-1');
    tagManager.signedIn('email');
    render(<TagManagerBridge />);
    tagManager.signedOut();
    expect(script()).toBeNull();
    expect(dataLayer()).toBeUndefined();
  });

  it('waits for the current user before loading for a signed-in session', () => {
    state.config = config('production');
    state.me = undefined;
    render(<TagManagerBridge />);
    expect(script()).toBeNull();
  });

  it('pushes a sign-in once the next page knows the user, and a sign-out at once', () => {
    state.config = config('production');
    state.me = user(null);
    tagManager.signedIn('sign_up');
    render(<TagManagerBridge />);
    expect(dataLayer()).toContainEqual({ event: 'signed_in', method: 'sign_up' });
    // Pushed once, not again on the next render.
    render(<TagManagerBridge />);
    expect(dataLayer()?.filter((e) => e.event === 'signed_in')).toHaveLength(1);
    tagManager.signedOut();
    expect(dataLayer()?.at(-1)).toEqual({ event: 'signed_out' });
  });
});
