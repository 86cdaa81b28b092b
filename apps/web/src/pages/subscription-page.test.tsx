import type { PlanSummary } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { browser } from '../lib/payments';
import { intervalWords, remainingWords, SubscriptionPage } from './subscription-page';

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

type PageOptions = { payments?: boolean; portal?: () => Response };

function renderPage(
  subscription: {
    status: string;
    productType: string | null;
    planDisplayName: string;
    billedByStripe?: boolean;
  },
  options: PageOptions = {},
) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (url === '/api/config' && options.payments !== undefined)
        return new Response(JSON.stringify({ environment: 'test', payments: options.payments }));
      if (url === '/payment/portal' && init?.method === 'POST' && options.portal) return options.portal();
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

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

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

describe('billing on the plan page', () => {
  it("Manage billing opens Stripe's billing portal", async () => {
    const goTo = vi.spyOn(browser, 'goTo').mockImplementation(() => {});
    renderPage(
      { status: 'active', productType: 'pro', planDisplayName: 'Pro', billedByStripe: true },
      {
        payments: true,
        portal: () => new Response(JSON.stringify({ url: 'https://billing.stripe.com/p/session/bps_1' })),
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Manage billing' }));
    await waitFor(() => expect(goTo).toHaveBeenCalledWith('https://billing.stripe.com/p/session/bps_1'));
  });

  it('shows why the portal cannot open (no customer yet)', async () => {
    const goTo = vi.spyOn(browser, 'goTo').mockImplementation(() => {});
    renderPage(
      { status: 'trialing', productType: 'pro', planDisplayName: 'Pro' },
      {
        payments: true,
        portal: () =>
          new Response(
            JSON.stringify({
              statusCode: 409,
              message: 'No Stripe customer for this user',
              response: {
                userFacingMessage: 'There is no billing to manage yet: you have not paid for a plan.',
              },
            }),
            { status: 409 },
          ),
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Manage billing' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not open billing');
    expect(alert.textContent).toContain('There is no billing to manage yet');
    expect(goTo).not.toHaveBeenCalled();
  });

  it('says payments are not set up on this server, with no Manage billing', async () => {
    renderPage({ status: 'trialing', productType: 'pro', planDisplayName: 'Pro' }, { payments: false });
    expect(
      await screen.findByText(
        'Payments are not set up on this server: plans come from a trial or from staff.',
      ),
    ).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Manage billing' })).toBeNull();
  });
});

describe('remainingWords', () => {
  const sub = (extra: Record<string, unknown>) => ({
    status: 'active' as const,
    daysRemaining: 12,
    planDisplayName: 'Pro',
    productType: 'pro',
    ...extra,
  });
  it('says renewal, cancellation, a failed payment or plain days remaining', () => {
    expect(remainingWords(sub({ billedByStripe: true, cancelAtPeriodEnd: false }), false)).toBe(
      'Renews in 12 days.',
    );
    expect(remainingWords(sub({ billedByStripe: true, cancelAtPeriodEnd: true }), false)).toBe(
      'Canceled: ends in 12 days.',
    );
    expect(remainingWords(sub({ status: 'past_due', daysRemaining: 1, billedByStripe: true }), false)).toBe(
      'A payment failed. Update your payment details with Manage billing: the plan stays usable for 1 day.',
    );
    expect(remainingWords(sub({ status: 'trialing' }), false)).toBe('12 days remaining');
    expect(remainingWords(sub({ daysRemaining: 30, productType: null }), true)).toBe(
      '30 days remaining (local dev plan)',
    );
    expect(remainingWords(sub({ status: 'expired', daysRemaining: 0 }), false)).toBeNull();
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
