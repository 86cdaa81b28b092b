import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitSyncPage } from './git-sync-page';

type Call = { method: string; url: string; body: unknown };
let calls: Call[] = [];

/** fetch answered by path (and method): a function, or a body answered 200. */
function stubApi(routes: Record<string, unknown | ((body: unknown) => { status: number; body: unknown })>) {
  calls = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      const url = String(input);
      const body = init?.body ? JSON.parse(String(init.body)) : undefined;
      calls.push({ method, url, body });
      const key = Object.keys(routes).find((k) => `${method} ${url}`.startsWith(k));
      if (!key)
        return new Response(JSON.stringify({ message: `no stub for ${method} ${url}` }), { status: 500 });
      const answer = routes[key];
      const { status, body: out } =
        typeof answer === 'function'
          ? (answer as (b: unknown) => { status: number; body: unknown })(body)
          : { status: 200, body: answer };
      return new Response(JSON.stringify(out), { status });
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <MemoryRouter>
          <GitSyncPage />
        </MemoryRouter>
      </MantineProvider>
    </QueryClientProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const sync = (id: string, name: string) => ({ id, name });
const gitSync = {
  gitSyncId: 'g1',
  coreBaseId: 's1',
  repository: { kind: 'https', url: 'https://git.example.com/crm.git', hasToken: true, username: null },
  branch: 'main',
  folder: 'lockstep',
  sides: ['left'],
  format: 'csv',
  lastSyncedCommit: 'abcdef1234567',
  lastRun: null,
  createdAt: '2026-11-27T00:00:00Z',
  updatedAt: '2026-11-27T00:00:00Z',
};
const run = (over: object) => ({
  id: 'r1',
  gitSyncId: 'g1',
  kind: 'download',
  status: 'COMPLETED',
  done: 1,
  total: 1,
  message: 'Applied abcdef1: 1 change written',
  baseCommit: 'abcdef1234567',
  commitId: 'abcdef1234567',
  counts: [
    {
      side: 'left',
      table: 'people',
      file: 'left/people.csv',
      records: 3,
      created: 0,
      updated: 1,
      deleted: 0,
    },
  ],
  conflicts: [
    {
      side: 'left',
      table: 'people',
      recordId: '3',
      field: 'name',
      gitValue: 'Git',
      appValue: 'App',
      outcome: 'app_won',
    },
  ],
  problems: [],
  error: null,
  createdAt: '2026-11-27T00:00:00Z',
  startedAt: null,
  finishedAt: null,
  ...over,
});
const envelope = (status: number, text: string) => ({
  status,
  body: {
    statusCode: status,
    timestamp: '2026-11-27T00:00:00Z',
    path: '/rest',
    message: text,
    response: { userFacingMessage: text },
  },
});

describe('GitSyncPage', () => {
  it('lists each sync with its git sync and runs, and Upload starts a run', async () => {
    stubApi({
      'GET /rest/core-bases': { items: [sync('s1', 'CRM'), sync('s2', 'Newsletter')], total: 2 },
      'GET /rest/git-sync/g1/runs': { items: [run({})], total: 1, skip: 0, take: 10 },
      'GET /rest/git-sync': { items: [gitSync] },
      'POST /rest/git-sync/g1/run-upload': () => ({
        status: 202,
        body: run({ id: 'r2', kind: 'upload', status: 'PENDING' }),
      }),
    });
    const card = await screen.findByTestId('git-sync-s1');
    expect(within(card).getByText(/https:\/\/git\.example\.com\/crm\.git/)).toBeTruthy();
    const row = await within(card).findByTestId('run-r1');
    expect(within(row).getByText('Download')).toBeTruthy();
    expect(within(row).getByText('completed')).toBeTruthy();
    expect(within(row).getByText('abcdef1')).toBeTruthy();
    expect(within(row).getByText(/left\/people\.csv: 3 rows \(0 new, 1 changed, 0 deleted\)/)).toBeTruthy();
    expect(within(row).getByText(/Conflict on people 3 \(name\).*app won/)).toBeTruthy();
    expect((within(card).getByRole('button', { name: 'Cancel' }) as HTMLButtonElement).disabled).toBe(true);
    // The sync without a git sync offers to set one up.
    expect(within(screen.getByTestId('git-sync-s2')).getByRole('button', { name: 'Set up' })).toBeTruthy();

    fireEvent.click(within(card).getByRole('button', { name: 'Upload' }));
    await waitFor(() =>
      expect(calls.some((c) => c.method === 'POST' && c.url === '/rest/git-sync/g1/run-upload')).toBe(true),
    );
  });

  it('offers Cancel while a run is in progress, with its progress, and holds the other runs back', async () => {
    stubApi({
      'GET /rest/core-bases': { items: [sync('s1', 'CRM')], total: 1 },
      'GET /rest/git-sync/g1/runs': {
        items: [run({ status: 'IN_PROGRESS', done: 1, total: 3, conflicts: [], counts: [] })],
        total: 1,
        skip: 0,
        take: 10,
      },
      'GET /rest/git-sync': { items: [gitSync] },
      'POST /rest/git-sync/g1/cancel': run({ status: 'CANCELLED' }),
    });
    const card = await screen.findByTestId('git-sync-s1');
    expect(await within(card).findByText('1/3')).toBeTruthy();
    const cancel = within(card).getByRole('button', { name: 'Cancel' }) as HTMLButtonElement;
    expect(cancel.disabled).toBe(false);
    expect((within(card).getByRole('button', { name: 'Upload' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(cancel);
    await waitFor(() =>
      expect(calls.some((c) => c.method === 'POST' && c.url === '/rest/git-sync/g1/cancel')).toBe(true),
    );
  });

  it('sets up a git sync from the form, and shows the server’s refusal', async () => {
    let answer: { status: number; body: unknown } = envelope(
      400,
      'A repository on this server’s disk can be used on a local server only.',
    );
    stubApi({
      'GET /rest/core-bases': { items: [sync('s2', 'Newsletter')], total: 1 },
      'GET /rest/git-sync': { items: [] },
      'POST /rest/git-sync': () => answer,
    });
    const card = await screen.findByTestId('git-sync-s2');
    fireEvent.click(within(card).getByRole('button', { name: 'Set up' }));
    fireEvent.click(within(card).getByText('Local path (local server)'));
    fireEvent.change(within(card).getByLabelText(/Repository path/), { target: { value: '/srv/data.git' } });
    fireEvent.change(within(card).getByLabelText(/Folder/), { target: { value: 'crm' } });
    fireEvent.click(within(card).getByRole('button', { name: 'Save git sync' }));
    expect(await within(card).findByText(/local server only/)).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      coreBaseId: 's2',
      repository: { kind: 'local', path: '/srv/data.git' },
      branch: 'main',
      folder: 'crm',
      sides: ['left', 'right'],
      format: 'csv',
    });
    answer = { status: 201, body: { ...gitSync, coreBaseId: 's2' } };
    fireEvent.click(within(card).getByRole('button', { name: 'Save git sync' }));
    await waitFor(() => expect(within(card).queryByRole('button', { name: 'Save git sync' })).toBeNull());
  });

  it('shows a loader, then an empty state without syncs', async () => {
    stubApi({ 'GET /rest/core-bases': { items: [], total: 0 }, 'GET /rest/git-sync': { items: [] } });
    expect(screen.getByLabelText('Loading')).toBeTruthy();
    expect(await screen.findByText('No syncs yet')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Create a sync' }).getAttribute('href')).toBe('/syncs/new');
  });

  it('says when the git syncs cannot be loaded', async () => {
    stubApi({
      'GET /rest/core-bases': { items: [], total: 0 },
      'GET /rest/git-sync': () => envelope(503, 'The database is not answering.'),
    });
    expect(await screen.findByText('Could not load the git syncs')).toBeTruthy();
    expect(screen.getByText('The database is not answering.')).toBeTruthy();
  });
});
