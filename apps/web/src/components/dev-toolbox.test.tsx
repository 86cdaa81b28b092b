import type { CurrentUser } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { api } from '../lib/api';
import { writeDevFlag } from '../lib/dev-mode';
import { DevToolbox } from './dev-toolbox';

vi.mock('../lib/session', () => ({ useSession: () => ({ tokenReady: false }) }));

function user(flags: Record<string, boolean | string[]> = {}): CurrentUser {
  return {
    id: 'u1',
    displayName: 'Ada',
    email: 'ada@example.test',
    role: 'user',
    impersonatedBy: null,
    lockstepUser: {
      experimentFlags: flags,
      subscription: { status: 'active', daysRemaining: 12, planDisplayName: 'Pro', productType: 'pro' },
    },
  } as unknown as CurrentUser;
}

function renderAt(me: CurrentUser, path = '/syncs/s1/overview?tab=2') {
  const router = createMemoryRouter([{ path: '*', element: <DevToolbox me={me} /> }], {
    initialEntries: [path],
  });
  render(
    <MantineProvider>
      <RouterProvider router={router} />
    </MantineProvider>,
  );
}
const pressKeys = () => fireEvent.keyDown(window, { key: 'D', ctrlKey: true, shiftKey: true });
const toolbox = () => screen.queryByRole('dialog', { name: 'Developer toolbox' });

describe('the invisible developer toolbox', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('stays hidden, keys or not, without the flag', async () => {
    renderAt(user());
    pressKeys();
    // Given the time the drawer takes to open when the flag is on.
    await expect(
      screen.findByRole('dialog', { name: 'Developer toolbox' }, { timeout: 600 }),
    ).rejects.toThrow();
    expect(screen.queryByText('Copy debug bundle')).toBeNull();
  });

  it('opens with Ctrl+Shift+D when the local dev flag is on, and not before the keys', async () => {
    writeDevFlag('invisibleDevToolbox', true);
    renderAt(user());
    expect(toolbox()).toBeNull();
    pressKeys();
    const dialog = await screen.findByRole('dialog', { name: 'Developer toolbox' });
    expect(dialog.textContent).toContain('ada@example.test');
    expect(dialog.textContent).toContain('Pro (active, 12 days left)');
    expect(dialog.textContent).toContain(__APP_VERSION__);
    expect(screen.getByRole('link', { name: 'OpenAPI document (JSON)' }).getAttribute('href')).toBe(
      '/api/docs/json',
    );
    expect(screen.getByRole('link', { name: 'Job viewer' }).getAttribute('href')).toBe('/job-viewer');
    expect(screen.getByRole('link', { name: 'Trace logs of this sync' }).getAttribute('href')).toBe(
      '/syncs/s1/trace-logs',
    );
  });

  it("opens when the user's INVISIBLE_DEV_TOOLBOX experiment flag is on, and shows the flags", async () => {
    renderAt(user({ INVISIBLE_DEV_TOOLBOX: true, BETA_CONNECTORS: ['hubspot'] }));
    pressKeys();
    const dialog = await screen.findByRole('dialog', { name: 'Developer toolbox' });
    expect(dialog.textContent).toContain('"BETA_CONNECTORS"');
  });

  it('copies a debug bundle with the route, the user id and the recent API errors', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify({ message: 'Sync not found' }), { status: 404 })),
    );
    await expect(api('/rest/core-bases/s1?detailLevel=basic')).rejects.toThrow();
    writeDevFlag('invisibleDevToolbox', true);
    renderAt(user());
    pressKeys();
    await screen.findByRole('dialog', { name: 'Developer toolbox' });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Copy debug bundle' }));
    });
    await waitFor(() => expect(writeText).toHaveBeenCalled());
    const bundle = JSON.parse((writeText.mock.calls[0] as unknown as [string])[0]);
    expect(bundle.route).toBe('/syncs/s1/overview?tab=2');
    expect(bundle.userId).toBe('u1');
    expect(bundle.recentApiErrors.at(-1)).toMatchObject({
      method: 'GET',
      path: '/rest/core-bases/s1',
      status: 404,
      message: 'Sync not found',
    });
  });
});
