import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiImportPage, parseHeaders } from './api-import-page';

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

let calls: { url: string; body: unknown }[] = [];
function renderWith(routes: Record<string, Handler>) {
  calls = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      const key = `${init?.method ?? 'GET'} ${url}`;
      const handler = routes[key];
      if (!handler) return envelope(404, url, `no route ${key}`);
      return handler(init);
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <ApiImportPage />
      </MantineProvider>
    </QueryClientProvider>,
  );
}
afterEach(() => vi.unstubAllGlobals());

const config = {
  method: 'GET',
  url: 'https://api.example.com/people',
  headers: {},
  body: null,
  auth: { type: 'none' },
  recordsPath: '$.data[*]',
  pagination: { type: 'page', param: 'page', start: 1, sizeParam: null, size: null },
  idField: 'id',
  fields: [
    { name: 'id', type: 'number' },
    { name: 'email', type: 'email' },
  ],
};
const proposal = {
  config,
  reasons: [
    'records at $.data[*]: the largest list of objects (2) in the response',
    'pagination page: the address pages with ?page=',
  ],
  sampleRecords: [
    { id: 1, email: 'ada@example.com' },
    { id: 2, email: 'bob@example.com' },
  ],
  candidatePaths: [{ path: '$.data[*]', count: 2 }],
};
const saved = {
  id: '7d0c3b7e-0000-4000-8000-000000000001',
  name: 'People from the CRM',
  config,
  target: {
    connectionId: 'c1',
    connectionName: 'Warehouse',
    connectionType: 'postgresql',
    baseRemoteId: 'public',
    tableRemoteId: 'public.people',
  },
  mapping: [{ sourceField: 'id', targetFieldId: 'external_id' }],
  matchTargetFieldId: 'external_id',
  schedule: 'daily',
  maxPages: 100,
  maxRecords: 10000,
  lastRunStatus: 'succeeded',
  lastRunAt: '2026-01-01T10:00:00Z',
  lastRunFinishedAt: '2026-01-01T10:00:05Z',
  lastRunCounts: { fetched: 8, created: 1, updated: 2, unchanged: 5, failed: 0, skipped: 0 },
  lastRunError: null,
  lastTrackingId: null,
  nextRunAt: '2026-01-02T10:00:00Z',
  createdAt: '2026-01-01T09:00:00Z',
  updatedAt: '2026-01-01T10:00:05Z',
};

describe('ApiImportPage', () => {
  it('proposes a configuration from a pasted sample and previews the fetched records', async () => {
    renderWith({
      'GET /rest/api-import': () => json({ items: [] }),
      'POST /rest/api-import/generate-fetch': () => json(proposal),
      'POST /rest/api-import/fetch': () =>
        json({ records: proposal.sampleRecords, totalCount: 2, pagesRead: 2, stoppedBecause: 'last_page' }),
      'GET /rest/external-connections?skip=0&take=100': () =>
        json({ items: [], total: 0, skip: 0, take: 100 }),
    });
    expect(await screen.findByText('No imports yet')).toBeTruthy();
    fireEvent.click(screen.getByText('Paste a sample response'));
    fireEvent.change(screen.getByLabelText('Sample response (JSON)'), {
      target: { value: '{"data":[{"id":1,"email":"ada@example.com"}]}' },
    });
    fireEvent.click(screen.getByText('Propose a configuration'));
    expect(await screen.findByText(/the largest list of objects/)).toBeTruthy();
    expect(calls.find((c) => c.url === '/rest/api-import/generate-fetch')?.body).toEqual({
      sample: '{"data":[{"id":1,"email":"ada@example.com"}]}',
    });
    expect((screen.getByLabelText('Records (JSONPath)') as HTMLInputElement).value).toBe('$.data[*]');
    expect(within(screen.getByTestId('api-import-fields')).getByText('email')).toBeTruthy();
    // A pasted sample has no address: the real one is asked for before fetching.
    const fetchButton = screen.getByText('Fetch preview').closest('button') as HTMLButtonElement;
    expect(fetchButton.disabled).toBe(true);
    fireEvent.change(screen.getByLabelText('URL'), { target: { value: 'https://api.example.com/people' } });
    fireEvent.click(screen.getByText('Fetch preview'));
    expect(await screen.findByText(/2 records over 2 pages, stopped at the last page/)).toBeTruthy();
    const preview = screen.getByTestId('api-import-preview');
    expect(within(preview).getByText('bob@example.com')).toBeTruthy();
    expect(
      (
        calls.find((c) => c.url === '/rest/api-import/fetch')?.body as
          | { config?: { url: string } }
          | undefined
      )?.config?.url,
    ).toBe('https://api.example.com/people');
    // Then the destination step, which says when there is nothing to import into yet.
    expect(await screen.findByText(/Connect an app first/)).toBeTruthy();
  });

  it('lists saved imports with their schedule and last run, and shows errors in the page', async () => {
    renderWith({
      'GET /rest/api-import': () => json({ items: [saved] }),
      'POST /rest/api-import/generate-fetch': () =>
        envelope(
          403,
          '/rest/api-import/generate-fetch',
          'Lockstep cannot connect to 10.0.0.1: it is a private network address.',
        ),
    });
    const card = await screen.findByTestId(`api-import-${saved.id}`);
    expect(within(card).getByText('People from the CRM')).toBeTruthy();
    expect(within(card).getByText('succeeded')).toBeTruthy();
    expect(within(card).getByText(/8 read: 1 created, 2 updated, 5 unchanged/)).toBeTruthy();
    expect((within(card).getByLabelText('Schedule of People from the CRM') as HTMLInputElement).value).toBe(
      'Every day',
    );
    fireEvent.change(screen.getByLabelText('URL'), { target: { value: 'http://10.0.0.1/people' } });
    fireEvent.click(screen.getByText('Propose a configuration'));
    expect((await screen.findByRole('alert')).textContent).toMatch(/private network address/);
  });

  it('says when the saved imports cannot be loaded', async () => {
    renderWith({ 'GET /rest/api-import': () => envelope(500, '/rest/api-import', 'Something went wrong.') });
    expect(await screen.findByText('Could not load your imports')).toBeTruthy();
  });

  it('reads header lines as name and value', () => {
    expect(parseHeaders('X-Api-Key: abc\n\nAccept: application/json\nbroken')).toEqual({
      'X-Api-Key': 'abc',
      Accept: 'application/json',
    });
  });
});
