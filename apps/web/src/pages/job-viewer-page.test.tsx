import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { duration, type Job, JobViewerPage } from './job-viewer-page';

const job = (id: string, over: Partial<Job> = {}): Job => ({
  id,
  name: 'sync-run',
  state: 'completed',
  data: { coreBaseId: 'sync-1', trigger: 'schedule' },
  retryCount: 0,
  retryLimit: 2,
  output: null,
  priority: 0,
  singletonKey: 'sync-1',
  createdOn: '2026-11-27T09:00:00Z',
  startAfter: '2026-11-27T09:00:00Z',
  startedOn: '2026-11-27T09:00:01Z',
  completedOn: '2026-11-27T09:00:05Z',
  durationMs: 4000,
  ...over,
});

const page = (items: Job[]) => ({
  items,
  total: items.length,
  skip: 0,
  take: 50,
  coreBaseId: 'sync-1',
  byState: { created: 0, retry: 0, active: 0, completed: 1, cancelled: 0, failed: 1 },
});

let requested: string[] = [];
function renderAt(url: string, answer: (url: string) => Response) {
  requested = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (u: string) => {
      requested.push(u);
      return answer(u);
    }),
  );
  const router = createMemoryRouter([{ path: '/job-viewer', element: <JobViewerPage /> }], {
    initialEntries: [url],
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return router;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('JobViewerPage', () => {
  const jobs = [
    job('j-failed', {
      name: 'refresh-app-webhooks',
      state: 'failed',
      retryCount: 2,
      output: { message: 'The app refused the webhook' },
      durationMs: 1000,
    }),
    job('j-done'),
  ];

  it("lists the base's jobs with state, attempts and duration, charts their timing and opens a job's data and error", async () => {
    renderAt('/job-viewer?externalBaseId=base-1', () => new Response(JSON.stringify(page(jobs))));
    const failed = await screen.findByTestId('job-j-failed');
    expect(requested[0]).toContain('/rest/debug/jobs?externalBaseId=base-1');
    expect(within(failed).getByText('Failed')).toBeTruthy();
    expect(within(failed).getByText('3 of 3')).toBeTruthy();
    expect(within(failed).getByText('1.0 s')).toBeTruthy();
    expect(within(screen.getByTestId('job-j-done')).getByText('4.0 s')).toBeTruthy();
    // The longest job fills the chart; the others are in proportion.
    expect(screen.getByTestId('bar-j-done').style.width).toBe('100%');
    expect(screen.getByTestId('bar-j-failed').style.width).toBe('25%');

    fireEvent.click(within(failed).getByRole('button', { name: 'Details' }));
    const error = await screen.findByLabelText('Error');
    expect(error.textContent).toContain('The app refused the webhook');
    expect(screen.getByLabelText('Data').textContent).toContain('"coreBaseId": "sync-1"');
  });

  it('filters by state through the API', async () => {
    const router = renderAt(
      '/job-viewer?externalBaseId=base-1',
      () => new Response(JSON.stringify(page(jobs))),
    );
    await screen.findByTestId('job-j-failed');
    fireEvent.click(screen.getByText('Failed (1)'));
    await vi.waitFor(() => expect(requested.some((u) => u.includes('state=failed'))).toBe(true));
    expect(router.state.location.search).toContain('state=failed');
  });

  it('asks for an app id when none is given, and says when the jobs cannot be read', async () => {
    renderAt(
      '/job-viewer',
      () =>
        new Response(
          JSON.stringify({
            statusCode: 404,
            timestamp: '2026-11-27T00:00:00Z',
            path: '/rest/debug/jobs',
            message: 'Connected app not found',
            response: { userFacingMessage: 'Connected app was not found.' },
          }),
          { status: 404 },
        ),
    );
    expect(await screen.findByText(/Give the id of one of a sync's connected apps/)).toBeTruthy();
    expect(requested).toEqual([]);
    fireEvent.change(screen.getByLabelText('Connected app id (externalBaseId)'), {
      target: { value: 'someone-elses' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Show jobs' }));
    expect(await screen.findByText('Could not load the jobs')).toBeTruthy();
    expect(screen.getByText('Connected app was not found.')).toBeTruthy();
  });

  it('reads durations in the unit that fits', () => {
    expect(duration(null)).toBe('—');
    expect(duration(250)).toBe('250 ms');
    expect(duration(4000)).toBe('4.0 s');
    expect(duration(30 * 60_000)).toBe('30 min');
  });
});
