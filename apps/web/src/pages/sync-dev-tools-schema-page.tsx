import type { ExternalBase } from '@lockstep/contract';
import {
  Accordion,
  Badge,
  Card,
  Group,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { useState } from 'react';
import { EmptyState } from '../components/empty-state';
import { SyncScreen } from '../components/sync-screen';
import type { Column } from '../lib/sync-queries';

type SortKey = 'name' | 'fieldType';

function SortHeader({
  label,
  by,
  sort,
  onSort,
}: {
  label: string;
  by: SortKey;
  sort: { by: SortKey; desc: boolean };
  onSort: (by: SortKey) => void;
}) {
  const active = sort.by === by;
  return (
    <Table.Th aria-sort={active ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
      <UnstyledButton onClick={() => onSort(by)} fw={700} fz="sm" style={{ whiteSpace: 'nowrap' }}>
        {label} {active ? (sort.desc ? '▼' : '▲') : ''}
      </UnstyledButton>
    </Table.Th>
  );
}

const options = (c: Column) => {
  const text = JSON.stringify(c.options);
  return text === '{}' ? '' : text;
};

function BaseSchema({
  label,
  base,
  filter,
  sort,
  onSort,
}: {
  label: string;
  base: ExternalBase | null;
  filter: string;
  sort: { by: SortKey; desc: boolean };
  onSort: (by: SortKey) => void;
}) {
  if (!base)
    return (
      <Card withBorder>
        <Title order={4}>{label}</Title>
        <Text c="dimmed" size="sm">
          No app chosen yet.
        </Text>
      </Card>
    );
  const needle = filter.trim().toLowerCase();
  const match = (c: Column) =>
    !needle ||
    c.name.toLowerCase().includes(needle) ||
    c.fieldType.toLowerCase().includes(needle) ||
    c.remoteId.toLowerCase().includes(needle);
  const tables = base.externalTables
    .map((t) => ({
      table: t,
      columns: t.externalColumns
        .filter(match)
        .sort((a, b) => a[sort.by].localeCompare(b[sort.by]) * (sort.desc ? -1 : 1)),
    }))
    .filter((t) => !needle || t.columns.length > 0 || t.table.name.toLowerCase().includes(needle));
  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs" wrap="nowrap">
        <div style={{ minWidth: 0 }}>
          <Title order={4}>{base.name}</Title>
          <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
            {label} · {base.connectorInfo.connectorType} · {base.remoteId}
          </Text>
        </div>
        <Badge variant="light">
          {base.externalTables.length} {base.externalTables.length === 1 ? 'table' : 'tables'}
        </Badge>
      </Group>
      {tables.length === 0 ? (
        <Text c="dimmed" size="sm">
          {needle ? 'No table or column matches.' : 'No tables read yet.'}
        </Text>
      ) : (
        <Accordion
          multiple
          variant="separated"
          defaultValue={tables.length === 1 ? [tables[0]?.table.id ?? ''] : []}
        >
          {tables.map(({ table, columns }) => (
            <Accordion.Item key={table.id} value={table.id}>
              <Accordion.Control>
                <Group gap="xs" wrap="nowrap">
                  <Text fw={600} size="sm">
                    {table.name}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {columns.length} of {table.externalColumns.length} columns · {table.remoteId}
                  </Text>
                </Group>
              </Accordion.Control>
              <Accordion.Panel>
                <Table.ScrollContainer minWidth={520}>
                  <Table striped fz="sm">
                    <Table.Thead>
                      <Table.Tr>
                        <SortHeader label="Column" by="name" sort={sort} onSort={onSort} />
                        <SortHeader label="Field type" by="fieldType" sort={sort} onSort={onSort} />
                        <Table.Th>Read-only</Table.Th>
                        <Table.Th>Options</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {columns.map((c) => (
                        <Table.Tr key={c.id}>
                          <Table.Td>
                            <Text size="sm">{c.name}</Text>
                            <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                              {c.remoteId}
                            </Text>
                          </Table.Td>
                          <Table.Td>
                            <Badge variant="light" color="gray" styles={{ label: { overflow: 'visible' } }}>
                              {c.fieldType}
                            </Badge>
                          </Table.Td>
                          <Table.Td>{c.readOnly ? 'yes' : 'no'}</Table.Td>
                          <Table.Td>
                            <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                              {options(c)}
                            </Text>
                          </Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                </Table.ScrollContainer>
              </Accordion.Panel>
            </Accordion.Item>
          ))}
        </Accordion>
      )}
    </Card>
  );
}

/** /syncs/{id}/dev-tools/schema: both apps' tables and columns (detailLevel=fullBaseSchema). */
export function SyncDevToolsSchemaPage() {
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<{ by: SortKey; desc: boolean }>({ by: 'name', desc: false });
  const onSort = (by: SortKey) => setSort((s) => ({ by, desc: s.by === by ? !s.desc : false }));
  return (
    <SyncScreen title="Schema">
      {(sync) =>
        !sync.leftExternalBase && !sync.rightExternalBase ? (
          <EmptyState
            title="No apps yet"
            text="Choose the two apps of this sync to see their tables and columns."
          />
        ) : (
          <Stack>
            <TextInput
              aria-label="Filter columns"
              placeholder="Filter by table, column, remote id or field type"
              value={filter}
              onChange={(e) => setFilter(e.currentTarget.value)}
              maw={420}
            />
            <SimpleGrid cols={{ base: 1, xl: 2 }}>
              <BaseSchema
                label="First app"
                base={sync.leftExternalBase}
                filter={filter}
                sort={sort}
                onSort={onSort}
              />
              <BaseSchema
                label="Second app"
                base={sync.rightExternalBase}
                filter={filter}
                sort={sort}
                onSort={onSort}
              />
            </SimpleGrid>
          </Stack>
        )
      }
    </SyncScreen>
  );
}
