import { type CoreBase, syncPermission } from '@lockstep/contract';
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Center,
  Group,
  Loader,
  Modal,
  Pagination,
  Progress,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { DryRunReview } from '../components/dry-run-review';
import { ErrorAlert } from '../components/error-alert';
import { SyncActivity } from '../components/sync-activity';
import { SyncNav } from '../components/sync-nav';
import { ValueDriftCheck } from '../components/value-drift-check';
import { WebflowPublish } from '../components/webflow-publish';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { usePlan } from '../lib/queries';
import { tableOf, useCoreBase, useInvalidateSync, useSyncStatus } from '../lib/sync-queries';
import { LABEL_COLOR } from './syncs-page';

type Drift = {
  tables: {
    tableMappingId: string;
    linked: number;
    onlyLeft: number;
    onlyRight: number;
    syncDisabled: number;
    pendingDeletes: number;
    openIssues: number;
  }[];
  otherIssues: number;
};
type Approval = { id: string; side: string; remoteId: string | null; reason: string; createdAt: string };
type Conflict = {
  id: string;
  coreMetaRecordId: string;
  columnMappingId: string | null;
  left: unknown;
  right: unknown;
  createdAt: string;
};

const show = (v: unknown) =>
  v === null || v === undefined ? '(empty)' : typeof v === 'object' ? JSON.stringify(v) : String(v);

function DriftReport({ sync }: { sync: CoreBase }) {
  const drift = useQuery({
    queryKey: ['drift', sync.id],
    queryFn: () => api<Drift>(`/rest/core-bases/${sync.id}/drift-report`),
    refetchInterval: 5000,
  });
  if (drift.isLoading) return <Loader size="sm" aria-label="Loading record counts" />;
  if (drift.error) return <ErrorAlert error={drift.error} title="Could not load the record counts" />;
  const leftName = sync.leftExternalBase?.name ?? 'First app';
  const rightName = sync.rightExternalBase?.name ?? 'Second app';
  if (!drift.data || drift.data.tables.length === 0) return <Text c="dimmed">No tables are mapped yet.</Text>;
  return (
    <Table>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Table pair</Table.Th>
          <Table.Th>In step</Table.Th>
          <Table.Th>Only in {leftName}</Table.Th>
          <Table.Th>Only in {rightName}</Table.Th>
          <Table.Th>Switched off</Table.Th>
          <Table.Th>Deletes held</Table.Th>
          <Table.Th>Issues</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {drift.data.tables.map((t) => {
          const m = sync.mappings.tableMappings.find((x) => x.id === t.tableMappingId);
          const name = m
            ? `${tableOf(sync, m.leftTableId)?.table.name} ⇄ ${tableOf(sync, m.rightTableId)?.table.name}`
            : '?';
          return (
            <Table.Tr key={t.tableMappingId}>
              <Table.Td>{name}</Table.Td>
              <Table.Td data-testid="drift-linked">{t.linked.toLocaleString()}</Table.Td>
              <Table.Td c={t.onlyLeft ? 'orange' : undefined}>{t.onlyLeft.toLocaleString()}</Table.Td>
              <Table.Td c={t.onlyRight ? 'orange' : undefined}>{t.onlyRight.toLocaleString()}</Table.Td>
              <Table.Td>{t.syncDisabled.toLocaleString()}</Table.Td>
              <Table.Td>{t.pendingDeletes.toLocaleString()}</Table.Td>
              <Table.Td>
                {t.openIssues > 0 ? (
                  <Anchor component={Link} to={`/syncs/${sync.id}/issues`} c="red">
                    {t.openIssues}
                  </Anchor>
                ) : (
                  0
                )}
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

function DeleteApprovals({ sync }: { sync: CoreBase }) {
  const client = useQueryClient();
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: ['delete-approvals', sync.id, page],
    queryFn: () => api<Paged<Approval>>(`/rest/core-bases/${sync.id}/delete-approvals?${pageQuery(page)}`),
    refetchInterval: 10_000,
  });
  const decide = useMutation({
    mutationFn: ({ id, decision }: { id: string; decision: 'approve' | 'reject' }) =>
      api(`/rest/delete-approvals/${id}/${decision}`, { method: 'POST', body: {} }),
    onSuccess: (_r, v) => {
      showSuccess(v.decision === 'approve' ? 'The delete is carried out.' : 'The record is restored.');
      return client.invalidateQueries({ queryKey: ['delete-approvals', sync.id] });
    },
    onError: (e) => showError(e, 'Could not decide'),
  });
  if (!list.data || list.data.total === 0) return null;
  return (
    <Card withBorder>
      <Title order={4} mb="xs">
        Deletes waiting for you ({list.data.total})
      </Title>
      <Table>
        <Table.Tbody>
          {list.data.items.map((a) => (
            <Table.Tr key={a.id}>
              <Table.Td>
                <Text size="sm">{a.reason}</Text>
                <Text size="xs" c="dimmed">
                  {a.side === 'left' ? sync.leftExternalBase?.name : sync.rightExternalBase?.name} · record{' '}
                  {a.remoteId} · {new Date(a.createdAt).toLocaleString()}
                </Text>
              </Table.Td>
              <Table.Td>
                <Group gap="xs" justify="end" wrap="nowrap">
                  <Button
                    size="xs"
                    color="red"
                    onClick={() => decide.mutate({ id: a.id, decision: 'approve' })}
                  >
                    Delete it
                  </Button>
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => decide.mutate({ id: a.id, decision: 'reject' })}
                  >
                    Keep it
                  </Button>
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {list.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(list.data.total / PAGE_SIZE)} value={page} onChange={setPage} mt="xs" />
      ) : null}
    </Card>
  );
}

function HeldConflicts({ sync }: { sync: CoreBase }) {
  const client = useQueryClient();
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: ['held-conflicts', sync.id, page],
    queryFn: () => api<Paged<Conflict>>(`/rest/core-bases/${sync.id}/held-conflicts?${pageQuery(page)}`),
    refetchInterval: 10_000,
  });
  const resolve = useMutation({
    mutationFn: ({ id, winner }: { id: string; winner: 'left' | 'right' }) =>
      api(`/rest/held-conflicts/${id}/resolve`, { method: 'POST', body: { winner } }),
    onSuccess: () => {
      showSuccess('Resolved; the winning value is carried to the other side.');
      return client.invalidateQueries({ queryKey: ['held-conflicts', sync.id] });
    },
    onError: (e) => showError(e, 'Could not resolve the conflict'),
  });
  if (!list.data || list.data.total === 0) return null;
  const leftName = sync.leftExternalBase?.name ?? 'left';
  const rightName = sync.rightExternalBase?.name ?? 'right';
  return (
    <Card withBorder>
      <Title order={4} mb="xs">
        Conflicts waiting for you ({list.data.total})
      </Title>
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Record</Table.Th>
            <Table.Th>{leftName}</Table.Th>
            <Table.Th>{rightName}</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {list.data.items.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>
                <Anchor
                  component={Link}
                  size="sm"
                  to={`/syncs/${sync.id}/record-status/${c.coreMetaRecordId}`}
                >
                  Open record
                </Anchor>
              </Table.Td>
              <Table.Td>{show(c.left)}</Table.Td>
              <Table.Td>{show(c.right)}</Table.Td>
              <Table.Td>
                <Group gap="xs" justify="end" wrap="nowrap">
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => resolve.mutate({ id: c.id, winner: 'left' })}
                  >
                    Keep {leftName}
                  </Button>
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => resolve.mutate({ id: c.id, winner: 'right' })}
                  >
                    Keep {rightName}
                  </Button>
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {list.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(list.data.total / PAGE_SIZE)} value={page} onChange={setPage} mt="xs" />
      ) : null}
    </Card>
  );
}

