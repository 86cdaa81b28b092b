import type { CoreBase, TableMapping } from '@lockstep/contract';
import { Badge, Button, Card, Center, Group, Loader, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { AutomapTablesButton } from '../components/automap-tables';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { SyncNav } from '../components/sync-nav';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { renamedNote } from '../lib/schema-names';
import { DIRECTION_LABEL, saveMappings, tableOf, toMappingInput, useCoreBase } from '../lib/sync-queries';

function columnName(sync: CoreBase, columnId: string | null): string | null {
  if (!columnId) return null;
  for (const ext of [sync.leftExternalBase, sync.rightExternalBase])
    for (const t of ext?.externalTables ?? []) {
      const c = t.externalColumns.find((x) => x.id === columnId);
      if (c) return c.name;
    }
  return null;
}

function MappingRow({ sync, mapping }: { sync: CoreBase; mapping: TableMapping }) {
  const client = useQueryClient();
  const left = tableOf(sync, mapping.leftTableId)?.table.name ?? 'missing table';
  const right = tableOf(sync, mapping.rightTableId)?.table.name ?? 'missing table';
  const remove = useMutation({
    mutationFn: () =>
      saveMappings(
        sync.id,
        sync.mappings.tableMappings.filter((m) => m.id !== mapping.id).map(toMappingInput),
      ),
    onSuccess: (saved) => {
      client.setQueryData(['core-base', sync.id], saved);
      showSuccess(`${left} ⇄ ${right} is no longer synced.`);
    },
    onError: (e) => showError(e, 'Could not remove the table pair'),
  });
  const match = columnName(sync, mapping.matchOnFieldId);
  return (
    <Table.Tr>
      <Table.Td>
        <Text fw={600}>
          {left} ⇄ {right}
        </Text>
      </Table.Td>
      <Table.Td>{DIRECTION_LABEL[mapping.syncDirection]}</Table.Td>
      <Table.Td>
        {mapping.columnMappings.length === 0 ? (
          <Badge color="orange" variant="light">
            no fields
          </Badge>
        ) : (
          `${mapping.columnMappings.length} field${mapping.columnMappings.length === 1 ? '' : 's'}`
        )}
      </Table.Td>
      <Table.Td>{match ?? <Text c="dimmed">not matched (new records are created)</Text>}</Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <Button
            size="xs"
            component={Link}
            to={`/syncs/${sync.id}/table-mappings/${mapping.id}/field-mappings`}
          >
            Fields
          </Button>
          <Button
            size="xs"
            variant="default"
            component={Link}
            to={`/syncs/${sync.id}/table-mapping-editor/${mapping.id}`}
          >
            Settings
          </Button>
          <Button
            size="xs"
            variant="subtle"
            color="red"
            loading={remove.isPending}
            onClick={() => remove.mutate()}
          >
            Remove
          </Button>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

type CreatedTables = {
  tables: {
    sourceTableId: string;
    externalTableId: string;
    name: string;
    renamedFrom?: string;
    columns: { sourceColumnId: string; externalColumnId: string; name: string; renamedFrom?: string }[];
  }[];
};

/**
 * Tables of one app that have no partner in the other: schema generation copies a table there
 * (its fields with matching types) and maps the two, fields and all, in one step.
 */
function UnpairedTables({ sync }: { sync: CoreBase }) {
  const client = useQueryClient();
  const paired = new Set(sync.mappings.tableMappings.flatMap((m) => [m.leftTableId, m.rightTableId]));
  const copy = useMutation({
    mutationFn: async ({ tableId, from }: { tableId: string; from: 'left' | 'right' }) => {
      const dest = from === 'left' ? sync.rightExternalBase : sync.leftExternalBase;
      const created = await api<CreatedTables>(`/rest/generate-schema/${dest?.id}/create-tables`, {
        method: 'POST',
        body: { sourceTableIds: [tableId] },
      });
      const t = created.tables[0];
      if (!t) throw new Error('The table was not created.');
      const pairs = t.columns.map((c) =>
        from === 'left'
          ? { leftColumnId: c.sourceColumnId, rightColumnId: c.externalColumnId }
          : { leftColumnId: c.externalColumnId, rightColumnId: c.sourceColumnId },
      );
      const mapping = {
        leftTableId: from === 'left' ? tableId : t.externalTableId,
        rightTableId: from === 'left' ? t.externalTableId : tableId,
        syncDirection: 'both' as const,
        filter: null,
        matchOnFieldId: null,
        matchOnSecondaryFieldId: null,
        conflictWinnerSide: from,
        conflictReview: false,
        deleteProtection: false,
        columnMappings: pairs.map((p) => ({
          ...p,
          syncDirection: 'both' as const,
          ownerSide: null,
          optionPairs: null,
        })),
      };
      return {
        saved: await saveMappings(sync.id, [...sync.mappings.tableMappings.map(toMappingInput), mapping]),
        name: t.name,
        dest: dest?.name,
        note: renamedNote([t, ...t.columns]),
      };
    },
    onSuccess: ({ saved, name, dest, note }) => {
      client.setQueryData(['core-base', sync.id], saved);
      showSuccess(`${name} was created in ${dest} and mapped.${note}`);
    },
    onError: (e) => showError(e, 'Could not create the table'),
  });
  const sides = [
    { from: 'left' as const, ext: sync.leftExternalBase, other: sync.rightExternalBase },
    { from: 'right' as const, ext: sync.rightExternalBase, other: sync.leftExternalBase },
  ];
  const rows = sides.flatMap((s) =>
    (s.ext?.externalTables ?? []).filter((t) => !paired.has(t.id)).map((t) => ({ ...s, table: t })),
  );
  if (rows.length === 0) return null;
  return (
    <Card withBorder>
      <Text fw={600} mb={4}>
        Tables without a partner
      </Text>
      <Text size="sm" c="dimmed" mb="xs">
        Copy a table to the other app (its fields with matching types) and sync the two.
      </Text>
      <Stack gap={6}>
        {rows.map((r) => (
          <Group key={r.table.id} justify="space-between">
            <Text size="sm">
              {r.ext?.name} · <b>{r.table.name}</b>
            </Text>
            <Button
              size="compact-sm"
              variant="light"
              loading={copy.isPending && copy.variables?.tableId === r.table.id}
              onClick={() => copy.mutate({ tableId: r.table.id, from: r.from })}
            >
              Create it in {r.other?.name}
            </Button>
          </Group>
        ))}
      </Stack>
    </Card>
  );
}

/** /syncs/{id}/table-mappings: which tables stay in step, and the way on to fields and the preview. */
export function TableMappingsPage() {
  const { id } = useParams();
  const sync = useCoreBase(id);
  if (sync.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the sync" />
      </Center>
    );
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  const s = sync.data;
  const mappings = s.mappings.tableMappings;
  const ready = Boolean(s.leftExternalBase && s.rightExternalBase);
  const anyFields = mappings.some((m) => m.columnMappings.length > 0);
  return (
    <Stack>
      <SyncNav sync={s} title="Tables & fields" />
      {!ready ? (
        <EmptyState
          title="Connect both apps first"
          text="Tables can be mapped once the sync has an app on each side."
          action={
            <Button component={Link} to={`/syncs/edit/${s.id}`}>
              Choose the apps
            </Button>
          }
        />
      ) : (
        <>
          <Group>
            <AutomapTablesButton sync={s} />
            <Button variant="default" component={Link} to={`/syncs/${s.id}/table-mapping-editor/0`}>
              Add a table pair
            </Button>
          </Group>
          {mappings.length === 0 ? (
            <EmptyState
              title="No tables mapped yet"
              text={`Automap pairs the tables of ${s.leftExternalBase?.name} and ${s.rightExternalBase?.name} by their names, fields and values, and explains each pair; or add a pair yourself.`}
            />
          ) : (
            <Card withBorder padding={0}>
              <Table striped>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>
                      {s.leftExternalBase?.name} ⇄ {s.rightExternalBase?.name}
                    </Table.Th>
                    <Table.Th>Direction</Table.Th>
                    <Table.Th>Fields</Table.Th>
                    <Table.Th>Match on</Table.Th>
                    <Table.Th />
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {mappings.map((m) => (
                    <MappingRow key={m.id} sync={s} mapping={m} />
                  ))}
                </Table.Tbody>
              </Table>
            </Card>
          )}
          <UnpairedTables sync={s} />
          <Group>
            {s.syncState === 'on' ? (
              // A live sync carries mapping changes on its next run; no preview step is needed.
              <Button component={Link} to={`/syncs/${s.id}`}>
                Back to the overview
              </Button>
            ) : (
              <Button component={Link} to={`/syncs/${s.id}/sync-preview/scan`} disabled={!anyFields}>
                Next: preview the first sync
              </Button>
            )}
            {!anyFields && mappings.length > 0 ? (
              <Text size="sm" c="dimmed">
                Map at least one field to preview.
              </Text>
            ) : null}
          </Group>
        </>
      )}
    </Stack>
  );
}
