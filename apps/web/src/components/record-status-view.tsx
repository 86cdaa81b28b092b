import type { CoreBase } from '@lockstep/contract';
import { Anchor, Badge, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { api } from '../lib/api';
import { shadowRows, sideName } from '../lib/schema-names';
import { tableOf } from '../lib/sync-queries';
import { formatValue } from './change-diff-table';
import { ErrorAlert } from './error-alert';
import { RecordHistoryTable } from './record-history-table';
import type { CoreMetaRecordStatus } from './run-view-types';
import { PageLoader } from './sync-screen';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div" style={{ wordBreak: 'break-word' }}>
        {children}
      </Text>
    </div>
  );
}

/** One linked record: the two records it links, both sides' last synced values, its issues and history. */
export function RecordStatusView({ sync, recordId }: { sync: CoreBase; recordId: string }) {
  const status = useQuery({
    queryKey: ['record-status', recordId],
    queryFn: () => api<CoreMetaRecordStatus>(`/rest/core-meta-records/${recordId}/status`),
  });
  if (status.isLoading) return <PageLoader label="Loading the record" />;
  if (status.error || !status.data)
    return <ErrorAlert error={status.error} title="Could not load the record" />;
  const r = status.data;
  const mapping = sync.mappings.tableMappings.find((m) => m.id === r.tableMappingId);
  const tables = mapping
    ? `${tableOf(sync, mapping.leftTableId)?.table.name ?? '?'} ⇄ ${tableOf(sync, mapping.rightTableId)?.table.name ?? '?'}`
    : '-';
  const rows = shadowRows(sync, r.shadow);
  const leftName = sideName(sync, 'left');
  const rightName = sideName(sync, 'right');

  return (
    <Stack>
      <Card withBorder>
        <Group justify="space-between" mb="sm">
          <Title order={4}>Linked records</Title>
          <Group gap="xs">
            {r.syncDisabled ? (
              <Badge color="gray" variant="light">
                sync switched off
              </Badge>
            ) : null}
            {r.openIssues.length > 0 ? (
              <Badge color="red" variant="light">
                {`${r.openIssues.length} open issue(s)`}
              </Badge>
            ) : null}
            {/* In step only when both records, read live, hold what was last synced. */}
            <Badge
              color={r.live.inStep === null ? 'gray' : r.live.inStep ? 'green' : 'orange'}
              variant="light"
              title={r.live.why ?? undefined}
            >
              {r.live.inStep === null
                ? 'not checked live'
                : r.live.inStep
                  ? 'in step'
                  : `differs in ${r.live.differences.length} field(s)`}
            </Badge>
          </Group>
        </Group>
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
          <Fact label={`Record in ${leftName}`}>{r.leftRemoteId ?? 'not created yet'}</Fact>
          <Fact label={`Record in ${rightName}`}>{r.rightRemoteId ?? 'not created yet'}</Fact>
          <Fact label="Tables">{tables}</Fact>
          <Fact label="Shadow version">{r.shadowVersion}</Fact>
          <Fact label="Linked">{new Date(r.createdAt).toLocaleString()}</Fact>
          <Fact label="Last updated">{new Date(r.updatedAt).toLocaleString()}</Fact>
          <Fact label="Last change">
            {r.lastChange
              ? `${r.lastChange.operation} in ${
                  r.lastChange.side === 'left' || r.lastChange.side === 'right'
                    ? sideName(sync, r.lastChange.side)
                    : r.lastChange.side
                }, ${new Date(r.lastChange.at).toLocaleString()}`
              : 'none yet'}
          </Fact>
          <Fact label="Record id">{r.id}</Fact>
        </SimpleGrid>
      </Card>

      {r.openIssues.length > 0 ? (
        <Card withBorder>
          <Title order={4} mb="xs">
            Open issues
          </Title>
          <Stack gap={4}>
            {r.openIssues.map((i) => (
              <Group key={i.id} gap="xs" wrap="nowrap">
                <Badge variant="light" color="red">
                  {i.code}
                </Badge>
                <Anchor component={Link} to={`/issues/${i.id}`} size="sm">
                  {i.userFacingMessage}
                </Anchor>
              </Group>
            ))}
          </Stack>
        </Card>
      ) : null}

      <Card withBorder>
        <Title order={4}>Values on both sides</Title>
        <Text size="xs" c="dimmed" mb="xs">
          The shadow: what each side held when the two were last in step.
        </Text>
        {rows.length === 0 ? (
          <Text c="dimmed" size="sm">
            No values synced yet: the first run settles this record.
          </Text>
        ) : (
          <Table striped layout="fixed">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Field</Table.Th>
                <Table.Th>{leftName}</Table.Th>
                <Table.Th>{rightName}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => {
                const differ = !row.single && JSON.stringify(row.left) !== JSON.stringify(row.right);
                return (
                  <Table.Tr key={row.key}>
                    <Table.Td style={{ wordBreak: 'break-word' }}>{row.label}</Table.Td>
                    <Table.Td style={{ wordBreak: 'break-word' }}>{formatValue(row.left)}</Table.Td>
                    <Table.Td style={{ wordBreak: 'break-word' }} fw={differ ? 600 : undefined}>
                      {formatValue(row.right)}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        )}
      </Card>

      <Card withBorder>
        <Title order={4} mb="xs">
          History
        </Title>
        <RecordHistoryTable sync={sync} recordId={r.id} />
      </Card>
    </Stack>
  );
}
