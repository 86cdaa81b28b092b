import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeveloperPage } from './developer-page';

type Handler = (init: RequestInit | undefined) => { status?: number; body: unknown };
const calls: { method: string; path: string; body: unknown }[] = [];

/** A fetch answering by "METHOD path" (query string included). */
function renderWith(routes: Record<string, Handler>) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      calls.push({ method, path: input, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      const handler = routes[`${method} ${input}`];
      if (!handler)
        return new Response(JSON.stringify({ statusCode: 404, message: 'no route' }), { status: 404 });
      const { status = 200, body } = handler(init);
      return new Response(JSON.stringify(body), { status });
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <DeveloperPage />
      </MantineProvider>
    </QueryClientProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  calls.length = 0;
});

const token = {
  id: 't1',
  name: 'CI export',
  scopes: ['read'],
  prefix: 'lst_abcdefgh',
  createdAt: '2026-11-27T10:00:00.000Z',
  lastUsedAt: null,
};
const hook = {
  id: 'w1',
  url: 'https://example.com/hooks',
  events: ['sync.run.finished'],
  paused: false,
  createdAt: '2026-11-27T10:00:00.000Z',
};

describe('DeveloperPage', () => {
  it('creates a token, shows it once with a copy button, lists it by prefix and revokes it', async () => {
    let tokens: unknown[] = [];
    renderWith({
      'GET /rest/developer/tokens': () => ({ body: { items: tokens } }),
      'POST /rest/developer/tokens': () => {
        tokens = [token];
        return { status: 201, body: { ...token, token: 'lst_abcdefgh-the-whole-secret' } };
      },
      'DELETE /rest/developer/tokens/t1': () => {
        tokens = [];
        return { body: { revoked: true } };
      },
      'GET /rest/developer/webhooks': () => ({ body: { items: [] } }),
    });
    expect(await screen.findByText('No tokens yet')).toBeTruthy();
    expect(await screen.findByText('No webhooks yet')).toBeTruthy();
    expect(screen.getByTestId('openapi-link').getAttribute('href')).toBe(
      `${window.location.origin}/api/docs/json`,
    );

    fireEvent.change(screen.getByLabelText(/Token name/), { target: { value: 'CI export' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    const shown = await screen.findByTestId('shown-once');
    expect(within(shown).getByText('lst_abcdefgh-the-whole-secret')).toBeTruthy();
    expect(within(shown).getByRole('button', { name: 'Copy' })).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ name: 'CI export', scopes: ['read'] });

    const row = await screen.findByTestId('token-CI export');
    expect(within(row).getByText('lst_abcdefgh…')).toBeTruthy();
    expect(within(row).getByText('Never')).toBeTruthy();
    expect(row.textContent).not.toContain('the-whole-secret');
    fireEvent.click(within(shown).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByText('lst_abcdefgh-the-whole-secret')).toBeNull());

    fireEvent.click(within(row).getByRole('button', { name: 'Revoke' }));
    expect(await screen.findByText('No tokens yet')).toBeTruthy();
    expect(calls.some((c) => c.method === 'DELETE' && c.path === '/rest/developer/tokens/t1')).toBe(true);
  });

  it('adds a webhook with its events, shows the secret once, and opens its delivery log', async () => {
    let hooks: unknown[] = [];
    renderWith({
      'GET /rest/developer/tokens': () => ({ body: { items: [] } }),
      'GET /rest/developer/webhooks': () => ({ body: { items: hooks } }),
      'POST /rest/developer/webhooks': () => {
        hooks = [{ ...hook, events: ['sync.run.finished', 'issue.opened'] }];
        return { status: 201, body: { ...hook, secret: 'whsec_only-once' } };
      },
      'GET /rest/developer/webhooks/w1/deliveries?skip=0&take=20': () => ({
        body: {
          items: [
            {
              id: 'a2',
              eventId: 'e1',
              eventType: 'sync.run.finished',
              attempt: 2,
              statusCode: 200,
              durationMs: 35,
              error: null,
              createdAt: '2026-11-27T10:01:00.000Z',
            },
            {
              id: 'a1',
              eventId: 'e1',
              eventType: 'sync.run.finished',
              attempt: 1,
              statusCode: 500,
              durationMs: 12,
              error: 'The receiver answered 500: boom',
              createdAt: '2026-11-27T10:00:30.000Z',
            },
          ],
          total: 2,
          skip: 0,
          take: 20,
        },
      }),
    });
    fireEvent.change(await screen.findByLabelText(/Receiver URL/), { target: { value: hook.url } });
    fireEvent.click(screen.getByLabelText('An issue opened'));
    fireEvent.click(screen.getByRole('button', { name: 'Add webhook' }));
    const shown = await screen.findByTestId('shown-once');
    expect(within(shown).getByText('whsec_only-once')).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      url: hook.url,
      events: ['sync.run.finished', 'issue.opened'],
    });
    const row = await screen.findByTestId(`webhook-${hook.url}`);
    expect(within(row).getByText('issue.opened')).toBeTruthy();
    fireEvent.click(within(row).getByRole('button', { name: 'Deliveries' }));
    const log = await screen.findByTestId('delivery-log');
    expect(within(log).getByText('The receiver answered 500: boom')).toBeTruthy();
    expect(within(log).getByText('500')).toBeTruthy();
    expect(within(log).getByText('35 ms')).toBeTruthy();
  });

  it('says when the webhooks cannot be loaded, in the API’s words', async () => {
    renderWith({
      'GET /rest/developer/tokens': () => ({ body: { items: [] } }),
      'GET /rest/developer/webhooks': () => ({
        status: 500,
        body: {
          statusCode: 500,
          timestamp: '2026-11-27T00:00:00Z',
          path: '/rest/developer/webhooks',
          message: 'boom',
          response: { userFacingMessage: 'The webhooks are resting.' },
        },
      }),
    });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not load your webhooks');
    expect(alert.textContent).toContain('The webhooks are resting.');
    expect(screen.getByText('No tokens yet')).toBeTruthy();
  });
});
