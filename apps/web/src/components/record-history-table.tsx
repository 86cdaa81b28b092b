import type { CoreBase } from '@lockstep/contract';
import { Anchor, Badge, Pagination, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../lib/api';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { fieldLabeler, sideName } from '../lib/schema-names';
import { ChangeDiffTable } from './change-diff-table';
import { ErrorAlert } from './error-alert';
import { LocalTime } from './local-time';
import { RawJsonToggle } from './raw-json-toggle';
import { OPERATION_COLOR, type RecordHistoryEntry } from './run-view-types';
import { PageLoader } from './sync-screen';

/** Every change of one linked record, oldest first, with what each write changed; paged. */
export function RecordHistoryTable({ sync, recordId }: { sync: CoreBase; recordId: string }) {
  const [page, setPage] = useState(1);
  const history = useQuery({
    queryKey: ['record-history', recordId, page],
    queryFn: () =>
      api<Paged<RecordHistoryEntry>>(
        `/rest/core-meta-records/debug/history?${pageQuery(page, { coreMetaRecordId: recordId })}`,
      ),
  });
  const labels = { left: fieldLabeler(sync, 'left'), right: fieldLabeler(sync, 'right') };

  if (history.isLoading) return <PageLoader label="Loading the history" />;
  if (history.error) return <ErrorAlert error={history.error} title="Could not load the history" />;
  if (!history.data || history.data.total === 0)
    return <Text c="dimmed">No change of this record has been written yet.</Text>;
  return (
    <Stack gap="xs">
      <Table striped verticalSpacing="sm">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={190}>When</Table.Th>
            <Table.Th w={170}>Written to</Table.Th>
            <Table.Th>What changed</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {history.data.items.map((h) => (
            <Table.Tr key={h.id}>
              <Table.Td valign="top">
                <LocalTime iso={h.createdAt} display="block" />
                <Anchor component={Link} to={`/operations/${h.syncLogId}`} size="xs">
                  Open the run
                </Anchor>
              </Table.Td>
              <Table.Td valign="top">
                <Badge color={OPERATION_COLOR[h.operation]} variant="light" mb={4}>
                  {h.operation}
                </Badge>
                <Text size="sm">{sideName(sync, h.side)}</Text>
                {h.remoteId ? (
                  <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                    record {h.remoteId}
                  </Text>
                ) : null}
              </Table.Td>
              <Table.Td>
                <ChangeDiffTable before={h.before} after={h.after} fieldLabel={labels[h.side]} />
                <RawJsonToggle value={h} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {history.data.total > PAGE_SIZE ? (
        <Pagination
          total={Math.ceil(history.data.total / PAGE_SIZE)}
          value={page}
          onChange={setPage}
          aria-label="History pages"
        />
      ) : null}
    </Stack>
  );
}
