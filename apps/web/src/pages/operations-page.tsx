import type { SyncLog } from '@lockstep/contract';
import { Badge, Center, Loader, Pagination, Stack, Table, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';

const STATUS_COLOR = { running: 'blue', done: 'green', failed: 'red', cancelled: 'gray' } as const;

/** "create 3, update 1": what one run changed, from its counts. */
function describeCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n.toLocaleString()}`);
  return parts.length > 0 ? parts.join(', ') : 'no changes';
}

/** Sync logs: one row per run of any sync, newest first. */
export function OperationsPage() {
  const [page, setPage] = useState(1);
  const logs = useQuery({
    queryKey: ['sync-logs', page],
    queryFn: () => api<Paged<SyncLog>>(`/rest/sync-logs?${pageQuery(page)}`),
  });

  return (
    <Stack>
      <Title order={2}>Operations</Title>
      {logs.isLoading ? (
        <Center p="xl">
          <Loader aria-label="Loading operations" />
        </Center>
      ) : null}
      {logs.error ? <ErrorAlert error={logs.error} title="Could not load the operations" /> : null}
      {logs.data?.total === 0 ? (
        <EmptyState
          title="No operations yet"
          text="Every run of a sync is logged here, with the records it created, updated or deleted on each side."
        />
      ) : null}
      {logs.data && logs.data.items.length > 0 ? (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Started</Table.Th>
              <Table.Th>Trigger</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Changes</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {logs.data.items.map((log) => (
              <Table.Tr key={log.id}>
                <Table.Td>{new Date(log.startedAt).toLocaleString()}</Table.Td>
                <Table.Td>{log.trigger}</Table.Td>
                <Table.Td>
                  <Badge color={STATUS_COLOR[log.status]} variant="light">
                    {log.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{log.error ?? describeCounts(log.counts)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {logs.data && logs.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(logs.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}
