import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IssuesPage } from './issues-page';

const issue = {
  id: 'e1',
  coreBaseId: 'sync-1',
  coreMetaRecordId: null,
  externalConnectionId: null,
  side: 'left',
  remoteId: 'L-1',
  code: 'auth_invalid',
  message: '401',
  userFacingMessage: 'Reconnect the CRM.',
  details: {},
  status: 'open',
  attempts: 1,
  createdAt: '2026-01-01T10:00:00Z',
  updatedAt: '2026-01-02T10:00:00Z',
};

const cause = {
  coreBaseId: 'sync-1',
  code: 'validation',
  side: 'left',
  tableMappingId: null as string | null,
  userFacingMessage: 'A contact needs a name.',
  count: 58,
  lastSeenAt: '2026-01-02T10:00:00Z',
  remoteIds: ['L-1', 'L-2'],
  records: [
    { remoteId: 'L-1', name: 'Ada Lovelace' },
    { remoteId: 'L-2', name: null },
  ],
};
let causes = [cause];

function renderIssues(initial: string) {
  const calls: { method: string; url: string }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      calls.push({ method, url });
      if (method === 'POST') return new Response(JSON.stringify({ retried: 2, coreBaseIds: ['sync-1'] }));
      if (url.startsWith('/rest/sync-errors/by-cause'))
        return new Response(JSON.stringify({ items: causes, total: causes.length, skip: 0, take: 20 }));
      if (url.startsWith('/rest/core-bases/'))
        return new Response(
          JSON.stringify({
            id: 'sync-1',
            name: 'CRM sync',
            leftExternalBase: { name: 'Demo CRM' },
            rightExternalBase: null,
          }),
        );
      return new Response(JSON.stringify({ items: [issue], total: 1, skip: 0, take: 20 }));
    }),
  );
  const router = createMemoryRouter([{ path: '/issues', element: <IssuesPage /> }], {
    initialEntries: [initial],
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <Notifications />
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return { calls, router };
}

const filtersOf = (search: string) => {
  const raw = new URLSearchParams(search).get('filters');
  return raw === null ? null : JSON.parse(raw);
};
const listCalls = (calls: { method: string; url: string }[]) =>
  calls
    .filter((c) => c.method === 'GET' && c.url.startsWith('/rest/sync-errors?'))
    .map((c) => filtersOf(c.url.slice(c.url.indexOf('?'))));

/** Chooses an option of a Mantine Select found by its label. */
async function pick(label: string, option: string) {
  const input = screen.getAllByLabelText(label).find((e) => e.tagName === 'INPUT') as HTMLInputElement;
  fireEvent.click(input);
  const listbox = await waitFor(() => {
    const id = input.getAttribute('aria-controls');
    const el = id ? document.getElementById(id) : null;
    if (!el) throw new Error('the options did not open');
    return el;
  });
  await waitFor(() => within(listbox).getByRole('option', { name: option, hidden: true }));
  fireEvent.click(within(listbox).getByRole('option', { name: option, hidden: true }));
}

afterEach(() => {
  vi.unstubAllGlobals();
  causes = [cause];
});

describe('issues page', () => {
  it('shows issues by cause first, one row with its count and app, and a row opens its issues', async () => {
    const { router } = renderIssues('/issues');
    const row = await screen.findByTestId('issue-cause');
    expect(row.textContent).toContain('A contact needs a name.');
    expect(row.textContent).toContain('58 records');
    await waitFor(() => expect(row.textContent).toContain('CRM sync · Demo CRM'));
    fireEvent.click(screen.getByRole('button', { name: 'Show' }));
    await waitFor(() =>
      expect(filtersOf(router.state.location.search)).toEqual({
        coreBaseId: 'sync-1',
        code: 'validation',
        side: 'left',
        message: 'A contact needs a name.',
      }),
    );
    expect(new URLSearchParams(router.state.location.search).get('view')).toBe('issues');
    expect(await screen.findByText('A contact needs a name.', { selector: 'b' })).toBeTruthy();
  });

  it('names records by their name where known, and offers the fix of a cause one click away', async () => {
    causes = [{ ...cause, code: 'unmapped_option', tableMappingId: 'tm-1' }];
    renderIssues('/issues');
    const row = await screen.findByTestId('issue-cause');
    expect(row.textContent).toContain('Ada Lovelace, L-2, …');
    const fix = screen.getByRole('link', { name: 'Pair the options' });
    expect(fix.getAttribute('href')).toBe('/syncs/sync-1/table-mappings/tm-1/field-mappings');
  });

  it('narrows by type and by app, naming the app as the sync does, through the filters JSON', async () => {
    const { calls, router } = renderIssues(
      `/issues?view=issues&filters=${encodeURIComponent('{"coreBaseId":"sync-1"}')}`,
    );
    await screen.findByRole('link', { name: 'Reconnect the CRM.' });
    await pick('App', 'Demo CRM');
    await waitFor(() =>
      expect(filtersOf(router.state.location.search)).toEqual({ coreBaseId: 'sync-1', side: 'left' }),
    );
    await pick('Issue type', 'Connection failing');
    await waitFor(() =>
      expect(listCalls(calls).at(-1)).toEqual({ coreBaseId: 'sync-1', side: 'left', code: 'auth_invalid' }),
    );
  });

  it('writes the chosen status into the filters JSON of the URL, keeping the other filters', async () => {
    const { calls, router } = renderIssues(
      `/issues?view=issues&filters=${encodeURIComponent('{"coreBaseId":"sync-1"}')}`,
    );
    const link = await screen.findByRole('link', { name: 'Reconnect the CRM.' });
    expect(link.getAttribute('href')).toBe('/issues/e1');

    fireEvent.click(screen.getByRole('radio', { name: 'Resolved' }));
    await waitFor(() =>
      expect(filtersOf(router.state.location.search)).toEqual({ coreBaseId: 'sync-1', status: 'resolved' }),
    );
    await waitFor(() =>
      expect(listCalls(calls).at(-1)).toEqual({ coreBaseId: 'sync-1', status: 'resolved' }),
    );

    // "All" removes the status again; an empty filter leaves the URL.
    fireEvent.click(screen.getByRole('radio', { name: 'All' }));
    await waitFor(() => expect(filtersOf(router.state.location.search)).toEqual({ coreBaseId: 'sync-1' }));
    expect(listCalls(calls)[0]).toEqual({ coreBaseId: 'sync-1' });
  });

  it("retries the filtered sync's issues and, without a sync filter, all of them", async () => {
    const filtered = renderIssues(`/issues?filters=${encodeURIComponent('{"coreBaseId":"sync-1"}')}`);
    fireEvent.click(await screen.findByRole('button', { name: "Retry this sync's issues" }));
    expect(await screen.findByText(/2 issues are queued for retry/)).toBeTruthy();
    expect(filtered.calls.filter((c) => c.method === 'POST').map((c) => c.url)).toEqual([
      '/rest/sync-errors/clear-and-retry/core-base/sync-1',
    ]);
  });

  it('offers Retry all without a sync filter, and a status filter alone is written as JSON', async () => {
    const { calls, router } = renderIssues('/issues?view=issues');
    fireEvent.click(await screen.findByRole('button', { name: 'Retry all' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'POST').map((c) => c.url)).toEqual([
        '/rest/sync-errors/clear-and-retry-all',
      ]),
    );
    expect(screen.queryByRole('button', { name: "Retry this sync's issues" })).toBeNull();
    fireEvent.click(screen.getByRole('radio', { name: 'Open' }));
    await waitFor(() => expect(filtersOf(router.state.location.search)).toEqual({ status: 'open' }));
  });
});
