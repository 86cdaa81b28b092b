import type { PlanSummary } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { intervalWords, SubscriptionPage } from './subscription-page';

vi.mock('../lib/session', () => ({ useSession: () => ({ tokenReady: true, signedIn: true }) }));

// What GET /rest/plans answers: the server's figures, not the web app's.
const plans: PlanSummary[] = [
  {
    tier: 'personal',
    displayName: 'Personal',
    baseLimit: 1,
    recordLimit: 1_000,
    pollIntervalSeconds: 900,
    historyRetentionDays: 30,
  },
  {
    tier: 'pro',
    displayName: 'Pro',
    baseLimit: 15,
    recordLimit: 250_000,
    pollIntervalSeconds: 60,
    historyRetentionDays: 90,
  },
  {
    tier: 'enterprise',
    displayName: 'Enterprise',
    baseLimit: null,
    recordLimit: 20_000_000,
    pollIntervalSeconds: 10,
    historyRetentionDays: 90,
  },
];

function renderPage(subscription: { status: string; productType: string | null; planDisplayName: string }) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      if (url === '/rest/users/current')
        return new Response(
          JSON.stringify({
            id: 'u1',
            lockstepUser: { experimentFlags: {}, subscription: { daysRemaining: 10, ...subscription } },
          }),
        );
      if (url === '/rest/users/limit-data')
        return new Response(
          JSON.stringify({ baseCount: 2, recordCount: 1200, baseLimit: 15, recordLimit: 250_000 }),
        );
      if (url === '/rest/plans') return new Response(JSON.stringify({ items: plans }));
      return new Response(JSON.stringify({ statusCode: 404, message: 'Not found', response: {} }), {
        status: 404,
      });
    }),
  );
  const router = createMemoryRouter([{ path: '/settings/subscription', element: <SubscriptionPage /> }], {
    initialEntries: ['/settings/subscription'],
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
}

const row = (name: string) => screen.getByRole('cell', { name: new RegExp(`^${name}`) }).closest('tr');

afterEach(() => vi.unstubAllGlobals());

describe('plan page', () => {
  it("lists every plan with the server's limits and marks the user's plan", async () => {
    renderPage({ status: 'active', productType: 'pro_v2', planDisplayName: 'Pro' });
    const table = await screen.findByRole('table', { name: 'Plans' });
    expect(within(table).getAllByRole('row')).toHaveLength(1 + plans.length);

    const personal = within(row('Personal') as HTMLElement);
    expect(personal.getByText('1')).toBeTruthy();
    expect(personal.getByText((1_000).toLocaleString())).toBeTruthy();
    expect(personal.getByText('Every 15 min')).toBeTruthy();
    expect(personal.getByText('30 days')).toBeTruthy();

    const pro = row('Pro') as HTMLElement;
    expect(within(pro).getByText('15')).toBeTruthy();
    expect(within(pro).getByText((250_000).toLocaleString())).toBeTruthy();
    expect(within(pro).getByText('Every 1 min')).toBeTruthy();
    expect(within(pro).getByText('90 days')).toBeTruthy();

    const enterprise = within(row('Enterprise') as HTMLElement);
    expect(enterprise.getByText('Unlimited')).toBeTruthy();
    expect(enterprise.getByText((20_000_000).toLocaleString())).toBeTruthy();
    expect(enterprise.getByText('Every 10 s')).toBeTruthy();

    // The user's plan (a versioned product type of the Pro tier) is marked, and only it.
    expect(within(pro).getByText('Current plan')).toBeTruthy();
    expect(pro.getAttribute('aria-current')).toBe('true');
    expect(screen.getAllByText('Current plan')).toHaveLength(1);
    expect(table.querySelectorAll('[aria-current]')).toHaveLength(1);
  });

  it('marks an expired plan as such', async () => {
    renderPage({ status: 'expired', productType: 'personal', planDisplayName: 'Personal' });
    await screen.findByRole('table', { name: 'Plans' });
    expect(within(row('Personal') as HTMLElement).getByText('Current plan (expired)')).toBeTruthy();
  });

  it('marks no plan for a user without one', async () => {
    renderPage({ status: 'none', productType: null, planDisplayName: 'No Plan' });
    const table = await screen.findByRole('table', { name: 'Plans' });
    expect(table.querySelectorAll('[aria-current]')).toHaveLength(0);
    expect(screen.queryByText(/^Current plan/)).toBeNull();
  });
});

describe('intervalWords', () => {
  it('says seconds, minutes or hours', () => {
    expect([intervalWords(10), intervalWords(90), intervalWords(300), intervalWords(7200)]).toEqual([
      '10 s',
      '90 s',
      '5 min',
      '2 h',
    ]);
  });
});
