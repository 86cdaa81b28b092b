import type { CoreBase, DryRunAnswer } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DryRunReview } from './dry-run-review';

const sync = {
  id: 'sync-1',
  syncState: 'on',
  dryRun: true,
  leftExternalBase: { name: 'CRM' },
  rightExternalBase: { name: 'Newsletter' },
} as unknown as CoreBase;

const pair = { tableMappingId: 'm1', leftTable: 'people', rightTable: 'subscribers' };
const donePass = (total: number, counts = { create: 0, update: 0, delete: 0 }) => ({
  id: 'p1',
  status: 'done' as const,
  trigger: 'user',
  error: null,
  progress: { pairs: 1, pairsDone: 1, pages: 1 },
  total,
  tablePairs: [{ ...pair, ...counts }],
  createdAt: '2026-11-27T00:00:00Z',
  startedAt: '2026-11-27T00:00:00Z',
  finishedAt: '2026-11-27T00:00:01Z',
});
const planned: DryRunAnswer = {
  dryRunMode: true,
  pass: donePass(2, { create: 1, update: 1, delete: 0 }),
  next: null,
  writes: {
    total: 2,
    skip: 0,
    take: 20,
    items: [
      {
        id: '1',
        tableMappingId: 'm1',
        side: 'right',
        kind: 'update',
        recordId: 'r-7',
        sourceId: null,
        name: 'ada@example.com',
        fields: [{ fieldId: 'name', field: 'name', before: 'Ada', after: 'Ada Lovelace' }],
        conflicts: [{ field: 'name', left: 'Ada Lovelace', right: 'Ada L.', winner: 'left' }],
      },
      {
        id: '2',
        tableMappingId: 'm1',
        side: 'right',
        kind: 'create',
        recordId: null,
        sourceId: 'l-9',
        name: 'linus@example.com',
        fields: [{ fieldId: 'email', field: 'email', before: null, after: 'linus@example.com' }],
        conflicts: [],
      },
    ],
  },
};

/** The server answers the plan with `answer` (or fails), and 2xx to every action. */
function renderReview(answer: DryRunAnswer | 'error') {
  const calls: { url: string; method: string; body: unknown }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      calls.push({ url, method, body: init?.body ? JSON.parse(String(init.body)) : null });
      if (method === 'GET' && answer === 'error')
        return new Response(
          JSON.stringify({ statusCode: 500, response: { userFacingMessage: 'The plan could not be read.' } }),
          { status: 500 },
        );
      if (method === 'GET') return new Response(JSON.stringify(answer));
      return new Response(JSON.stringify({ queued: true }), { status: 202 });
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <DryRunReview sync={sync} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('DryRunReview', () => {
  it('lists the planned writes grouped by table pair, before -> after per field, with the conflicts decided', async () => {
    renderReview(planned);
    const group = await screen.findByTestId('dry-run-group');
    expect(within(group).getByText('people ⇄ subscribers')).toBeTruthy();
    const rows = within(group).getAllByTestId('dry-run-write');
    expect(rows).toHaveLength(2);
    expect(rows[0]?.textContent).toContain('Update');
    expect(rows[0]?.textContent).toContain('ada@example.com');
    expect(rows[0]?.textContent).toContain('name: Ada → Ada Lovelace');
    expect(rows[0]?.textContent).toContain('in Newsletter · record r-7');
    expect(rows[0]?.textContent).toContain('CRM wins');
    expect(rows[1]?.textContent).toContain('email: (empty) → linus@example.com');
    expect(screen.getByText(/people ⇄ subscribers: 1 to create, 1 to update, 0 to delete/)).toBeTruthy();
    expect(screen.getByText(/writes what you reviewed plus anything that changed since/)).toBeTruthy();
    expect(screen.getByText(/nothing is lost, the changes still wait/)).toBeTruthy();
  });

  it('applies and discards the plan, asks what the next run would do, and switches dry-run mode', async () => {
    const calls = renderReview(planned);
    await screen.findByTestId('dry-run-group');
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() =>
      expect(calls).toContainEqual(
        expect.objectContaining({ url: '/rest/core-bases/sync-1/dry-run/apply', method: 'POST' }),
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Discard' }));
    await waitFor(() =>
      expect(calls).toContainEqual(
        expect.objectContaining({ url: '/rest/core-bases/sync-1/dry-run/discard', method: 'POST' }),
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'What would the next run do?' }));
    await waitFor(() =>
      expect(calls).toContainEqual(
        expect.objectContaining({ url: '/rest/core-bases/sync-1/dry-run', method: 'POST' }),
      ),
    );
    fireEvent.click(screen.getByRole('switch', { name: 'Dry-run mode' }));
    await waitFor(() =>
      expect(calls).toContainEqual({
        url: '/rest/core-bases/sync-1',
        method: 'PATCH',
        body: { dryRun: false },
      }),
    );
  });

  it('filters by kind and pages through the server', async () => {
    const calls = renderReview(planned);
    await screen.findByTestId('dry-run-group');
    fireEvent.click(screen.getByText('Updates'));
    await waitFor(() =>
      expect(
        calls.some((c) => c.method === 'GET' && c.url.includes('kind=update') && c.url.includes('skip=0')),
      ).toBe(true),
    );
  });

  it('says the apps are in step when there is nothing to write', async () => {
    renderReview({ ...planned, pass: donePass(0), writes: { total: 0, skip: 0, take: 20, items: [] } });
    expect(await screen.findByText('Nothing to write: the apps are in step')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Apply' })).toBeNull();
  });

  it('shows a pass in progress, and the error of one that stopped or of the plan that could not load', async () => {
    renderReview({
      ...planned,
      pass: { ...donePass(0), status: 'running', progress: { pairs: 2, pairsDone: 1, pages: 3 } },
      writes: { total: 0, skip: 0, take: 20, items: [] },
    });
    expect(await screen.findByText('Reading your apps: 1 of 2 table pairs done')).toBeTruthy();
    cleanup();
    renderReview({
      ...planned,
      pass: {
        ...donePass(0),
        status: 'failed',
        error: 'The dry pass stopped: PostgreSQL refused the password.',
      },
      writes: { total: 0, skip: 0, take: 20, items: [] },
    });
    expect(await screen.findByText(/PostgreSQL refused the password/)).toBeTruthy();
    cleanup();
    renderReview('error');
    expect(await screen.findByText('The plan could not be read.')).toBeTruthy();
  });
});
