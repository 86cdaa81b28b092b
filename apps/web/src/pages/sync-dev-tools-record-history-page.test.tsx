import { fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { paged, renderSyncPage } from '../test/dev-views-fixture';
import { SyncDevToolsRecordHistoryPage } from './sync-dev-tools-record-history-page';

const record = {
  id: 'rec-1',
  coreBaseId: 'sync-1',
  tableMappingId: 'map-1',
  leftRemoteId: 'L-1',
  rightRemoteId: 'R-1',
  // The two sides hold the address in different case, so each is shown with its side.
  shadow: { 'fm-1': { l: 'ada@example.com', r: 'ADA@example.com' } },
  shadowVersion: 2,
  syncDisabled: false,
  createdAt: '2026-01-02T09:00:00Z',
  updatedAt: '2026-01-03T10:00:00Z',
};
const write = {
  id: 'h-1',
  syncLogId: 'log-1',
  side: 'left',
  operation: 'update',
  remoteId: 'L-1',
  before: { email_addr: 'ada@old.example.com' },
  after: { email_addr: 'ada@example.com' },
  recordCount: 1,
  createdAt: '2026-01-03T10:00:00Z',
};

const renderPage = () =>
  renderSyncPage(
    '/syncs/:id/dev-tools/record-history',
    '/syncs/sync-1/dev-tools/record-history?record=rec-1',
    <SyncDevToolsRecordHistoryPage />,
    {
      '/rest/core-meta-records/sync-1/search?': paged([record]),
      '/rest/core-meta-records/debug/history?': paged([write]),
    },
  );

afterEach(() => vi.unstubAllGlobals());

describe('record history page', () => {
  it("names a record's values by the columns they pair and each side's value by its base", async () => {
    renderPage();
    expect(await screen.findByText('Email ⇄ Mail address')).toBeTruthy();
    expect(screen.queryByText(/fm-1/)).toBeNull();
    expect(screen.getByText(/CRM: ada@example\.com\s+Newsletter: ADA@example\.com/)).toBeTruthy();
  });

  it("shows a write's raw JSON only once asked for", async () => {
    renderPage();
    const history = (await screen.findByText('Open the run')).closest('tr') as HTMLElement;
    expect(screen.queryByText(/"syncLogId": "log-1"/)).toBeNull();
    fireEvent.click(within(history).getByRole('button', { name: 'Show raw JSON' }));
    expect(await within(history).findByText(/"syncLogId": "log-1"/)).toBeTruthy();
  });
});
