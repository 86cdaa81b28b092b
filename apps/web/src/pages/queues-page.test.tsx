import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { QueuesPage } from './queues-page';

function renderWith(body: unknown, status = 200) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => new Response(JSON.stringify(body), { status })),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <QueuesPage />
      </MantineProvider>
    </QueryClientProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const queue = (name: string, over: object = {}) => ({
  name,
  created: 0,
  retry: 0,
  active: 0,
  completed: 0,
  failed: 0,
  cancelled: 0,
  completedLastHour: 0,
  failedLastHour: 0,
  oldestWaitingAt: null,
  ...over,
});

describe('QueuesPage', () => {
  it('shows each queue as a bar by state with what waits longest, and the workers alive', async () => {
    renderWith({
      workersAlive: 2,
      queues: [
        queue('sync-run', {
          created: 3,
          active: 1,
          completed: 96,
          failedLastHour: 2,
          completedLastHour: 40,
          oldestWaitingAt: new Date(Date.now() - 5 * 60_000).toISOString(),
        }),
        queue('drift-check'),
      ],
    });
    expect(await screen.findByText('2 workers alive')).toBeTruthy();
    const row = screen.getByTestId('queue-sync-run');
    expect(within(row).getByLabelText('sync-run jobs by state')).toBeTruthy();
    expect(within(row).getByText('5 min')).toBeTruthy();
    expect(within(row).getByText('2').getAttribute('style') ?? '').toMatch(/red/);
    expect(within(screen.getByTestId('queue-drift-check')).getByText('No jobs kept')).toBeTruthy();
  });

  it('says when the queues cannot be read', async () => {
    renderWith(
      {
        statusCode: 403,
        timestamp: '2026-11-27T00:00:00Z',
        path: '/rest/debug/queues',
        message: 'Forbidden',
        response: { userFacingMessage: 'Staff only.' },
      },
      403,
    );
    expect(await screen.findByText('Could not load the queues')).toBeTruthy();
  });
});
