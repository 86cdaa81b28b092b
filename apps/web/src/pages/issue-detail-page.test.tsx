import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IssueDetailPage } from './issue-detail-page';

const issue = {
  id: 'e1',
  coreBaseId: 'sync-1',
  coreMetaRecordId: 'rec-1',
  externalConnectionId: null,
  side: 'right',
  remoteId: 'R-42',
  code: 'validation',
  message: 'value too long for type character varying(10)',
  userFacingMessage: 'The name is too long for the newsletter app.',
  details: { column: 'name' },
  status: 'open',
  attempts: 3,
  createdAt: '2026-01-01T10:00:00Z',
  updatedAt: '2026-01-02T10:00:00Z',
};

type Call = { method: string; url: string };

/** The page against a stubbed network: each answer is chosen by method and path. */
function renderIssue(retryAnswer: { status: number; body: unknown }) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      calls.push({ method, url });
      const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
      if (method === 'GET' && url === '/rest/sync-errors/e1') return json(issue);
      if (method === 'POST' && url === '/rest/sync-errors/e1/suggest-fix')
        return json({
          errorId: 'e1',
          source: 'rules',
          title: 'Fix the value',
          steps: ['Shorten the name in the CRM.'],
        });
      if (method === 'POST' && url === '/rest/sync-errors/clear-and-retry/e1')
        return json(retryAnswer.body, retryAnswer.status);
      return json({ statusCode: 404, message: 'Not found', response: {} }, 404);
    }),
  );
  const router = createMemoryRouter([{ path: '/issues/:id', element: <IssueDetailPage /> }], {
    initialEntries: ['/issues/e1'],
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <Notifications />
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe('issue detail page', () => {
  it('shows the issue with its suggested fix, and Retry posts to this issue and says it is queued', async () => {
    const calls = renderIssue({ status: 200, body: { retried: 1, coreBaseIds: ['sync-1'] } });
    expect(await screen.findByText('The name is too long for the newsletter app.')).toBeTruthy();
    expect(screen.getByText('validation')).toBeTruthy();
    expect(screen.getByText('R-42')).toBeTruthy();
    expect(screen.getByText('3')).toBeTruthy();
    expect(await screen.findByText('Shorten the name in the CRM.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText(/One issue is queued for retry/)).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST' && c.url.includes('clear-and-retry'))).toEqual([
      { method: 'POST', url: '/rest/sync-errors/clear-and-retry/e1' },
    ]);
  });

  it("shows the server's reason when the retry is refused", async () => {
    renderIssue({
      status: 402,
      body: {
        statusCode: 402,
        message: 'plan expired',
        response: { userFacingMessage: 'Your plan has expired: choose a plan to retry.', code: 'plan' },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Your plan has expired: choose a plan to retry.')).toBeTruthy();
    expect(screen.getByText('Could not retry the issue')).toBeTruthy();
  });
});
