import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NotionWebhookSetup } from './notion-webhook-setup';

const base = (type: string, name: string) => ({ type, name, externalConnectionId: `conn-${type}` });
const sync = (left: string) =>
  ({
    id: 'sync-1',
    leftExternalBase: base(left, 'Notion Sandbox'),
    rightExternalBase: base('airtable', 'Airtable'),
  }) as unknown as CoreBase;

function renderSetup(s: CoreBase) {
  const calls: { url: string; method: string }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, method: init?.method ?? 'GET' });
      return new Response(
        JSON.stringify({
          webhookUrl: 'https://lockstep.example/webhooks/notion/c/k',
          expectingUntil: '2026-11-25T12:00:00Z',
        }),
      );
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient()}>
      <MantineProvider>
        <NotionWebhookSetup sync={s} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe('Notion webhook setup', () => {
  it('starts waiting for the verification token on the Notion connection, then shows the address to give Notion', async () => {
    const calls = renderSetup(sync('notion'));
    fireEvent.click(screen.getByRole('button', { name: 'Connect Notion webhooks' }));
    expect(await screen.findByText('https://lockstep.example/webhooks/notion/c/k')).toBeTruthy();
    expect(calls).toEqual([
      { url: '/rest/external-connections/conn-notion/notion-webhook/expect-handshake', method: 'POST' },
    ]);
  });

  it('shows nothing for a sync without a Notion side', () => {
    renderSetup(sync('postgresql'));
    expect(screen.queryByRole('button', { name: 'Connect Notion webhooks' })).toBeNull();
  });
});
