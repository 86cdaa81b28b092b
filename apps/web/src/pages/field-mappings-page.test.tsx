import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeDevFlag } from '../lib/dev-mode';
import { FieldMappingsPage } from './field-mappings-page';

const col = (id: string, name: string, fieldType: string, readOnly = false) => ({
  id,
  remoteId: name,
  name,
  fieldType,
  readOnly,
  options: {},
});
const base = (side: 'left' | 'right', table: ReturnType<typeof tableOf>) => ({
  id: `${side}-base`,
  type: 'postgresql',
  name: side === 'left' ? 'CRM' : 'Newsletter',
  remoteId: 'public',
  coreBaseId: 'sync-1',
  externalConnectionId: 'c',
  side,
  extras: {},
  webhooksEnabled: false,
  connectorInfo: { connectorType: 'postgresql' },
  externalTables: [table],
});
const tableOf = (id: string, name: string, columns: ReturnType<typeof col>[]) => ({
  id,
  remoteId: name,
  name,
  externalColumns: columns,
});

function sync(columnMappings: CoreBase['mappings']['tableMappings'][number]['columnMappings']): CoreBase {
  return {
    id: 'sync-1',
    name: 'CRM ⇄ Newsletter',
    setupOrigin: 'base_setup',
    pinned: false,
    syncState: 'off',
    configExtras: {},
    lastSyncTime: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    leftExternalBase: base(
      'left',
      tableOf('lt', 'contacts', [
        col('l-email', 'email', 'email'),
        col('l-active', 'active', 'boolean'),
        col('l-upper', 'name_upper', 'text', true),
      ]),
    ),
    rightExternalBase: base(
      'right',
      tableOf('rt', 'subscribers', [
        col('r-email', 'email', 'text'),
        col('r-since', 'since', 'date'),
        col('r-joined', 'joined', 'date'),
      ]),
    ),
    mappings: {
      tableMappings: [
        {
          id: 'tm-1',
          leftTableId: 'lt',
          rightTableId: 'rt',
          syncDirection: 'both',
          filter: null,
          createdAt: '2026-01-01T00:00:00Z',
          updatedAt: '2026-01-01T00:00:00Z',
          columnMappings,
          matchOnFieldId: 'l-email',
          matchOnSecondaryFieldId: null,
          conflictWinnerSide: 'left',
          conflictReview: false,
          deleteProtection: false,
        },
      ],
    },
  };
}

/** The page against a stubbed network: GET answers the sync, PATCH is recorded and echoed. */
function renderPage(s: CoreBase, automap?: object) {
  const patches: unknown[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (automap && init?.method === 'POST' && url.includes('/ai-field-mapper/'))
        return new Response(JSON.stringify(automap), { status: 200 });
      if (init?.method === 'PATCH') {
        patches.push({ url, body: JSON.parse(String(init.body)) });
        return new Response(JSON.stringify(s), { status: 200 });
      }
      return new Response(JSON.stringify(s), { status: 200 });
    }),
  );
  const router = createMemoryRouter(
    [
      { path: '/syncs/:id/table-mappings/:tableMappingId/field-mappings', element: <FieldMappingsPage /> },
      { path: '/syncs/:id/table-mappings', element: <p>table mappings</p> },
    ],
    { initialEntries: ['/syncs/sync-1/table-mappings/tm-1/field-mappings'] },
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <Notifications />
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return { patches, router };
}

afterEach(() => vi.unstubAllGlobals());

describe('field mappings page', () => {
  it('shows what the engine says of each pair, and saves the pairs with the match field', async () => {
    const { patches, router } = renderPage(
      sync([
        { leftColumnId: 'l-email', rightColumnId: 'r-email', syncDirection: 'both' },
        { leftColumnId: 'l-upper', rightColumnId: 'r-since', syncDirection: 'both' },
        { leftColumnId: 'l-active', rightColumnId: 'r-joined', syncDirection: 'both' },
      ]),
    );
    expect(await screen.findByRole('heading', { name: 'Fields: contacts ⇄ subscribers' })).toBeTruthy();
    // email <-> text converts both ways; a read-only text only sends; a boolean is no date.
    expect(screen.getByText('Compatible')).toBeTruthy();
    expect(screen.getByText('One way →')).toBeTruthy();
    expect(screen.getByText('Unsupported')).toBeTruthy();
    expect(screen.getByText(/1 pair is not supported/)).toBeTruthy();
    const save = screen.getByRole('button', { name: 'Save fields' });
    expect(save.hasAttribute('disabled')).toBe(true);

    // Removing the unsupported pair lets the rest be saved, with email as the match field.
    fireEvent.click(screen.getAllByRole('button', { name: 'Remove' })[2] as HTMLElement);
    expect(save.hasAttribute('disabled')).toBe(false);
    fireEvent.click(save);
    await waitFor(() => expect(patches).toHaveLength(1));
    const body = (patches[0] as { body: { mappings: { tableMappings: Record<string, unknown>[] } } }).body;
    expect(body.mappings.tableMappings[0]).toMatchObject({
      id: 'tm-1',
      matchOnFieldId: 'l-email',
      columnMappings: [
        { leftColumnId: 'l-email', rightColumnId: 'r-email', syncDirection: 'both' },
        { leftColumnId: 'l-upper', rightColumnId: 'r-since', syncDirection: 'both' },
      ],
    });
    await waitFor(() => expect(router.state.location.pathname).toBe('/syncs/sync-1/table-mappings'));
  });

  it('lets an unsupported pair be saved only with the local dev flag, and says so to the server', async () => {
    writeDevFlag('allowUnsupportedMappings', true);
    const { patches } = renderPage(
      sync([{ leftColumnId: 'l-active', rightColumnId: 'r-joined', syncDirection: 'both' }]),
    );
    await screen.findByText('Unsupported');
    expect(screen.getByText(/the local dev flag allows saving them anyway/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save fields' }));
    await waitFor(() => expect(patches).toHaveLength(1));
    expect((patches[0] as { url: string }).url).toContain('allowUnsupported=true');
  });

  it('applies the proposed match field and its second field, and shows why', async () => {
    const s = sync([]);
    const tm = s.mappings.tableMappings[0] as CoreBase['mappings']['tableMappings'][number];
    tm.matchOnFieldId = null;
    const reason = '2 of 2 subscriber emails also exist in contacts; unique on both sides together';
    const { patches } = renderPage(s, {
      proposals: [
        {
          leftColumnId: 'l-email',
          rightColumnId: 'r-email',
          syncDirection: 'both',
          score: 1,
          explanation: '',
        },
        {
          leftColumnId: 'l-upper',
          rightColumnId: 'r-since',
          syncDirection: 'left_to_right',
          score: 0.6,
          explanation: '',
        },
      ],
      matchOnFieldId: 'l-email',
      matchOnSecondaryFieldId: 'l-upper',
      matchReason: reason,
    });
    expect(await screen.findByText(/No match field: the first sync creates every record/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Automap fields' }));
    expect((await screen.findByTestId('match-reason')).textContent).toBe(reason);
    expect(screen.getByText('second match field, with email')).toBeTruthy();
    expect(screen.getByText(/same email and name_upper on both sides are matched/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save fields' }));
    await waitFor(() => expect(patches).toHaveLength(1));
    const body = (patches[0] as { body: { mappings: { tableMappings: Record<string, unknown>[] } } }).body;
    expect(body.mappings.tableMappings[0]).toMatchObject({
      matchOnFieldId: 'l-email',
      matchOnSecondaryFieldId: 'l-upper',
    });
  });
});
