import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { diffFields } from '../components/change-diff-table';
import { OperationDetailPage } from './operation-detail-page';

const column = (remoteId: string, name: string) => ({
  id: `col-${remoteId}`,
  remoteId,
  name,
  fieldType: 'text',
  readOnly: false,
  options: {},
});
const base = (side: 'left' | 'right', name: string) => ({
  id: `${side}-base`,
  type: 'postgresql',
  name,
  remoteId: 'public',
  coreBaseId: 'sync-1',
  externalConnectionId: 'c',
  side,
  extras: {},
  webhooksEnabled: false,
  connectorInfo: { connectorType: 'postgresql' },
  externalTables: [
    {
      id: `${side}-t`,
      remoteId: 'contacts',
      name: 'contacts',
      externalColumns: [column('name', 'Full name')],
    },
  ],
});
const sync = {
  id: 'sync-1',
  name: 'CRM ⇄ Newsletter',
  pinned: false,
  syncState: 'on',
  configExtras: {},
  lastSyncTime: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  leftExternalBase: base('left', 'CRM'),
  rightExternalBase: base('right', 'Newsletter'),
  mappings: { tableMappings: [] },
};
const entry = (id: string, operation: string, before: unknown, after: unknown) => ({
  id,
  syncLogId: 'log-1',
  coreMetaRecordId: 'rec-1',
  side: 'right',
  operation,
  remoteId: `R-${id}`,
  before,
  after,
  recordCount: 1,
  records: null as { remote: string[]; source: string[] } | null,
  createdAt: '2026-01-03T10:00:01Z',
});
const log = {
  id: 'log-1',
  coreBaseId: 'sync-1',
  trigger: 'schedule',
  status: 'failed',
  counts: { created_right: 1, updated_left: 1, deleted_left: 0 },
  error: 'The newsletter app refused a write.',
  startedAt: '2026-01-03T10:00:00Z',
  finishedAt: '2026-01-03T10:01:05Z',
  entries: {
    items: [
      entry(
        '1',
        'update',
        { name: 'Grace', email: 'g@example.com' },
        { name: 'Grace Hopper', email: 'g@example.com' },
      ),
      entry('2', 'create', null, { name: 'Ada' }),
      // A first sync's chunk: 25 creates logged as one operation.
      {
        ...entry('3', 'create', null, null),
        coreMetaRecordId: null,
        remoteId: null,
        recordCount: 25,
        records: {
          remote: Array.from({ length: 25 }, (_, i) => `new-${i}`),
          source: Array.from({ length: 25 }, (_, i) => `old-${i}`),
        },
      },
    ],
    total: 3,
    skip: 0,
    take: 20,
  },
};

