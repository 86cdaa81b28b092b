import { type CoreBase, type SyncLabel, type SyncStatus, syncPermission } from '@lockstep/contract';
import {
  ActionIcon,
  Anchor,
  Badge,
  Button,
  Center,
  Group,
  Loader,
  Pagination,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { PauseAllSyncs } from '../components/pause-all-syncs';
import { api } from '../lib/api';
import { showError } from '../lib/notify';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { usePlan } from '../lib/queries';

export const LABEL_COLOR: Record<SyncLabel, string> = {
  'Syncing changes': 'blue',
  'Starting up': 'yellow',
  Active: 'green',
  Disabled: 'gray',
  'Initial sync': 'cyan',
};

function CreateSyncButton({ label }: { label: string }) {
  const plan = usePlan();
  const create = syncPermission('create', plan.subscription, plan.limits);
  if (create.allowed)
    return (
      <Button component={Link} to="/syncs/new">
        {label}
      </Button>
    );
  return (
    <Tooltip label={create.reason}>
      <Button data-disabled aria-disabled onClick={(e) => e.preventDefault()}>
        {label}
      </Button>
    </Tooltip>
  );
}

function SyncRow({ sync, status }: { sync: CoreBase; status: SyncStatus | undefined }) {
  const client = useQueryClient();
  const toggle = useMutation({
    mutationFn: (on: boolean) =>
      api<CoreBase>(`/rest/core-bases/${sync.id}`, {
        method: 'PATCH',
        body: { syncState: on ? 'on' : 'off' },
      }),
    onError: (e) => showError(e, 'Could not switch the sync'),
    onSettled: () => client.invalidateQueries({ queryKey: ['core-bases'] }),
  });
  const pin = useMutation({
    mutationFn: () => api(`/rest/core-bases/${sync.id}`, { method: 'PATCH', body: { pinned: !sync.pinned } }),
    onError: (e) => showError(e, 'Could not pin the sync'),
    onSettled: () => client.invalidateQueries({ queryKey: ['core-bases'] }),
  });
  const apps = [sync.leftExternalBase?.name, sync.rightExternalBase?.name];
  const lastSync = status?.lastSyncTime ?? sync.lastSyncTime;
  return (
    <Table.Tr>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <ActionIcon
            variant="subtle"
            color={sync.pinned ? 'yellow' : 'gray'}
            aria-label={sync.pinned ? `Unpin ${sync.name}` : `Pin ${sync.name}`}
            onClick={() => pin.mutate()}
          >
            {sync.pinned ? '★' : '☆'}
          </ActionIcon>
          <div>
            <Anchor component={Link} to={`/syncs/${sync.id}`} fw={600}>
              {sync.name}
            </Anchor>
            <Text size="xs" c="dimmed">
              {apps[0] && apps[1] ? `${apps[0]} ⇄ ${apps[1]}` : 'Setup not finished'}
            </Text>
          </div>
        </Group>
      </Table.Td>
      <Table.Td>
        {status ? (
          <Badge color={LABEL_COLOR[status.label]} variant="light">
            {status.label}
          </Badge>
        ) : (
          <Loader size="xs" />
        )}
        {status && status.openIssues > 0 ? (
          <Anchor
            component={Link}
            size="xs"
            c="red"
            ml="xs"
            to={`/syncs/${sync.id}/issues`}
          >{`${status.openIssues} issue${status.openIssues === 1 ? '' : 's'}`}</Anchor>
        ) : null}
      </Table.Td>
      <Table.Td>
        <Text size="sm">{lastSync ? new Date(lastSync).toLocaleString() : 'Never'}</Text>
      </Table.Td>
      <Table.Td>
        <Switch
          aria-label={`Sync ${sync.name} on`}
          checked={toggle.isPending ? toggle.variables : sync.syncState === 'on'}
          disabled={toggle.isPending || !sync.leftExternalBase || !sync.rightExternalBase}
          onChange={(e) => toggle.mutate(e.currentTarget.checked)}
        />
      </Table.Td>
    </Table.Tr>
  );
}

/** The syncs list: pinned first, each with its live status label, last sync and an on/off switch. */
export function SyncsPage() {
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const [name] = useDebouncedValue(search.trim(), 300);
  const filter = name ? JSON.stringify({ name }) : null;
  const syncs = useQuery({
    queryKey: ['core-bases', page, filter],
    queryFn: () => api<Paged<CoreBase>>(`/rest/core-bases?${pageQuery(page, { filter })}`),
  });
  const ids = syncs.data?.items.map((s) => s.id) ?? [];
  const statuses = useQuery({
    queryKey: ['sync-statuses', ids],
    queryFn: () =>
      api<{ statuses: SyncStatus[] }>(`/rest/core-bases/sync-status/batch?coreBaseIds=${ids.join(',')}`),
    enabled: ids.length > 0,
    refetchInterval: 5000,
  });
  const statusOf = new Map(statuses.data?.statuses.map((s) => [s.coreBaseId, s]));
  const noSyncsAtAll = syncs.data?.total === 0 && !filter;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Syncs</Title>
        {noSyncsAtAll ? null : (
          <Group gap="xs">
            <PauseAllSyncs />
            <CreateSyncButton label="New sync" />
          </Group>
        )}
      </Group>
      {noSyncsAtAll ? null : (
        <TextInput
          placeholder="Search syncs by name"
          aria-label="Search syncs"
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            setPage(1);
          }}
          maw={360}
        />
      )}
      {syncs.isLoading ? (
        <Center p="xl">
          <Loader aria-label="Loading syncs" />
        </Center>
      ) : null}
      {syncs.error ? <ErrorAlert error={syncs.error} title="Could not load your syncs" /> : null}
      {noSyncsAtAll ? (
        <EmptyState
          title="No syncs yet"
          text="A sync keeps two apps in step, both ways. Connect two apps, map their tables and fields, preview the first sync, then let it run."
          action={<CreateSyncButton label="Create your first sync" />}
        />
      ) : null}
      {syncs.data?.total === 0 && filter ? <Text c="dimmed">No sync has a name like “{name}”.</Text> : null}
      {syncs.data && syncs.data.items.length > 0 ? (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Sync</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Last sync</Table.Th>
              <Table.Th>On</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {syncs.data.items.map((s) => (
              <SyncRow key={s.id} sync={s} status={statusOf.get(s.id)} />
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {syncs.data && syncs.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(syncs.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}
