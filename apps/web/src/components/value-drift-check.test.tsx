import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ValueDriftCheck } from './value-drift-check';

const sync = (syncState: string) => ({ id: 'sync-1', syncState }) as unknown as CoreBase;

/** The server: the check starts, is in progress once, then completes with one drifted record. */
function renderCheck(s: CoreBase) {
  const calls: { url: string; method: string; body: unknown }[] = [];
  let polls = 0;
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({
        url,
        method: init?.method ?? 'GET',
        body: init?.body ? JSON.parse(String(init.body)) : null,
      });
      if (url.endsWith('/drift-checks'))
        return new Response(JSON.stringify({ trackingId: 't1' }), { status: 202 });
      polls += 1;
      const done = polls > 1;
      return new Response(
        JSON.stringify({
          trackingId: 't1',
          kind: 'drift-check',
          status: done ? 'COMPLETED' : 'IN_PROGRESS',
          done: done ? 40 : 20,
          total: 40,
          percent: done ? 100 : 50,
          message: done ? '40 linked records compared: 1 drifted without a change signal (see Issues)' : null,
          result: done
            ? {
                checked: 40,
                drifted: 1,
                tables: [
                  {
                    tableMappingId: 'm1',
                    table: 'people ⇄ people',
                    checked: 40,
                    drifted: 1,
                    skipped: null,
                  },
                ],
              }
            : null,
          createdAt: '2026-11-27T00:00:00Z',
          updatedAt: '2026-11-27T00:00:01Z',
        }),
      );
    }),
  );
  const router = createMemoryRouter([{ path: '*', element: <ValueDriftCheck sync={s} /> }]);
  render(
    <QueryClientProvider client={new QueryClient()}>
      <MantineProvider>
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('ValueDriftCheck', () => {
  it('starts a comparison, follows its progress and shows what drifted with the way to the issues', async () => {
    const calls = renderCheck(sync('on'));
    fireEvent.click(screen.getByRole('button', { name: 'Compare values now' }));
    expect(await screen.findByText(/1 drifted without a change signal/, {}, { timeout: 5000 })).toBeTruthy();
    expect(screen.getByText(/people ⇄ people: 40 compared, 1 drifted/)).toBeTruthy();
    expect(screen.getByRole('link', { name: /Review the drift issues/ }).getAttribute('href')).toBe(
      '/syncs/sync-1/issues',
    );
    expect(calls[0]).toMatchObject({ url: '/rest/core-bases/sync-1/drift-checks', method: 'POST', body: {} });
    expect(calls.filter((c) => c.url === '/rest/progress/t1').length).toBeGreaterThanOrEqual(2);
  });

  it('asks for every record with the second button', async () => {
    const calls = renderCheck(sync('on'));
    fireEvent.click(screen.getByRole('button', { name: 'Compare every record' }));
    await waitFor(() => expect(calls[0]?.body).toEqual({ full: true }));
  });

  it('cannot start while the sync is off, and says why', () => {
    renderCheck(sync('off'));
    expect(
      screen.getAllByRole('button', { name: 'Compare values now' }).at(-1)?.hasAttribute('disabled'),
    ).toBe(true);
    expect(screen.getByText('Switch the sync on to compare values.')).toBeTruthy();
  });
});
