import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RouteErrorScreen } from './route-error-screen';

let broken = true;
function FlakyPage() {
  if (broken) throw new Error('render failed');
  return <p>the page</p>;
}

describe('a page that fails to render (spec sections 2 and 8)', () => {
  beforeEach(() => vi.spyOn(console, 'error').mockImplementation(() => {}));
  afterEach(() => vi.restoreAllMocks());

  it('shows Something went wrong with the support email; Try again renders the page again', async () => {
    const queryClient = new QueryClient();
    queryClient.setQueryData(['config'], { supportEmail: 'help@lockstep.test' });
    const router = createMemoryRouter(
      [{ path: '/syncs', element: <FlakyPage />, errorElement: <RouteErrorScreen /> }],
      { initialEntries: ['/syncs'] },
    );
    render(
      <MantineProvider>
        <QueryClientProvider client={queryClient}>
          <RouterProvider router={router} />
        </QueryClientProvider>
      </MantineProvider>,
    );
    expect(screen.getByRole('heading', { name: 'Something went wrong' })).toBeTruthy();
    expect(
      screen.getByText(
        'There was a problem loading the page. If this continues, please reach out to us at help@lockstep.test.',
      ),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Return to dashboard' }).getAttribute('href')).toBe('/syncs');
    broken = false;
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('the page')).toBeTruthy();
  });
});