function renderPage(logs: Record<string, object> = { 'log-1': log }, start = 'log-1') {
  const urls: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: { method?: string }) => {
      urls.push(`${init?.method ?? 'GET'} ${url}`.replace(/^GET /, ''));
      if (url === '/rest/sync-logs/log-1/undo' && init?.method === 'POST')
        return new Response(JSON.stringify({ undoRunId: 'undo-1' }), { status: 202 });
      const id = url.match(/^\/rest\/sync-logs\/([^/?]+)\?/)?.[1];
      if (id && logs[id]) return new Response(JSON.stringify(logs[id]));
      if (url.startsWith('/rest/core-bases/sync-1')) return new Response(JSON.stringify(sync));
      return new Response(JSON.stringify({ statusCode: 404, message: 'Not found', response: {} }), {
        status: 404,
      });
    }),
  );
  const router = createMemoryRouter([{ path: '/operations/:id', element: <OperationDetailPage /> }], {
    initialEntries: [`/operations/${start}`],
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return urls;
}

afterEach(() => vi.unstubAllGlobals());

describe('operation detail page', () => {
  it('shows the run, its error and each write with the values before and after, field by field', async () => {
    const urls = renderPage();
    expect(await screen.findByText('The newsletter app refused a write.')).toBeTruthy();
    expect(urls[0]).toBe('/rest/sync-logs/log-1?skip=0&take=20');
    expect(screen.getByText(/^1 created (in|on the) .*, 1 updated (in|on the) /)).toBeTruthy();
    expect(screen.getByText('Changes (3)')).toBeTruthy();

    // Field names come from the sync's schema once it has loaded.
    const renamed = (await screen.findAllByText('Full name'))[0]?.closest('tr') as HTMLElement;
    expect(renamed.getAttribute('data-changed')).toBe('true');
    expect(within(renamed).getByText('Grace').tagName).toBe('DEL');
    expect(within(renamed).getByText('Grace Hopper').tagName).toBe('INS');
    // An unchanged field is listed, not marked as a change.
    const email = screen.getByText('email').closest('tr') as HTMLElement;
    expect(email.hasAttribute('data-changed')).toBe(false);
    expect(within(email).getAllByText('g@example.com')).toHaveLength(2);
    // A create has no before value.
    const created = screen.getByText('Ada').closest('tr') as HTMLElement;
    expect(within(created).getByText('—')).toBeTruthy();
    expect(screen.getAllByText('Newsletter').length).toBeGreaterThan(0);
    // A batch of creates says how many and names each record with the one it was copied from.
    expect(screen.getByText('25 records in one batch')).toBeTruthy();
    expect(screen.getByText(/^Created 25 records/)).toBeTruthy();
    expect(screen.getByText('new-7 ← old-7')).toBeTruthy();
  });
});

describe('undo this run', () => {
  const done = { ...log, status: 'done', error: null, undoneBy: null };
  const undo = {
    ...done,
    id: 'undo-1',
    trigger: 'undo',
    undoOf: 'log-1',
    counts: { restored: 1, held: 1 },
    progress: { done: 2, total: 2 },
    undoResults: [
      {
        entryId: '1',
        side: 'right',
        operation: 'update',
        remoteId: 'R-1',
        outcome: 'restored',
        message: 'Its values before the run were written back.',
      },
      {
        entryId: '2',
        side: 'right',
        operation: 'create',
        remoteId: 'R-2',
        outcome: 'held',
        message: 'It changed since the run: name.',
      },
    ],
    entries: { items: [], total: 0, skip: 0, take: 20 },
  };

  it('asks first, saying what happens in both apps, then undoes as a new run and shows what it restored and held', async () => {
    const urls = renderPage({ 'log-1': done, 'undo-1': undo });
    (await screen.findByRole('button', { name: 'Undo this run' })).click();
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/in both CRM and Newsletter, as a new run/)).toBeTruthy();
    expect(within(dialog).getByText(/Each record it created is deleted/)).toBeTruthy();
    expect(within(dialog).getByText(/is not touched: it is listed as held/)).toBeTruthy();
    expect(urls).not.toContain('POST /rest/sync-logs/log-1/undo');
    within(dialog).getByRole('button', { name: 'Undo this run' }).click();
    expect(await screen.findByText('1 restored, 1 held.', { exact: false }, { timeout: 5000 })).toBeTruthy();
    expect(urls).toContain('POST /rest/sync-logs/log-1/undo');
    expect(screen.getByText('held for you')).toBeTruthy();
    expect(screen.getByText('It changed since the run: name.')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'The run this undoes' }).getAttribute('href')).toBe(
      '/operations/log-1',
    );
  });

  it('offers no second undo of a run already undone: it links to the undo', async () => {
    renderPage({ 'log-1': { ...done, undoneBy: 'undo-1' } });
    expect(await screen.findByText('This run was undone')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Undo this run' })).toBeNull();
  });
});

describe('diffFields', () => {
  it('lists the fields of both images, marks changed ones and those only on one side', () => {
    expect(diffFields({ a: 1, b: [1] }, { b: [1], c: null })).toEqual([
      { field: 'a', hasBefore: true, hasAfter: false, before: 1, after: undefined, changed: true },
      { field: 'b', hasBefore: true, hasAfter: true, before: [1], after: [1], changed: false },
      { field: 'c', hasBefore: false, hasAfter: true, before: undefined, after: null, changed: true },
    ]);
    expect(diffFields(null, null)).toEqual([]);
  });
});
