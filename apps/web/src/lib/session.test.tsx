import { act, render } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionProvider, useSession } from './session';

const calls = vi.hoisted(() => [] as string[]);
vi.mock('./auth-client', () => ({
  authClient: {
    useSession: () => ({ data: null, isPending: false }),
    signOut: async () => void calls.push('identity provider sign-out'),
  },
  fetchRestToken: async () => null,
}));
vi.mock('./analytics', () => ({
  analytics: { signedOut: () => calls.push('analytics sign-out and reset') },
}));
vi.mock('./tag-manager', () => ({
  tagManager: { signedOut: () => calls.push('tag manager sign-out pushed') },
}));
vi.mock('./support-chat', () => ({ shutdownSupportChat: () => calls.push('support chat shut down') }));

describe('sign-out (spec section 4)', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('records the analytics event, pushes the tag manager event and resets before signing out, then goes to /sign-in', async () => {
    const assign = vi.fn((url: string) => calls.push(`go to ${url}`));
    vi.stubGlobal('location', { ...window.location, assign });
    let signOut: () => Promise<void> = async () => {};
    function Probe() {
      signOut = useSession().signOut;
      return null;
    }
    render(
      <SessionProvider>
        <Probe />
      </SessionProvider>,
    );
    await act(() => signOut());
    expect(calls).toEqual([
      'analytics sign-out and reset',
      'tag manager sign-out pushed',
      'support chat shut down',
      'identity provider sign-out',
      'go to /sign-in',
    ]);
  });
});
