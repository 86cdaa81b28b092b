import { Anchor, Button, Card, Group, Menu, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import type { SyncLogExport } from './run-view-types';

const READY = 'COMPLETED';
const FINISHED = new Set([READY, 'FAILED', 'CANCELLED']);

function useExports(coreBaseId: string) {
  return useQuery({
    queryKey: ['sync-log-exports', coreBaseId],
    queryFn: async () =>
      (await api<{ items: SyncLogExport[] }>(`/rest/core-bases/${coreBaseId}/sync-log-exports`)).items,
    // An export that is still being written is polled until it is ready.
    refetchInterval: (q) => (q.state.data?.some((e) => !FINISHED.has(e.status)) ? 2000 : false),
  });
}

/**
 * Saves an export as a file. The download needs the Bearer token, so it goes through api() and is
 * handed to the browser as a blob rather than as a plain link.
 */
async function download(item: SyncLogExport) {
  const body = await api<unknown>(item.downloadPath);
  const text = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  const blob = new Blob([text], { type: item.format === 'csv' ? 'text/csv' : 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `lockstep-operations-${item.coreBaseId}-${item.id}.${item.format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** The Export menu of a sync's operations: a new CSV or JSON export of every write. */
export function OperationsExportButton({ coreBaseId }: { coreBaseId: string }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (format: 'csv' | 'json') =>
      api<SyncLogExport>(`/rest/core-bases/${coreBaseId}/sync-log-exports`, {
        method: 'POST',
        body: { format },
      }),
    onSuccess: (e) => {
      showSuccess(
        e.status === READY
          ? `The ${e.format.toUpperCase()} export is ready (${(e.rowCount ?? 0).toLocaleString()} rows).`
          : `The ${e.format.toUpperCase()} export is being prepared.`,
      );
      return client.invalidateQueries({ queryKey: ['sync-log-exports', coreBaseId] });
    },
    onError: (e) => showError(e, 'Could not create the export'),
  });
  return (
    <Menu position="bottom-end">
      <Menu.Target>
        <Button variant="default" loading={create.isPending}>
          Export
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>Every write of this sync</Menu.Label>
        <Menu.Item onClick={() => create.mutate('csv')}>Export as CSV</Menu.Item>
        <Menu.Item onClick={() => create.mutate('json')}>Export as JSON</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

/** A sync's recent exports with a download link once each is ready; nothing when there are none. */
export function OperationsExportList({ coreBaseId }: { coreBaseId: string }) {
  const exports = useExports(coreBaseId);
  const [all, setAll] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  if (exports.error)
    return (
      <Text size="sm" c="red">
        Could not load the exports.
      </Text>
    );
  const items = exports.data ?? [];
  if (items.length === 0) return null;
  const shown = all ? items : items.slice(0, 3);
  return (
    <Card withBorder padding="sm">
      <Group justify="space-between" mb={4}>
        <Text fw={600} size="sm">
          Exports
        </Text>
        {items.length > 3 ? (
          <Button variant="subtle" size="compact-xs" onClick={() => setAll((v) => !v)}>
            {all ? 'Show fewer' : `Show all ${items.length}`}
          </Button>
        ) : null}
      </Group>
      <Table fz="sm" verticalSpacing={4}>
        <Table.Tbody>
          {shown.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td>{new Date(e.createdAt).toLocaleString()}</Table.Td>
              <Table.Td>{e.format.toUpperCase()}</Table.Td>
              <Table.Td>{e.rowCount === null ? '-' : `${e.rowCount.toLocaleString()} rows`}</Table.Td>
              <Table.Td ta="right">
                {e.status === READY ? (
                  <Anchor
                    component="button"
                    type="button"
                    size="sm"
                    disabled={busy === e.id}
                    onClick={async () => {
                      setBusy(e.id);
                      try {
                        await download(e);
                      } catch (error) {
                        showError(error, 'Could not download the export');
                      } finally {
                        setBusy(null);
                      }
                    }}
                  >
                    {busy === e.id ? 'Downloading…' : 'Download'}
                  </Anchor>
                ) : (
                  <Text size="sm" c="dimmed">
                    {e.status.toLowerCase()}
                  </Text>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
