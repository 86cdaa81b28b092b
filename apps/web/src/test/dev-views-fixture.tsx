import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { vi } from 'vitest';

const column = (remoteId: string, name: string) => ({
  id: `col-${remoteId}`,
  remoteId,
  name,
  fieldType: 'text',
  readOnly: false,
  options: {},
});
const base = (
  side: 'left' | 'right',
  name: string,
  table: string,
  tableName: string,
  columnId: string,
  columnName: string,
) => ({
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
    { id: `${side}-t`, remoteId: table, name: tableName, externalColumns: [column(columnId, columnName)] },
  ],
});

/** A sync of CRM contacts (email_addr: "Email") with Newsletter subscribers (mail: "Mail address"). */
export const sync = {
  id: 'sync-1',
  name: 'Contacts sync',
  pinned: false,
  syncState: 'on',
  configExtras: {},
  lastSyncTime: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  leftExternalBase: base('left', 'CRM', 'contacts', 'Contacts', 'email_addr', 'Email'),
  rightExternalBase: base('right', 'Newsletter', 'subscribers', 'Subscribers', 'mail', 'Mail address'),
  mappings: {
    tableMappings: [
      {
        id: 'map-1',
        leftTableId: 'left-t',
        rightTableId: 'right-t',
        syncDirection: 'both',
        filter: null,
        createdAt: '2026-01-01T00:00:00Z',
        updatedAt: '2026-01-01T00:00:00Z',
        columnMappings: [
          { id: 'fm-1', leftColumnId: 'col-email_addr', rightColumnId: 'col-mail', syncDirection: 'both' },
        ],
        matchOnFieldId: null,
        matchOnSecondaryFieldId: null,
        conflictWinnerSide: 'left',
        conflictReview: false,
        deleteProtection: false,
      },
    ],
  },
};

export const paged = <T,>(items: T[]) => ({ items, total: items.length, skip: 0, take: 20 });

/** Renders one sync page at `url`; fetch answers from `answers` by URL prefix, the sync included. */
export function renderSyncPage(path: string, url: string, page: ReactNode, answers: Record<string, unknown>) {
  const all: Record<string, unknown> = { '/rest/core-bases/sync-1': sync, ...answers };
  vi.stubGlobal(
    'fetch',
    vi.fn(async (requested: string) => {
      const prefix = Object.keys(all).find((p) => requested.startsWith(p));
      if (prefix) return new Response(JSON.stringify(all[prefix]));
      return new Response(JSON.stringify({ statusCode: 404, message: 'Not found', response: {} }), {
        status: 404,
      });
    }),
  );
  const router = createMemoryRouter([{ path, element: page }], { initialEntries: [url] });
  return render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <RouterProvider router={router} />
      </MantineProvider>
    </QueryClientProvider>,
  );
}
