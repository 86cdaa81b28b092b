import { fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { paged, renderSyncPage } from '../test/dev-views-fixture';
import { TraceLogsPage } from './trace-logs-page';

const readEvent = {
  id: 'ev-1',
  coreBaseId: 'sync-1',
  traceId: 'log-1',
  parentId: null,
  event: 'read',
  data: {
    tableMappingId: 'map-1',
    left: { table: 'contacts', records: 3, changed: { email_addr: 'ada@example.com' } },
    right: { table: 'subscribers', records: 2 },
  },
  createdAt: '2026-01-03T10:00:00Z',
};

const renderPage = () =>
  renderSyncPage('/syncs/:id/trace-logs', '/syncs/sync-1/trace-logs', <TraceLogsPage />, {
    '/rest/trace-log/sync-1?': paged([readEvent]),
  });

afterEach(() => vi.unstubAllGlobals());

describe('trace logs page', () => {
  it('labels an event: fields by column name, sides by base name, tables by name, time as a moment', async () => {
    const { container } = renderPage();
    expect(await screen.findByText('Email')).toBeTruthy();
    expect(screen.queryByText(/email_addr/)).toBeNull();
    expect(screen.getByText('CRM')).toBeTruthy();
    expect(screen.getByText('Newsletter')).toBeTruthy();
    expect(screen.queryByText('left')).toBeNull();
    expect(screen.getByText('Contacts ⇄ Subscribers')).toBeTruthy();
    expect(screen.getByText('Contacts')).toBeTruthy();
    // Formatted in the user's locale; the stored instant stays machine-readable.
    expect(container.querySelector('time[datetime="2026-01-03T10:00:00Z"]')).toBeTruthy();
  });

  it('shows the raw JSON only once asked for', async () => {
    renderPage();
    await screen.findByText('Email');
    expect(screen.queryByText(/"email_addr": "ada@example.com"/)).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Show raw JSON' }));
    expect(await screen.findByText(/"email_addr": "ada@example.com"/)).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Hide raw JSON' }).getAttribute('aria-expanded')).toBe('true');
  });
});
