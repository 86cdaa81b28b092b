import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PauseAllSyncs } from './pause-all-syncs';

function renderButtons() {
  const calls: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      calls.push(url);
      return new Response(JSON.stringify(url.endsWith('pause-all') ? { paused: 3 } : { resumed: 0 }));
    }),
  );
  render(
    <QueryClientProvider client={new QueryClient()}>
      <MantineProvider>
        <Notifications />
        <PauseAllSyncs />
      </MantineProvider>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('PauseAllSyncs', () => {
  it('pauses every sync and says how many; resume says when there was nothing to resume', async () => {
    const calls = renderButtons();
    fireEvent.click(screen.getByRole('button', { name: 'Pause all' }));
    expect(await screen.findByText('3 syncs paused.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Resume all' }));
    expect(await screen.findByText('No sync was paused by Pause all.')).toBeTruthy();
    expect(calls).toEqual(['/rest/core-bases/pause-all', '/rest/core-bases/resume-all']);
  });
});
