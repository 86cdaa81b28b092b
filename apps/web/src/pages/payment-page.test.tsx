import { MantineProvider } from '@mantine/core';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { browser } from '../lib/payments';
import { PaymentPage } from './payment-page';

type Call = { url: string; method: string; body: unknown };

/** Answers POST /payment/checkout/* with the given responses in turn; records the calls. */
function serve(...answers: (() => Promise<Response>)[]) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({
        url,
        method: init.method ?? 'GET',
        body: init.body ? JSON.parse(String(init.body)) : null,
      });
      const answer = answers[Math.min(calls.length, answers.length) - 1];
      if (!answer) throw new Error(`unexpected call ${url}`);
      return answer();
    }),
  );
  return calls;
}

const envelope = (statusCode: number, userFacingMessage: string, code: string) => () =>
  Promise.resolve(
    new Response(
      JSON.stringify({
        statusCode,
        timestamp: '2026-01-15T09:00:00.000Z',
        path: '/payment/checkout/pro',
        message: userFacingMessage,
        response: { userFacingMessage, code },
      }),
      { status: statusCode },
    ),
  );

function renderPage(productType = 'pro') {
  const router = createMemoryRouter(
    [
      { path: '/account/payment/:productType', element: <PaymentPage /> },
      { path: '/account/signup/:productType?', element: <p>Plan chooser</p> },
    ],
    { initialEntries: [`/account/payment/${productType}`] },
  );
  render(
    <MantineProvider>
      <RouterProvider router={router} />
    </MantineProvider>,
  );
  return router;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  delete (window as { Rewardful?: unknown }).Rewardful;
});

describe('payment page (/account/payment/{productType})', () => {
  it('shows it is starting the checkout, then goes to the url the server answers', async () => {
    const goTo = vi.spyOn(browser, 'goTo').mockImplementation(() => {});
    let answer: (r: Response) => void = () => {};
    const calls = serve(() => new Promise<Response>((resolve) => (answer = resolve)));
    renderPage('pro');
    expect(await screen.findByText('Starting the checkout for the Pro plan…')).toBeTruthy();
    expect(screen.getByLabelText('Starting checkout')).toBeTruthy();
    expect(goTo).not.toHaveBeenCalled();

    answer(new Response(JSON.stringify({ url: 'https://checkout.stripe.com/c/pay/cs_test_1' })));
    await waitFor(() => expect(goTo).toHaveBeenCalledWith('https://checkout.stripe.com/c/pay/cs_test_1'));
    expect(screen.getByText("Taking you to Stripe's secure checkout…")).toBeTruthy();
    // One checkout a visit, for the plan in the address, with no referral to pass on.
    expect(calls).toEqual([{ url: '/payment/checkout/pro', method: 'POST', body: {} }]);
  });

  it("passes on Rewardful's referral", async () => {
    vi.spyOn(browser, 'goTo').mockImplementation(() => {});
    (window as { Rewardful?: unknown }).Rewardful = { referral: 'ref-7d1c' };
    const calls = serve(() =>
      Promise.resolve(new Response(JSON.stringify({ url: 'https://stripe.test/x' }))),
    );
    renderPage('starter_v2');
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]).toEqual({
      url: '/payment/checkout/starter_v2',
      method: 'POST',
      body: { rewardfulReferral: 'ref-7d1c' },
    });
  });

  it("shows the server's error and tries again on request", async () => {
    const goTo = vi.spyOn(browser, 'goTo').mockImplementation(() => {});
    const calls = serve(
      envelope(
        502,
        'Stripe could not start the checkout just now. Try again in a minute.',
        'payment_provider',
      ),
      () => Promise.resolve(new Response(JSON.stringify({ url: 'https://stripe.test/second' }))),
    );
    renderPage('pro');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not start the checkout');
    expect(alert.textContent).toContain('Stripe could not start the checkout just now.');
    expect(goTo).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(goTo).toHaveBeenCalledWith('https://stripe.test/second'));
    expect(calls).toHaveLength(2);
  });

  it('says payments are not set up on this server, with no retry and a way back to the plans', async () => {
    const goTo = vi.spyOn(browser, 'goTo').mockImplementation(() => {});
    serve(
      envelope(
        503,
        'Payments are not set up on this server, so plans cannot be bought here.',
        'payments_not_configured',
      ),
    );
    const router = renderPage('pro');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Payments are not set up');
    expect(alert.textContent).toContain('plans cannot be bought here');
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
    expect(goTo).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('link', { name: 'Back to plans' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/account/signup/pro'));
  });
});
