import { describe, expect, it, vi } from 'vitest';
import { readDevFlag, writeDevFlag } from './dev-mode';

describe('local dev flags (spec section 6)', () => {
  it('skips the paywall by default on localhost and 127.0.0.1 only', () => {
    expect(readDevFlag('skipPaywall', 'localhost')).toBe(true);
    expect(readDevFlag('skipPaywall', '127.0.0.1')).toBe(true);
    expect(readDevFlag('skipPaywall', 'app.lockstep.dev')).toBe(false);
  });

  it('a stored value wins over the default', () => {
    localStorage.setItem('lockstep.dev.skipPaywall', 'false');
    expect(readDevFlag('skipPaywall', 'localhost')).toBe(false);
    localStorage.setItem('lockstep.dev.skipPaywall', 'true');
    expect(readDevFlag('skipPaywall', 'app.lockstep.dev')).toBe(true);
  });

  it('the two other flags are off unless set, and writing one tells the page', () => {
    expect(readDevFlag('invisibleDevToolbox', 'localhost')).toBe(false);
    expect(readDevFlag('allowUnsupportedMappings', 'localhost')).toBe(false);
    const listener = vi.fn();
    window.addEventListener('lockstep-dev-flags', listener);
    writeDevFlag('allowUnsupportedMappings', true);
    window.removeEventListener('lockstep-dev-flags', listener);
    expect(listener).toHaveBeenCalledOnce();
    expect(readDevFlag('allowUnsupportedMappings', 'localhost')).toBe(true);
  });
});
