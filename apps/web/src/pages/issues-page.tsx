import type { SyncError } from '@lockstep/contract';
import { Badge, Center, Loader, Pagination, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';

const STATUS_COLOR = { open: 'red', retrying: 'orange', resolved: 'green' } as const;

/** Sync errors of every sync, newest first; ?filters= (JSON, e.g. coreBaseId) narrows them. */
export function IssuesPage() {
  const [params] = useSearchParams();
  const filters = params.get('filters');
  const [page, setPage] = useState(1);
  const issues = useQuery({
    queryKey: ['sync-errors', filters, page],
    queryFn: () => api<Paged<SyncError>>(`/rest/sync-errors?${pageQuery(page, { filters })}`),
  });

  return (
    <Stack>
      <Title order={2}>Issues</Title>
      {issues.isLoading ? (
        <Center p="xl">
          <Loader aria-label="Loading issues" />
        </Center>
      ) : null}
      {issues.error ? <ErrorAlert error={issues.error} title="Could not load the issues" /> : null}
      {issues.data?.total === 0 ? (
        <EmptyState
          title="No issues"
          text="When a record cannot be synced, it shows up here with what went wrong and a way to retry."
        />
      ) : null}
      {issues.data && issues.data.items.length > 0 ? (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Issue</Table.Th>
              <Table.Th>Side</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Attempts</Table.Th>
              <Table.Th>Last seen</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {issues.data.items.map((issue) => (
              <Table.Tr key={issue.id}>
                <Table.Td>
                  <Text size="sm">{issue.userFacingMessage}</Text>
                  <Text size="xs" c="dimmed">
                    {issue.code}
                    {issue.remoteId ? ` · record ${issue.remoteId}` : ''}
                  </Text>
                </Table.Td>
                <Table.Td>{issue.side ?? '-'}</Table.Td>
                <Table.Td>
                  <Badge color={STATUS_COLOR[issue.status]} variant="light">
                    {issue.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{issue.attempts}</Table.Td>
                <Table.Td>{new Date(issue.updatedAt).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {issues.data && issues.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(issues.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}
