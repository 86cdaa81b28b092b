import type { SyncError, SyncErrorCause } from '@lockstep/contract';
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
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { IssueFilters } from '../components/issue-filters';
import { ISSUE_STATUS_COLOR } from '../components/run-view-types';
import { api } from '../lib/api';
import { issueActionOf, recordLabel } from '../lib/issue-actions';
import { showError, showSuccess } from '../lib/notify';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { useCoreBase } from '../lib/sync-queries';

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
 * Issues grouped by cause, largest first: one row per reason with how many records it stopped,
 * the app it happened in and a few records; a row opens its issues.
 */
function IssueCauses({ sent, onOpen }: { sent: string | null; onOpen: (cause: SyncErrorCause) => void }) {
  const [page, setPage] = useState(1);
  const causes = useQuery({
    queryKey: ['sync-error-causes', sent, page],
    queryFn: () =>
      api<Paged<SyncErrorCause>>(`/rest/sync-errors/by-cause?${pageQuery(page, { filters: sent })}`),
    refetchInterval: 5000,
  });
  if (causes.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading issues" />
      </Center>
    );
  if (causes.error) return <ErrorAlert error={causes.error} title="Could not load the issues" />;
  if (!causes.data || causes.data.total === 0)
    return (
      <EmptyState
        title="No issues"
        text="When a record cannot be synced, it shows up here with what went wrong and a way to retry."
      />
    );
  return (
    <Stack gap="xs">
      <Table striped highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Cause</Table.Th>
            <Table.Th>In</Table.Th>
            <Table.Th>Records</Table.Th>
            <Table.Th>Last seen</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {causes.data.items.map((c) => (
            <CauseRow
              key={`${c.coreBaseId}:${c.code}:${c.side}:${c.tableMappingId}:${c.userFacingMessage}`}
              cause={c}
              onOpen={onOpen}
            />
          ))}
        </Table.Tbody>
      </Table>
      {causes.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(causes.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}

function CauseRow({ cause, onOpen }: { cause: SyncErrorCause; onOpen: (cause: SyncErrorCause) => void }) {
  // The sync's apps by name ("Airtable Sandbox"), not "left"/"right".
  const sync = useCoreBase(cause.coreBaseId);
  const base =
    cause.side === 'left'
      ? sync.data?.leftExternalBase
      : cause.side === 'right'
        ? sync.data?.rightExternalBase
        : null;
  const records = cause.records ?? cause.remoteIds.map((remoteId) => ({ remoteId, name: null }));
  const action = issueActionOf(cause);
  return (
    <Table.Tr data-testid="issue-cause">
      <Table.Td style={{ wordBreak: 'break-word' }}>
        <Text size="sm">{cause.userFacingMessage}</Text>
        <Text size="xs" c="dimmed">
          {cause.code}
          {records.length > 0
            ? ` · ${records.map(recordLabel).join(', ')}${cause.count > records.length ? ', …' : ''}`
            : ''}
        </Text>
      </Table.Td>
      <Table.Td>
        {sync.data ? `${sync.data.name}${base ? ` · ${base.name}` : ''}` : (cause.side ?? '')}
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>
        <Badge
          variant="light"
          color="red"
          styles={{ root: { overflow: 'visible' }, label: { overflow: 'visible' } }}
        >
          {cause.count.toLocaleString()} record{cause.count === 1 ? '' : 's'}
        </Badge>
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>{new Date(cause.lastSeenAt).toLocaleString()}</Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          {action ? (
            <Button size="compact-sm" component={Link} to={action.to}>
              {action.label}
            </Button>
          ) : null}
          <Button size="compact-sm" variant="light" onClick={() => onOpen(cause)}>
            Show
          </Button>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
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
  const byCause = params.get('view') !== 'issues';
  const issues = useQuery({
    queryKey: ['sync-errors', sent, page],
    enabled: !byCause,
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

  const setFilters = (change: Record<string, unknown>, view?: 'causes' | 'issues') => {
    const next: Record<string, unknown> = { ...(parsed ?? {}), ...change };
    for (const [k, v] of Object.entries(next)) if (v === undefined || v === '') delete next[k];
    setPage(1);
    setParams(
      (prev) => {
        const p = new URLSearchParams(prev);
        if (Object.keys(next).length > 0) p.set('filters', JSON.stringify(next));
        else p.delete('filters');
        if (view === 'issues') p.set('view', 'issues');
        else if (view === 'causes') p.delete('view');
        return p;
      },
      { replace: true },
    );
  };
  const setStatus = (value: string) => setFilters({ status: value === 'all' ? undefined : value });
  const search = typeof filters?.search === 'string' ? filters.search : '';
  const message = typeof filters?.message === 'string' ? filters.message : null;

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
        <SegmentedControl
          aria-label="Show issues"
          value={byCause ? 'causes' : 'issues'}
          onChange={(v) =>
            setFilters({ message: undefined, code: undefined, side: undefined }, v as 'causes' | 'issues')
          }
          data={[
            { value: 'causes', label: 'By cause' },
            { value: 'issues', label: 'Each issue' },
          ]}
        />
        <TextInput
          aria-label="Search issues"
          placeholder="Search messages and record ids"
          defaultValue={search}
          key={search}
          onKeyDown={(e) => {
            if (e.key === 'Enter') setFilters({ search: e.currentTarget.value.trim() || undefined });
          }}
          onBlur={(e) => {
            if (e.currentTarget.value.trim() !== search)
              setFilters({ search: e.currentTarget.value.trim() || undefined });
          }}
        />
        <IssueFilters
          syncId={syncId}
          filters={{
            ...(typeof filters?.code === 'string' ? { code: filters.code } : {}),
            ...(typeof filters?.side === 'string' ? { side: filters.side } : {}),
            ...(typeof filters?.tableMappingId === 'string'
              ? { tableMappingId: filters.tableMappingId }
              : {}),
          }}
          onChange={(change) => setFilters(change)}
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
      {byCause ? (
        <IssueCauses
          sent={sent}
          onOpen={(c) =>
            setFilters(
              {
                coreBaseId: c.coreBaseId,
                code: c.code,
                side: c.side ?? undefined,
                message: c.userFacingMessage,
              },
              'issues',
            )
          }
        />
      ) : (
        <>
          {message ? (
            <Group gap="xs">
              <Text size="sm">
                Issues of one cause: <b>{message}</b>
              </Text>
              <Button
                size="compact-sm"
                variant="subtle"
                onClick={() => setFilters({ message: undefined, code: undefined, side: undefined }, 'causes')}
              >
                All causes
              </Button>
            </Group>
          ) : null}
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
                        {issue.remoteId
                          ? ` · ${issue.recordName ? `${issue.recordName} (${issue.remoteId})` : `record ${issue.remoteId}`}`
                          : ''}
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
        </>
      )}
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
