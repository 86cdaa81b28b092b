import { afterEach, describe, expect, it, vi } from 'vitest';
import { analytics } from './analytics';

describe('analytics (spec sections 6 and 9)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('does nothing outside staging and production', () => {
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    for (const env of ['local', 'test'] as const) {
      analytics.configure(env, false);
      analytics.identify('u1');
      analytics.track('signed_out');
      analytics.reset();
    }
    expect(debug).not.toHaveBeenCalled();
  });

  it('never identifies a user while staff impersonate them, but still tracks', () => {
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    analytics.configure('production', true);
    analytics.identify('u1');
    expect(debug).not.toHaveBeenCalled();
    analytics.track('signed_out');
    expect(debug).toHaveBeenCalledWith('analytics track', 'signed_out');
    analytics.configure('staging', false);
    analytics.identify('u1');
    expect(debug).toHaveBeenCalledWith('analytics identify', 'u1');
  });
});
