import type { CoreBase, SyncLog } from '@lockstep/contract';
import {
  Anchor,
  Badge,
  Center,
  Group,
  Loader,
  Pagination,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { OperationsExportButton, OperationsExportList } from '../components/operations-export';
import { api } from '../lib/api';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { describeCounts, runOutcome } from '../lib/run-words';
import { useCoreBase } from '../lib/sync-queries';

const STATUS_FILTERS = ['running', 'done', 'failed', 'cancelled'] as const;
type RunStatus = (typeof STATUS_FILTERS)[number];

/** The user's syncs for pickers and names (the first 200, the most a page may hold). */
export function useSyncChoices() {
  return useQuery({
    queryKey: ['core-bases', 'choices'],
    queryFn: () => api<Paged<CoreBase>>('/rest/core-bases?skip=0&take=200'),
    staleTime: 60_000,
  });
}

/**
 * Runs, newest first, paged; ?status= narrows them. With a coreBaseId only that sync's runs, and
 * its operations can be exported. Each row opens the run.
 */
export function OperationsList({ coreBaseId }: { coreBaseId?: string }) {
  const [params, setParams] = useSearchParams();
  const raw = params.get('status');
  const status = STATUS_FILTERS.includes(raw as RunStatus) ? (raw as RunStatus) : null;
  const [page, setPage] = useState(1);
  // One sync's runs name its apps ("created in Demo Newsletter"); across syncs, the sides.
  const sync = useCoreBase(coreBaseId);
  const names = { left: sync.data?.leftExternalBase?.name, right: sync.data?.rightExternalBase?.name };
  const logs = useQuery({
    queryKey: ['sync-logs', coreBaseId ?? null, status, page],
    queryFn: () => api<Paged<SyncLog>>(`/rest/sync-logs?${pageQuery(page, { coreBaseId, status })}`),
    // Live: runs appear as the sync carries changes.
    refetchInterval: 5000,
  });
  const choices = useSyncChoices();
  const nameOf = new Map(choices.data?.items.map((s) => [s.id, s.name]));

  const setStatus = (value: string) => {
    setPage(1);
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (value === 'all') next.delete('status');
        else next.set('status', value);
        return next;
      },
      { replace: true },
    );
  };

  return (
    <Stack>
      <Group justify="space-between" wrap="wrap">
        <SegmentedControl
          aria-label="Run status"
          value={status ?? 'all'}
          onChange={setStatus}
          data={[
            { value: 'all', label: 'All' },
            { value: 'running', label: 'Running' },
            { value: 'done', label: 'Done' },
            { value: 'failed', label: 'Failed' },
            { value: 'cancelled', label: 'Cancelled' },
          ]}
        />
        {coreBaseId ? <OperationsExportButton coreBaseId={coreBaseId} /> : null}
      </Group>
      {coreBaseId ? <OperationsExportList coreBaseId={coreBaseId} /> : null}
      {logs.isLoading ? (
        <Center p="xl">
          <Loader aria-label="Loading operations" />
        </Center>
      ) : null}
      {logs.error ? <ErrorAlert error={logs.error} title="Could not load the operations" /> : null}
      {logs.data?.total === 0 ? (
        status ? (
          <Text c="dimmed">No run has the status {status}.</Text>
        ) : (
          <EmptyState
            title="No operations yet"
            text="Every run of a sync is logged here, with the records it created, updated or deleted on each side."
          />
        )
      ) : null}
      {logs.data && logs.data.items.length > 0 ? (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Started</Table.Th>
              {coreBaseId ? null : <Table.Th>Sync</Table.Th>}
              <Table.Th>Trigger</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Changes</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {logs.data.items.map((log) => (
              <Table.Tr key={log.id}>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>
                  <Anchor component={Link} to={`/operations/${log.id}`} size="sm">
                    {new Date(log.startedAt).toLocaleString()}
                  </Anchor>
                </Table.Td>
                {coreBaseId ? null : (
                  <Table.Td>
                    <Anchor component={Link} to={`/syncs/${log.coreBaseId}/operations`} size="sm" c="dimmed">
                      {nameOf.get(log.coreBaseId) ?? 'Open sync'}
                    </Anchor>
                  </Table.Td>
                )}
                <Table.Td>{log.trigger}</Table.Td>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>
                  <Badge
                    color={runOutcome(log.status, log.counts).color}
                    variant="light"
                    styles={{ label: { overflow: 'visible' } }}
                  >
                    {runOutcome(log.status, log.counts).label}
                  </Badge>
                </Table.Td>
                <Table.Td style={{ wordBreak: 'break-word' }}>
                  {log.error ? (
                    <Text size="sm" c="red.8" lineClamp={2} title={log.error}>
                      {log.error}
                    </Text>
                  ) : (
                    describeCounts(log.counts, names)
                  )}
                </Table.Td>
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

/** Sync logs: one row per run of any sync, newest first; ?coreBaseId= narrows them to one sync. */
export function OperationsPage() {
  const [params, setParams] = useSearchParams();
  const coreBaseId = params.get('coreBaseId');
  const choices = useSyncChoices();
  return (
    <Stack>
      <Group justify="space-between" align="end" wrap="wrap">
        <Title order={2}>Operations</Title>
        <Group gap="xs" align="end">
          {coreBaseId ? null : (
            <Text size="xs" c="dimmed" mb={8}>
              Choose a sync to export its operations.
            </Text>
          )}
          <Select
            aria-label="Sync"
            placeholder={choices.isLoading ? 'Loading syncs…' : 'All syncs'}
            data={choices.data?.items.map((s) => ({ value: s.id, label: s.name })) ?? []}
            value={coreBaseId}
            onChange={(value) =>
              setParams(
                (prev) => {
                  const next = new URLSearchParams(prev);
                  if (value) next.set('coreBaseId', value);
                  else next.delete('coreBaseId');
                  return next;
                },
                { replace: true },
              )
            }
            searchable
            clearable
            w={260}
          />
        </Group>
      </Group>
      <OperationsList key={coreBaseId ?? 'all'} coreBaseId={coreBaseId ?? undefined} />
    </Stack>
  );
}
