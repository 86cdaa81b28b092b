import type { CurrentUser, LimitData, Subscription } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AppLayout } from './app-layout';

// The layout's data hooks, replaced by a plan each test sets.
const state = vi.hoisted(() => ({
  subscription: null as unknown as Subscription,
  limits: null as LimitData | null,
  flags: {} as Record<string, boolean | string[]>,
  signOut: () => Promise.resolve(),
}));

vi.mock('../lib/session', () => ({ useSession: () => ({ signOut: state.signOut }) }));
vi.mock('../lib/queries', () => ({
  useAppConfig: () => ({ data: { pricingUrl: 'https://lockstep.dev/pricing', supportEmail: 'help@x.test' } }),
  useCurrentUser: () => ({
    isLoading: false,
    error: null,
    data: {
      id: 'u1',
      displayName: 'Ada',
      email: 'ada@example.test',
      role: 'user',
      impersonatedBy: null,
      lockstepUser: { experimentFlags: state.flags, subscription: state.subscription },
    } as unknown as CurrentUser,
  }),
  usePlan: () => ({ subscription: state.subscription, limits: state.limits, devPlan: false, loading: false }),
  useDevFlag: () => false,
}));

const none: Subscription = {
  status: 'none',
  daysRemaining: null,
  planDisplayName: 'No Plan',
  productType: null,
};
const active: Subscription = {
  status: 'active',
  daysRemaining: 10,
  planDisplayName: 'Pro',
  productType: 'pro',
};
const expired: Subscription = { ...active, status: 'expired', daysRemaining: 0 };

function renderAt(path: string) {
  const router = createMemoryRouter(
    [{ element: <AppLayout />, children: [{ path: '*', element: <p>page body</p> }] }],
    { initialEntries: [path] },
  );
  render(
    <MantineProvider>
      <RouterProvider router={router} />
    </MantineProvider>,
  );
}

const gate = () => screen.queryByRole('dialog', { name: 'Choose a plan to get started' });

describe('the plan gate in the signed-in shell (spec sections 2, 4 and 5)', () => {
  beforeEach(() => {
    state.limits = { baseCount: 0, recordCount: 0, baseLimit: 15, recordLimit: 250_000 };
    state.flags = {};
    state.signOut = vi.fn(() => Promise.resolve());
  });

  it('shows the gate for status none on every plan route', () => {
    state.subscription = none;
    for (const path of ['/syncs', '/syncs/new', '/issues', '/operations', '/get-started']) {
      renderAt(path);
      expect(gate()).not.toBeNull();
      cleanup();
    }
  });

  it('cannot be dismissed: Escape and a click on the overlay leave it open; Switch Accounts signs out', () => {
    state.subscription = none;
    renderAt('/syncs');
    fireEvent.keyDown(gate() as HTMLElement, { key: 'Escape' });
    const overlay = document.querySelector('.mantine-Modal-overlay');
    expect(overlay).not.toBeNull();
    fireEvent.mouseDown(overlay as Element);
    fireEvent.click(overlay as Element);
    expect(gate()).not.toBeNull();
    expect(screen.queryByRole('button', { name: /close/i })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Switch Accounts' }));
    expect(state.signOut).toHaveBeenCalledOnce();
  });

  it('points Choose Plan at pricing, or in-app with SELECT_A_PLAN_URL', () => {
    state.subscription = none;
    renderAt('/syncs');
    expect(screen.getByRole('link', { name: 'Choose Plan' }).getAttribute('href')).toBe(
      'https://lockstep.dev/pricing',
    );
    cleanup();
    state.flags = { SELECT_A_PLAN_URL: true };
    renderAt('/syncs');
    expect(screen.getByRole('link', { name: 'Choose Plan' }).getAttribute('href')).toBe('/account/signup');
  });

  it('does not gate an active plan, nor settings without a plan', () => {
    state.subscription = active;
    renderAt('/syncs');
    expect(gate()).toBeNull();
    expect(screen.getByText('page body')).toBeTruthy();
    expect(screen.getByText('0 of 15 syncs')).toBeTruthy();
    cleanup();
    state.subscription = none;
    renderAt('/settings');
    expect(gate()).toBeNull();
    expect(screen.getByText('No Plan')).toBeTruthy();
  });

  it('keeps plan routes reachable when expired, with a notice', () => {
    state.subscription = expired;
    renderAt('/syncs');
    expect(gate()).toBeNull();
    expect(screen.getByText('Your plan has expired')).toBeTruthy();
    expect(screen.getByText('page body')).toBeTruthy();
  });
});

describe('the brand logo in the header (spec section 9)', () => {
  it('is drawn at an icon size with its width and height, and loads lazily', () => {
    state.limits = null;
    state.subscription = active;
    const { container } = render(
      <MantineProvider>
        <RouterProvider
          router={createMemoryRouter([{ path: '*', element: <AppLayout /> }], { initialEntries: ['/syncs'] })}
        />
      </MantineProvider>,
    );
    const logo = container.querySelector('img[src="/logo.svg"]') as HTMLImageElement;
    expect(logo.getAttribute('width')).toBe('32');
    expect(logo.getAttribute('height')).toBe('32');
    expect(logo.getAttribute('loading')).toBe('lazy');
    expect(logo.getAttribute('alt')).toBe('');
  });
});
