import type { SyncError } from '@lockstep/contract';
import {
  Anchor,
  Badge,
  Button,
  Center,
  Group,
  Loader,
  Pagination,
  SegmentedControl,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { ISSUE_STATUS_COLOR } from '../components/run-view-types';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';

const STATUS_COLOR = ISSUE_STATUS_COLOR;
const STATUSES = ['open', 'retrying', 'resolved'] as const;

export type RetryResult = { retried: number; coreBaseIds: string[] };

/** The notification after a retry: how many issues were queued, or that there was nothing to retry. */
export function retryMessage(result: RetryResult): string {
  if (result.retried === 0) return 'There were no open issues to retry.';
  return result.retried === 1
    ? 'One issue is queued for retry; the next run tries the record again.'
    : `${result.retried.toLocaleString()} issues are queued for retry; the next run tries the records again.`;
}

/** The ?filters= JSON as an object; null when it is not a JSON object (the server then says why). */
export function parseFilters(raw: string | null): Record<string, unknown> | null {
  if (!raw) return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/**
 * Sync errors, newest first, paged. ?filters= (JSON: coreBaseId, status, code, side) narrows them;
 * the status control writes its choice back into that JSON. A coreBaseId prop pins the list to one sync.
 */
export function IssuesList({ coreBaseId }: { coreBaseId?: string }) {
  const [params, setParams] = useSearchParams();
  const raw = params.get('filters');
  const parsed = parseFilters(raw);
  const filters: Record<string, unknown> | null = parsed
    ? { ...parsed, ...(coreBaseId ? { coreBaseId } : {}) }
    : null;
  // Unreadable JSON goes to the server as it is, which answers with what is wrong with it.
  const sent = filters ? (Object.keys(filters).length > 0 ? JSON.stringify(filters) : null) : raw;
  const status = STATUSES.find((s) => s === filters?.status) ?? null;
  const syncId = typeof filters?.coreBaseId === 'string' ? filters.coreBaseId : null;
  const [page, setPage] = useState(1);
  const client = useQueryClient();
  const issues = useQuery({
    queryKey: ['sync-errors', sent, page],
    queryFn: () => api<Paged<SyncError>>(`/rest/sync-errors?${pageQuery(page, { filters: sent })}`),
    // Live: new issues appear as runs find them, faster while a retry is under way.
    refetchInterval: (q) => (q.state.data?.items.some((i) => i.status === 'retrying') ? 2000 : 5000),
  });

  const retry = useMutation({
    mutationFn: (scope: 'all' | 'sync') =>
      api<RetryResult>(
        scope === 'all'
          ? '/rest/sync-errors/clear-and-retry-all'
          : `/rest/sync-errors/clear-and-retry/core-base/${syncId}`,
        { method: 'POST' },
      ),
    onSuccess: (result) => {
      showSuccess(retryMessage(result));
      return client.invalidateQueries({ queryKey: ['sync-errors'] });
    },
    onError: (e) => showError(e, 'Could not retry the issues'),
  });

  const setStatus = (value: string) => {
    const next: Record<string, unknown> = { ...(parsed ?? {}) };
    if (value === 'all') delete next.status;
    else next.status = value;
    setPage(1);
    setParams(
      (prev) => {
        const p = new URLSearchParams(prev);
        if (Object.keys(next).length > 0) p.set('filters', JSON.stringify(next));
        else p.delete('filters');
        return p;
      },
      { replace: true },
    );
  };

  return (
    <Stack>
      <Group justify="space-between" wrap="wrap">
        <SegmentedControl
          aria-label="Issue status"
          value={status ?? 'all'}
          onChange={setStatus}
          data={[
            { value: 'all', label: 'All' },
            { value: 'open', label: 'Open' },
            { value: 'retrying', label: 'Retrying' },
            { value: 'resolved', label: 'Resolved' },
          ]}
        />
        <Group gap="xs">
          {syncId ? (
            <Button
              variant="default"
              loading={retry.isPending && retry.variables === 'sync'}
              onClick={() => retry.mutate('sync')}
            >
              Retry this sync's issues
            </Button>
          ) : null}
          {coreBaseId ? null : (
            <Button
              variant={syncId ? 'subtle' : 'default'}
              loading={retry.isPending && retry.variables === 'all'}
              onClick={() => retry.mutate('all')}
            >
              Retry all
            </Button>
          )}
        </Group>
      </Group>
      {issues.isLoading ? (
        <Center p="xl">
          <Loader aria-label="Loading issues" />
        </Center>
      ) : null}
      {issues.error ? <ErrorAlert error={issues.error} title="Could not load the issues" /> : null}
      {issues.data?.total === 0 ? (
        status ? (
          <Text c="dimmed">No {status} issues.</Text>
        ) : (
          <EmptyState
            title="No issues"
            text="When a record cannot be synced, it shows up here with what went wrong and a way to retry."
          />
        )
      ) : null}
      {issues.data && issues.data.items.length > 0 ? (
        <Table striped highlightOnHover>
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
                <Table.Td style={{ wordBreak: 'break-word' }}>
                  <Anchor component={Link} to={`/issues/${issue.id}`} size="sm">
                    {issue.userFacingMessage}
                  </Anchor>
                  <Text size="xs" c="dimmed">
                    {issue.code}
                    {issue.remoteId ? ` · record ${issue.remoteId}` : ''}
                  </Text>
                </Table.Td>
                <Table.Td>{issue.side ?? '-'}</Table.Td>
                <Table.Td>
                  <Badge
                    color={STATUS_COLOR[issue.status]}
                    variant="light"
                    styles={{ label: { overflow: 'visible' } }}
                  >
                    {issue.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{issue.attempts}</Table.Td>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>
                  {new Date(issue.updatedAt).toLocaleString()}
                </Table.Td>
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

/** Sync errors of every sync, newest first; ?filters= (JSON, e.g. coreBaseId) narrows them. */
export function IssuesPage() {
  return (
    <Stack>
      <Title order={2}>Issues</Title>
      <IssuesList />
    </Stack>
  );
}
