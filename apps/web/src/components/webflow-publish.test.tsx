import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebflowPublish } from './webflow-publish';

const base = (id: string, type: string, name: string) => ({
  id,
  type,
  name,
  remoteId: `r-${id}`,
  coreBaseId: 'sync-1',
  externalConnectionId: 'c1',
  side: 'left',
  extras: {},
});
const sync = (leftType: string) =>
  ({
    id: 'sync-1',
    leftExternalBase: base('eb-1', leftType, 'Marketing site'),
    rightExternalBase: base('eb-2', 'postgresql', 'Warehouse'),
  }) as unknown as CoreBase;

function renderPublish(s: CoreBase, answer: () => Response) {
  const calls: { url: string; method: string }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, method: init?.method ?? 'GET' });
      await new Promise((r) => setTimeout(r, 20));
      return answer();
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient()}>
      <MantineProvider>
        <WebflowPublish sync={s} />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('WebflowPublish', () => {
  it('publishes the Webflow site of the sync and says so', async () => {
    const calls = renderPublish(
      sync('webflow'),
      () =>
        new Response(
          JSON.stringify({
            trackingId: 't1',
            kind: 'webflow_publish_site',
            status: 'COMPLETED',
            done: 1,
            total: 1,
            percent: 100,
            message: 'Publishing queued to webflow.io',
            result: null,
            createdAt: '2026-01-01T00:00:00Z',
            updatedAt: '2026-01-01T00:00:00Z',
          }),
          { status: 200 },
        ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Publish site' }));
    expect(await screen.findByText(/Publishing Marketing site/)).toBeTruthy();
    expect(await screen.findByText(/Publishing queued to webflow.io/)).toBeTruthy();
    expect(calls[0]).toEqual({ url: '/rest/connector/webflow/publishSite/eb-1', method: 'POST' });
  });

  it("shows Webflow's refusal (one publish a minute)", async () => {
    renderPublish(
      sync('webflow'),
      () =>
        new Response(
          JSON.stringify({
            statusCode: 429,
            message: 'webflow: rate limited',
            response: {
              userFacingMessage: 'Webflow publishes a site at most once a minute. Try again in 42 seconds.',
            },
          }),
          { status: 429 },
        ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Publish site' }));
    expect(await screen.findByText(/Try again in 42 seconds/)).toBeTruthy();
    expect(screen.getByText('The site was not published')).toBeTruthy();
  });

  it('shows nothing for a sync without Webflow', () => {
    renderPublish(sync('airtable'), () => new Response('{}'));
    expect(screen.queryByRole('button', { name: 'Publish site' })).toBeNull();
  });
});
