import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BlendedTablesPage } from './blended-tables-page';

type Handler = (init: RequestInit | undefined) => Response;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const envelope = (status: number, path: string, text: string) =>
  json(
    {
      statusCode: status,
      timestamp: '2026-01-01T00:00:00Z',
      path,
      message: text,
      response: { userFacingMessage: text },
    },
    status,
  );

let calls: { key: string; body: unknown }[] = [];
function renderWith(routes: Record<string, Handler>) {
  calls = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const key = `${init?.method ?? 'GET'} ${url}`;
      calls.push({ key, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      const handler = routes[key];
      if (!handler) return envelope(404, url, `no route ${key}`);
      return handler(init);
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <BlendedTablesPage />
      </MantineProvider>
    </QueryClientProvider>,
  );
}
afterEach(() => vi.unstubAllGlobals());

/** Chooses an option of a Mantine Select found by its label. */
async function pick(label: string, option: string) {
  const input = (await screen.findAllByLabelText(label)).find(
    (e) => e.tagName === 'INPUT',
  ) as HTMLInputElement;
  await waitFor(() => expect(input.disabled).toBe(false));
  fireEvent.click(input);
  const listbox = await waitFor(() => {
    const id = input.getAttribute('aria-controls');
    const el = id ? document.getElementById(id) : null;
    if (!el) throw new Error('the options did not open');
    return el;
  });
  await waitFor(() => within(listbox).getByRole('option', { name: option, hidden: true }));
  const offered = within(listbox)
    .getAllByRole('option', { hidden: true })
    .map((o) => o.textContent);
  fireEvent.click(within(listbox).getByRole('option', { name: option, hidden: true }));
  return offered;
}

const conn = (id: string, name: string, type = 'postgresql') => ({
  id,
  type,
  name,
  status: 'ok',
  brokenReason: null,
  connectionItems: {},
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
});
const sources = [
  { connectionId: 'c1', baseRemoteId: 'public', tableRemoteId: 'public.people', name: 'people (EU)' },
  { connectionId: 'c2', baseRemoteId: 'app1', tableRemoteId: 'app1/tbl1', name: 'Contacts' },
];
const proposal = {
  name: 'people (blended)',
  sources,
  defaultSource: 0,
  fields: [
    {
      name: 'email',
      type: 'email',
      sourceFields: ['email', 'fldEmail'],
      options: {},
      readOnly: false,
      reasons: ['email'],
    },
    {
      name: 'name',
      type: 'text',
      sourceFields: ['name', 'fldName'],
      options: {},
      readOnly: false,
      reasons: ['name'],
    },
    {
      name: 'Notes',
      type: 'text',
      sourceFields: [null, 'fldNotes'],
      options: {},
      readOnly: false,
      reasons: ['notes'],
    },
  ],
  sourceFields: [
    [
      { remoteId: 'email', name: 'email', type: 'email' },
      { remoteId: 'name', name: 'name', type: 'text' },
    ],
    [
      { remoteId: 'fldEmail', name: 'Email', type: 'email' },
      { remoteId: 'fldName', name: 'Name', type: 'text' },
      { remoteId: 'fldNotes', name: 'Notes', type: 'text' },
    ],
  ],
};
const saved = {
  id: '7d0c3b7e-0000-4000-8000-000000000001',
  name: 'Everyone',
  sources,
  defaultSource: 0,
  fields: [],
  connectionId: 'cb',
  usedBySyncs: 1,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};

describe('BlendedTablesPage', () => {
  it('chooses sources, edits the proposed fields, previews the rows with their origin and saves', async () => {
    let list: unknown[] = [];
    renderWith({
      'GET /rest/blended-tables': () => json({ items: list }),
      'GET /rest/external-connections?skip=0&take=100': () =>
        json({
          items: [
            conn('c1', 'EU database'),
            conn('c2', 'Airtable', 'airtable'),
            conn('cb', 'Blended tables', 'blended'),
          ],
          total: 3,
          skip: 0,
          take: 100,
        }),
      'PATCH /rest/external-connections/c1/fetch-base-previews': () =>
        json({ basePreviews: [{ remoteId: 'public', name: 'public' }] }),
      'PATCH /rest/external-connections/c2/fetch-base-previews': () =>
        json({ basePreviews: [{ remoteId: 'app1', name: 'CRM' }] }),
      'POST /rest/api-import/target-tables': (init) => {
        const body = JSON.parse(String(init?.body));
        return json({
          tables:
            body.connectionId === 'c1'
              ? [{ remoteId: 'public.people', name: 'people', fields: [] }]
              : [{ remoteId: 'app1/tbl1', name: 'Contacts', fields: [] }],
        });
      },
      'POST /rest/blended-tables/generate-config': () => json(proposal),
      'POST /rest/blended-tables/preview': () =>
        json({
          fields: [
            { id: 'f1', name: 'Email', type: 'email' },
            { id: 'source', name: 'Source', type: 'single_select' },
          ],
          rows: [
            {
              id: '0:1',
              source: 'people (EU)',
              sourceIndex: 0,
              fields: { f1: 'ana@eu.test', source: 'people (EU)' },
            },
            {
              id: '1:rec1',
              source: 'Contacts',
              sourceIndex: 1,
              fields: { f1: 'cy@at.test', source: 'Contacts' },
            },
          ],
        }),
      'POST /rest/blended-tables': () => {
        list = [saved];
        return json(saved, 201);
      },
    });
    expect(await screen.findByText('No blended tables yet')).toBeTruthy();
    // The blended connection itself is not offered as a source.
    expect(await pick('Source 1: connection', 'EU database')).toEqual(['EU database', 'Airtable']);
    await pick('Source 1: base', 'public');
    await pick('Source 1: table', 'people');
    await pick('Source 2: connection', 'Airtable');
    await pick('Source 2: base', 'CRM');
    await pick('Source 2: table', 'Contacts');
    fireEvent.click(screen.getByText('Propose fields'));
    const fields = await screen.findByTestId('blended-fields');
    expect(calls.find((c) => c.key === 'POST /rest/blended-tables/generate-config')?.body).toEqual({
      sources: sources.map(({ name: _n, ...s }) => s),
    });
    // Rename one field, drop another.
    fireEvent.change(within(fields).getByLabelText('Name of field 1'), { target: { value: 'Email' } });
    fireEvent.click(within(fields).getByLabelText('Keep Notes'));
    // Re-pair: name no longer comes from the EU table.
    await pick('name in people (EU)', '(none)');
    fireEvent.click(screen.getByText('Preview'));
    const preview = await screen.findByTestId('blended-preview');
    expect(within(preview).getByText('cy@at.test')).toBeTruthy();
    expect(within(preview).getAllByText('Contacts').length).toBeGreaterThan(0);
    const previewBody = calls.find((c) => c.key === 'POST /rest/blended-tables/preview')?.body as {
      fields: { name: string }[];
    };
    expect(previewBody.fields.map((f) => f.name)).toEqual(['Email', 'name']);
    fireEvent.click(screen.getByText('Save blended table'));
    const listTable = await screen.findByTestId('blended-list');
    expect(within(listTable).getByText('Everyone')).toBeTruthy();
    expect(calls.find((c) => c.key === 'POST /rest/blended-tables')?.body).toMatchObject({
      name: 'people (blended)',
      defaultSource: 0,
      sources,
      fields: [
        { name: 'Email', sourceFields: ['email', 'fldEmail'] },
        { name: 'name', sourceFields: [null, 'fldName'] },
      ],
    });
  }, 30_000);

  it('shows why a delete was refused', async () => {
    renderWith({
      'GET /rest/blended-tables': () => json({ items: [saved] }),
      'GET /rest/external-connections?skip=0&take=100': () =>
        json({ items: [], total: 0, skip: 0, take: 100 }),
      [`DELETE /rest/blended-tables/${saved.id}`]: () =>
        envelope(
          409,
          `/rest/blended-tables/${saved.id}`,
          'This blended table is used by a sync. Remove its table mapping first, then delete it.',
        ),
    });
    const listTable = await screen.findByTestId('blended-list');
    expect(within(listTable).getByText('people (EU), Contacts')).toBeTruthy();
    expect(await screen.findByText(/Connect an app first/)).toBeTruthy();
    fireEvent.click(within(listTable).getByText('Delete'));
    expect((await screen.findByRole('alert')).textContent).toMatch(/used by a sync/);
  });

  it('says when the blended tables cannot be loaded', async () => {
    renderWith({
      'GET /rest/blended-tables': () => envelope(500, '/rest/blended-tables', 'Something went wrong.'),
    });
    expect(await screen.findByText('Could not load your blended tables')).toBeTruthy();
  });
});
