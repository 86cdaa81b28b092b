import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SideSetup } from './side-setup';

afterEach(() => vi.unstubAllGlobals());

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const airtable = {
  displayName: 'Airtable',
  connectorType: 'airtable',
  auth: { type: 'connection_items', requiredItems: [] },
  requiredBaseExtras: [],
  isInBeta: false,
  available: true,
  unavailableReason: null,
};
const blendedConnection = {
  id: 'cb',
  type: 'blended',
  name: 'Blended tables',
  status: 'ok',
  brokenReason: null,
  connectionItems: {},
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};

function renderSide(blended: unknown[]) {
  const calls: { key: string; body: unknown }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const key = `${init?.method ?? 'GET'} ${url}`;
      calls.push({ key, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      if (key === 'GET /rest/connector-info') return json([airtable]);
      if (key === 'GET /rest/external-connections?skip=0&take=100&type=blended')
        return json({ items: blended, total: blended.length, skip: 0, take: 100 });
      if (key === 'PATCH /rest/external-connections/cb/fetch-base-previews')
        return json({ basePreviews: [{ remoteId: 'blended', name: 'Blended tables' }] });
      if (key === 'POST /rest/external-bases') return json({ id: 'sync-1' }, 201);
      return json({ statusCode: 404, message: 'Not found', response: {} }, 404);
    }),
  );
  const coreBase = { id: 'sync-1', leftExternalBase: null, rightExternalBase: null } as unknown as CoreBase;
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <SideSetup coreBase={coreBase} side="left" />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

async function options(label: string) {
  const input = (await screen.findAllByLabelText(label)).find(
    (e) => e.tagName === 'INPUT',
  ) as HTMLInputElement;
  fireEvent.click(input);
  const listbox = await waitFor(() => {
    const id = input.getAttribute('aria-controls');
    const el = id ? document.getElementById(id) : null;
    if (!el) throw new Error('the options did not open');
    return el;
  });
  return within(listbox);
}

describe('blended tables in the sync setup', () => {
  it('offers the base "Blended tables" as an app once the user has a blended table, and attaches it', async () => {
    const calls = renderSide([blendedConnection]);
    const apps = await options('App');
    await waitFor(() => apps.getByRole('option', { name: 'Blended tables (beta)', hidden: true }));
    fireEvent.click(apps.getByRole('option', { name: 'Blended tables (beta)', hidden: true }));
    // No form to make a blended connection: Lockstep makes it.
    expect(await screen.findByText(/Lockstep made this connection/)).toBeTruthy();
    expect(screen.queryByText('Connect Blended tables')).toBeNull();
    const existing = await options('Use an existing connection');
    await waitFor(() => existing.getByRole('option', { name: 'Blended tables', hidden: true }));
    fireEvent.click(existing.getByRole('option', { name: 'Blended tables', hidden: true }));
    await waitFor(() => expect(calls.some((c) => c.key === 'POST /rest/external-bases')).toBe(true));
    expect(calls.find((c) => c.key === 'POST /rest/external-bases')?.body).toMatchObject({
      type: 'blended',
      remoteId: 'blended',
      externalConnectionId: 'cb',
      side: 'left',
    });
  }, 30_000);

  it('does not offer it to a user without blended tables', async () => {
    renderSide([]);
    const apps = await options('App');
    await waitFor(() => apps.getByRole('option', { name: 'Airtable', hidden: true }));
    expect(apps.queryByRole('option', { name: 'Blended tables (beta)', hidden: true })).toBeNull();
  });
});
