import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HubSpotWebhookSetup } from './hubspot-webhook-setup';

const base = (id: string, type: string, name: string) => ({
  id,
  type,
  name,
  externalConnectionId: `conn-${type}`,
});
const sync = (left: string) =>
  ({
    id: 'sync-1',
    leftExternalBase: base('base-left', left, 'HubSpot account 1'),
    rightExternalBase: base('base-right', 'postgresql', 'CRM'),
  }) as unknown as CoreBase;

function renderSetup(s: CoreBase, answer: () => Response) {
  const calls: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      calls.push(url);
      return answer();
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MantineProvider>
        <HubSpotWebhookSetup sync={s} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe('HubSpot webhook setup', () => {
  it("shows the HubSpot base's webhook address and the subscriptions to make", async () => {
    const calls = renderSetup(
      sync('hubspot'),
      () => new Response(JSON.stringify({ webhookUrl: 'https://lockstep.example/webhooks/hubspot/c/k' })),
    );
    expect(await screen.findByText('https://lockstep.example/webhooks/hubspot/c/k')).toBeTruthy();
    expect(screen.getByText(/client secret/)).toBeTruthy();
    expect(calls).toEqual(['/rest/external-bases/base-left/webhooks/debug']);
  });

  it('says when the address cannot be loaded', async () => {
    renderSetup(
      sync('hubspot'),
      () =>
        new Response(
          JSON.stringify({
            statusCode: 500,
            message: 'boom',
            response: { userFacingMessage: 'Server error' },
          }),
          { status: 500 },
        ),
    );
    expect(await screen.findByText('Could not load the webhook address')).toBeTruthy();
  });

  it('shows nothing for a sync without a HubSpot side', () => {
    const calls = renderSetup(sync('notion'), () => new Response('{}'));
    expect(screen.queryByText('HubSpot webhooks')).toBeNull();
    expect(calls).toEqual([]);
  });
});