function DeleteSync({ sync }: { sync: CoreBase }) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const remove = useMutation({
    mutationFn: () => api(`/rest/core-bases/${sync.id}?cascade=true`, { method: 'DELETE' }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['core-bases'] });
      void client.invalidateQueries({ queryKey: ['limit-data'] });
      showSuccess(`${sync.name} is deleted. Your apps keep their records.`);
      navigate('/syncs');
    },
    onError: (e) => showError(e, 'Could not delete the sync'),
  });
  return (
    <>
      <Button variant="subtle" color="red" onClick={() => setOpen(true)}>
        Delete sync
      </Button>
      <Modal opened={open} onClose={() => setOpen(false)} title={`Delete ${sync.name}?`}>
        <Stack>
          <Text size="sm">
            The sync stops and its mappings, logs and issues are removed. The records in your apps are not
            touched.
          </Text>
          <Group justify="end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate()}>
              Delete
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

/** /syncs/{id} and /syncs/{id}/overview: is it running, how far apart are the two sides, what needs me. */
export function SyncDetailPage() {
  const { id } = useParams();
  const sync = useCoreBase(id);
  const status = useSyncStatus(id, 3000);
  const plan = usePlan();
  const invalidate = useInvalidateSync();
  const toggle = useMutation({
    mutationFn: (on: boolean) =>
      api(`/rest/core-bases/${id}`, { method: 'PATCH', body: { syncState: on ? 'on' : 'off' } }),
    onSuccess: (_r, on) => {
      showSuccess(on ? 'The sync is on.' : 'The sync is paused; changes wait until you switch it on.');
      return invalidate(id as string);
    },
    onError: (e) => showError(e, 'Could not switch the sync'),
  });
  const runNow = useMutation({
    mutationFn: () => api(`/rest/core-bases/${id}/sync-now`, { method: 'POST', body: {} }),
    onSuccess: () => {
      showSuccess('A run is queued.');
      return invalidate(id as string);
    },
    onError: (e) => showError(e, 'Could not start a run'),
  });

  if (sync.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the sync" />
      </Center>
    );
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  const s = sync.data;
  const st = status.data;
  const on = s.syncState === 'on';
  const ready = Boolean(s.leftExternalBase && s.rightExternalBase && s.mappings.tableMappings.length > 0);
  const activate = syncPermission('activate', plan.subscription, plan.limits);
  const limits = plan.limits;
  const usage =
    limits && limits.recordLimit > 0 ? Math.min(100, (limits.recordCount / limits.recordLimit) * 100) : 0;

  return (
    <Stack>
      <SyncNav
        sync={s}
        actions={
          <Group gap="xs">
            <Button
              variant="default"
              loading={runNow.isPending}
              disabled={!on}
              onClick={() => runNow.mutate()}
            >
              Run now
            </Button>
            {on ? (
              <Button variant="default" loading={toggle.isPending} onClick={() => toggle.mutate(false)}>
                Pause
              </Button>
            ) : (
              <Button
                loading={toggle.isPending}
                disabled={!ready || !activate.allowed}
                title={activate.allowed ? undefined : activate.reason}
                onClick={() => toggle.mutate(true)}
              >
                Switch on
              </Button>
            )}
            <DeleteSync sync={s} />
          </Group>
        }
      />
      {!ready ? (
        <Alert color="blue" title="Finish setting up">
          {!s.leftExternalBase || !s.rightExternalBase ? (
            <>
              Choose the two apps to sync.{' '}
              <Anchor component={Link} to={`/syncs/edit/${s.id}`}>
                Choose apps
              </Anchor>
            </>
          ) : (
            <>
              Map the tables and fields to sync.{' '}
              <Anchor component={Link} to={`/syncs/${s.id}/table-mappings`}>
                Map tables
              </Anchor>
            </>
          )}
        </Alert>
      ) : !on && !s.lastSyncTime ? (
        <Alert color="blue" title="Preview the first sync">
          See record by record what the first sync will do before anything is written.{' '}
          <Anchor component={Link} to={`/syncs/${s.id}/sync-preview/scan`}>
            Open the preview
          </Anchor>
        </Alert>
      ) : null}
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
        <Card withBorder>
          <Text size="xs" c="dimmed">
            Status
          </Text>
          {st ? (
            <Group gap="xs" mt={4}>
              {/* An app that cannot be reached: the sync is not Active, whatever its runs say. */}
              <Badge
                color={st.unreachable ? 'red' : LABEL_COLOR[st.label]}
                size="lg"
                variant="light"
                data-testid="sync-label"
              >
                {st.unreachable ? `Can't reach ${st.unreachable}` : st.label}
              </Badge>
              {st.running ? <Loader size="xs" aria-label="Running" /> : null}
            </Group>
          ) : (
            <Loader size="xs" />
          )}
        </Card>
        <Card withBorder>
          <Text size="xs" c="dimmed">
            Last sync
          </Text>
          <Text fw={600}>{st?.lastSyncTime ? new Date(st.lastSyncTime).toLocaleString() : 'Never'}</Text>
        </Card>
        <Card withBorder>
          <Text size="xs" c="dimmed">
            Open issues
          </Text>
          <Anchor
            component={Link}
            to={`/syncs/${s.id}/issues`}
            fw={600}
            c={st?.openIssues ? 'red' : undefined}
          >
            {st?.openIssues ?? 0}
          </Anchor>
        </Card>
        <Card withBorder>
          <Text size="xs" c="dimmed">
            Records used of your plan
          </Text>
          <Text fw={600}>
            {limits
              ? `${limits.recordCount.toLocaleString()} of ${limits.recordLimit.toLocaleString()}`
              : '–'}
          </Text>
          <Progress
            value={usage}
            color={usage >= 90 ? 'red' : 'blue'}
            mt={4}
            aria-label="Record limit usage"
          />
        </Card>
      </SimpleGrid>
      <Card withBorder>
        <Group justify="space-between" mb="xs">
          <Title order={4}>
            {s.leftExternalBase?.name ?? 'First app'} ⇄ {s.rightExternalBase?.name ?? 'Second app'}
          </Title>
          <Anchor component={Link} to={`/syncs/${s.id}/table-mappings`} size="sm">
            Tables & fields
          </Anchor>
        </Group>
        <DriftReport sync={s} />
        <ValueDriftCheck sync={s} />
      </Card>
      {ready ? <DryRunReview sync={s} /> : null}
      <WebflowPublish sync={s} />
      <SyncActivity sync={s} />
      <DeleteApprovals sync={s} />
      <HeldConflicts sync={s} />
    </Stack>
  );
}
