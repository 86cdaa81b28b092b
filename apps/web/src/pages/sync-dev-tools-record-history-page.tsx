import type { CoreBase } from '@lockstep/contract';
import { Anchor, Button, Card, Group, Pagination, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { formatValue } from '../components/change-diff-table';
import { ErrorAlert } from '../components/error-alert';
import { LabelledList } from '../components/labelled-list';
import { LocalTime } from '../components/local-time';
import { RawJsonToggle } from '../components/raw-json-toggle';
import { RecordHistoryTable } from '../components/record-history-table';
import type { CoreMetaRecord } from '../components/run-view-types';
import { PageLoader, SyncScreen } from '../components/sync-screen';
import { api } from '../lib/api';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { shadowRows, sideName } from '../lib/schema-names';

/**
 * A linked record's last synced values, each named by the two columns it pairs; when the sides
 * hold different values, each is named by its base.
 */
function ShadowValues({ sync, shadow }: { sync: CoreBase; shadow: Record<string, unknown> }) {
  const rows = shadowRows(sync, shadow);
  if (rows.length === 0)
    return (
      <Text size="xs" c="dimmed">
        No values synced yet.
      </Text>
    );
  const items = rows.map((row) => ({
    key: row.key,
    label: row.label,
    value:
      row.single || JSON.stringify(row.left) === JSON.stringify(row.right) ? (
        formatValue(row.left)
      ) : (
        <>
          {sideName(sync, 'left')}: {formatValue(row.left)}
          {'\n'}
          {sideName(sync, 'right')}: {formatValue(row.right)}
        </>
      ),
  }));
  return <LabelledList items={items} />;
}

function SearchResults({
  sync,
  q,
  chosen,
  onChoose,
}: {
  sync: CoreBase;
  q: string;
  chosen: string | null;
  onChoose: (id: string) => void;
}) {
  const [page, setPage] = useState(1);
  const found = useQuery({
    queryKey: ['record-search', sync.id, q, page],
    queryFn: () =>
      api<Paged<CoreMetaRecord>>(
        `/rest/core-meta-records/${sync.id}/search?${pageQuery(page, { query: q })}`,
      ),
  });
  if (found.isLoading) return <PageLoader label="Searching records" />;
  if (found.error) return <ErrorAlert error={found.error} title="Could not search the records" />;
  if (!found.data || found.data.total === 0)
    return (
      <Text c="dimmed">
        {q ? `No linked record matches “${q}”.` : 'This sync has no linked records yet.'}
      </Text>
    );
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed">
        {found.data.total.toLocaleString()} record(s), most recently changed first.
      </Text>
      <Table striped highlightOnHover layout="fixed">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{sideName(sync, 'left')}</Table.Th>
            <Table.Th>{sideName(sync, 'right')}</Table.Th>
            <Table.Th w="35%">Values</Table.Th>
            <Table.Th w={190}>Updated</Table.Th>
            <Table.Th w={120} />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {found.data.items.map((r) => (
            <Table.Tr key={r.id} aria-selected={r.id === chosen}>
              <Table.Td style={{ wordBreak: 'break-all' }}>{r.leftRemoteId ?? '-'}</Table.Td>
              <Table.Td style={{ wordBreak: 'break-all' }}>{r.rightRemoteId ?? '-'}</Table.Td>
              <Table.Td>
                <ShadowValues sync={sync} shadow={r.shadow} />
                <RawJsonToggle value={r} />
              </Table.Td>
              <Table.Td>
                <LocalTime iso={r.updatedAt} />
              </Table.Td>
              <Table.Td>
                <Button
                  size="compact-sm"
                  variant={r.id === chosen ? 'light' : 'default'}
                  onClick={() => onChoose(r.id)}
                  aria-pressed={r.id === chosen}
                >
                  History
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {found.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(found.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}

/** /syncs/{id}/dev-tools/record-history: search linked records (?q=) and see the chosen one's writes (?record=). */
export function SyncDevToolsRecordHistoryPage() {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const chosen = params.get('record');
  const [draft, setDraft] = useState(q);
  const update = (changes: Record<string, string | null>) =>
    setParams((prev) => {
      const next = new URLSearchParams(prev);
      for (const [k, v] of Object.entries(changes)) {
        if (v) next.set(k, v);
        else next.delete(k);
      }
      return next;
    });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update({ q: draft.trim() || null, record: null });
  };
  return (
    <SyncScreen title="Record history">
      {(sync) => (
        <>
          <form onSubmit={submit}>
            <Group gap="xs" align="end">
              <TextInput
                label="Find a record"
                placeholder="A record id on either side, or a value"
                value={draft}
                onChange={(e) => setDraft(e.currentTarget.value)}
                w={420}
                maw="100%"
              />
              <Button type="submit" variant="default">
                Search
              </Button>
            </Group>
          </form>
          <SearchResults
            key={q}
            sync={sync}
            q={q}
            chosen={chosen}
            onChoose={(id) => update({ record: id })}
          />
          {chosen ? (
            <Card withBorder>
              <Group justify="space-between" mb="xs">
                <Title order={4}>History</Title>
                <Anchor component={Link} to={`/syncs/${sync.id}/record-status/${chosen}`} size="sm">
                  Open the record status
                </Anchor>
              </Group>
              <RecordHistoryTable key={chosen} sync={sync} recordId={chosen} />
            </Card>
          ) : null}
        </>
      )}
    </SyncScreen>
  );
}
