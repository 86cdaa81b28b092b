import {
  Alert,
  Anchor,
  Badge,
  Breadcrumbs,
  Card,
  Group,
  Pagination,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Link, useParams } from 'react-router';
import { BatchRecords } from '../components/batch-records';
import { ChangeDiffTable } from '../components/change-diff-table';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { OPERATION_COLOR, type SyncLogDetail } from '../components/run-view-types';
import { PageLoader } from '../components/sync-screen';
import { UndoRun } from '../components/undo-run';
import { api } from '../lib/api';
import { PAGE_SIZE, pageQuery } from '../lib/paged';
import { describeCounts, runOutcome } from '../lib/run-words';
import { fieldLabeler, sideName } from '../lib/schema-names';
import { useCoreBase } from '../lib/sync-queries';

function duration(from: string, to: string | null): string {
  if (!to) return 'still running';
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </div>
  );
}

/** /operations/{id}: one run, what it counted, and each write it made with the values before and after. */
export function OperationDetailPage() {
  const { id } = useParams();
  const [page, setPage] = useState(1);
  const log = useQuery({
    queryKey: ['sync-log', id, page],
    queryFn: () => api<SyncLogDetail>(`/rest/sync-logs/${id}?${pageQuery(page)}`),
    placeholderData: (previous) => previous,
    refetchInterval: (q) => (q.state.data?.status === 'running' ? 3000 : false),
  });
  // The sync's schema names the fields and the two sides; the run shows without it.
  const sync = useCoreBase(log.data?.coreBaseId);

  if (log.isLoading) return <PageLoader label="Loading the operation" />;
  if (log.error || !log.data) return <ErrorAlert error={log.error} title="Could not load the operation" />;
  const run = log.data;
  const s = sync.data;
  const labels = { left: fieldLabeler(s, 'left'), right: fieldLabeler(s, 'right') };
  const names = { left: s?.leftExternalBase?.name, right: s?.rightExternalBase?.name };
  const failed = run.counts.failed ?? 0;

  return (
    <Stack>
      <div>
        <Breadcrumbs mb={4}>
          <Anchor component={Link} to="/operations" size="sm">
            Operations
          </Anchor>
          <Anchor component={Link} to={`/syncs/${run.coreBaseId}/operations`} size="sm">
            {s?.name ?? 'This sync'}
          </Anchor>
        </Breadcrumbs>
        <Group gap="sm">
          <Title order={2}>
            {run.undoOf ? 'Undo run' : 'Run'} of {new Date(run.startedAt).toLocaleString()}
          </Title>
          <Badge color={runOutcome(run.status, run.counts).color} variant="light" size="lg">
            {runOutcome(run.status, run.counts).label}
          </Badge>
        </Group>
      </div>

      <Card withBorder>
        <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }}>
          <Fact label="Trigger">{run.trigger}</Fact>
          <Fact label="Started">{new Date(run.startedAt).toLocaleString()}</Fact>
          <Fact label="Finished">{run.finishedAt ? new Date(run.finishedAt).toLocaleString() : '-'}</Fact>
          <Fact label="Duration">{duration(run.startedAt, run.finishedAt)}</Fact>
          <Fact label="Sync">
            <Anchor component={Link} to={`/syncs/${run.coreBaseId}`} size="sm">
              {s?.name ?? 'Open the sync'}
            </Anchor>
          </Fact>
        </SimpleGrid>
        <Text size="xs" c="dimmed" mt="md" mb={4}>
          Counts
        </Text>
        <Text size="sm">{describeCounts(run.counts, names)}</Text>
      </Card>

      <UndoRun run={run} names={names} />

      {run.error ? (
        <Alert color="red" title="The run failed" style={{ whiteSpace: 'pre-line' }}>
          {run.error}
        </Alert>
      ) : null}

      <Title order={3}>Changes ({run.entries.total.toLocaleString()})</Title>
      {run.entries.total === 0 ? (
        <EmptyState
          title="No changes"
          text={
            failed > 0
              ? `This run wrote nothing: ${failed.toLocaleString()} record${failed === 1 ? '' : 's'} failed. The sync's Issues page says why, with a way to retry.`
              : 'This run wrote nothing: both sides were already in step.'
          }
        />
      ) : (
        <Table striped verticalSpacing="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={190}>When</Table.Th>
              <Table.Th w={200}>Written to</Table.Th>
              <Table.Th>Before and after</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {run.entries.items.map((e) => (
              <Table.Tr key={e.id}>
                <Table.Td valign="top">{new Date(e.createdAt).toLocaleString()}</Table.Td>
                <Table.Td valign="top">
                  <Badge color={OPERATION_COLOR[e.operation]} variant="light" mb={4}>
                    {e.operation}
                  </Badge>
                  <Text size="sm">{s ? sideName(s, e.side) : e.side}</Text>
                  {e.records ? (
                    <Text size="xs" c="dimmed">
                      {e.recordCount.toLocaleString()} records in one batch
                    </Text>
                  ) : null}
                  {e.remoteId ? (
                    <Text size="xs" c="dimmed" style={{ wordBreak: 'break-word' }}>
                      record {e.remoteId}
                    </Text>
                  ) : null}
                  {e.coreMetaRecordId ? (
                    <Anchor
                      component={Link}
                      to={`/syncs/${run.coreBaseId}/record-status/${e.coreMetaRecordId}`}
                      size="xs"
                    >
                      Record status
                    </Anchor>
                  ) : null}
                </Table.Td>
                <Table.Td>
                  {e.records ? (
                    <BatchRecords records={e.records} />
                  ) : (
                    <ChangeDiffTable before={e.before} after={e.after} fieldLabel={labels[e.side]} />
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {run.entries.total > PAGE_SIZE ? (
        <Pagination
          total={Math.ceil(run.entries.total / PAGE_SIZE)}
          value={page}
          onChange={setPage}
          aria-label="Change pages"
        />
      ) : null}
    </Stack>
  );
}
