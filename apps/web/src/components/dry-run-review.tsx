import type { CoreBase, DryRunAnswer, DryRunKind, DryRunWrite } from '@lockstep/contract';
import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Loader,
  Pagination,
  Progress,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { PAGE_SIZE, pageQuery } from '../lib/paged';
import { useInvalidateSync } from '../lib/sync-queries';
import { formatValue } from './change-diff-table';
import { ErrorAlert } from './error-alert';

const KIND_WORD: Record<DryRunKind, string> = { create: 'Create', update: 'Update', delete: 'Delete' };
const KIND_COLOR: Record<DryRunKind, string> = { create: 'green', update: 'blue', delete: 'red' };
const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;

/**
 * "What would the next run do?" on a sync's overview: a dry pass reads and reconciles as a run does
 * and lists the writes it would make, without writing. In dry-run mode every wake-up of the sync
 * makes such a pass instead of a run, and the user applies or discards the plan here.
 */
export function DryRunReview({ sync }: { sync: CoreBase }) {
  const client = useQueryClient();
  const invalidateSync = useInvalidateSync();
  const [page, setPage] = useState(1);
  const [pair, setPair] = useState<string | null>(null);
  const [kind, setKind] = useState<string>('all');
  const key = ['dry-run', sync.id];
  const plan = useQuery({
    queryKey: [...key, page, pair, kind],
    queryFn: () =>
      api<DryRunAnswer>(
        `/rest/core-bases/${sync.id}/dry-run?${pageQuery(page, { tableMappingId: pair, kind: kind === 'all' ? null : kind })}`,
      ),
    // Quick while a pass reads; slower in dry-run mode, where wake-ups make new passes.
    refetchInterval: (q) => {
      const d = q.state.data;
      if (!d) return false;
      if (d.next || (d.pass && ['queued', 'running'].includes(d.pass.status))) return 1000;
      return d.dryRunMode ? 5000 : false;
    },
  });
  const refresh = () => client.invalidateQueries({ queryKey: key });
  const start = useMutation({
    mutationFn: () => api(`/rest/core-bases/${sync.id}/dry-run`, { method: 'POST', body: {} }),
    onSuccess: refresh,
    onError: (e) => showError(e, 'Could not start the dry pass'),
  });
  const mode = useMutation({
    mutationFn: (on: boolean) =>
      api(`/rest/core-bases/${sync.id}`, { method: 'PATCH', body: { dryRun: on } }),
    onSuccess: (_r, on) => {
      showSuccess(
        on
          ? 'Dry-run mode is on: changes are planned for your review instead of written.'
          : 'Dry-run mode is off: the sync writes what waits.',
      );
      return Promise.all([invalidateSync(sync.id), refresh()]);
    },
    onError: (e) => showError(e, 'Could not switch dry-run mode'),
  });
  const apply = useMutation({
    mutationFn: () => api(`/rest/core-bases/${sync.id}/dry-run/apply`, { method: 'POST', body: {} }),
    onSuccess: () => {
      showSuccess('Applied: dry-run mode is off and a run is writing the changes.');
      return Promise.all([invalidateSync(sync.id), refresh()]);
    },
    onError: (e) => showError(e, 'Could not apply the plan'),
  });
  const discard = useMutation({
    mutationFn: () => api(`/rest/core-bases/${sync.id}/dry-run/discard`, { method: 'POST', body: {} }),
    onSuccess: () => {
      showSuccess('Discarded. The changes still wait in your apps and show again on the next pass.');
      return refresh();
    },
    onError: (e) => showError(e, 'Could not discard the plan'),
  });

  const d = plan.data;
  const dryRunMode = d?.dryRunMode ?? sync.dryRun ?? false;
  const pass = d?.pass ?? null;
  const reading = Boolean(d?.next) || (pass !== null && ['queued', 'running'].includes(pass.status));
  const appName = (side: 'left' | 'right') =>
    (side === 'left' ? sync.leftExternalBase?.name : sync.rightExternalBase?.name) ??
    (side === 'left' ? 'First app' : 'Second app');
  const pairName = (id: string) => {
    const p = pass?.tablePairs.find((t) => t.tableMappingId === id);
    return p ? `${p.leftTable} ⇄ ${p.rightTable}` : 'Table pair';
  };
  const progress = d?.next?.progress ?? pass?.progress;

  return (
    <Card withBorder data-testid="dry-run">
      <Group justify="space-between" mb="xs">
        <Title order={4}>What would the next run do?</Title>
        <Group gap="md">
          <Switch
            label="Dry-run mode"
            checked={dryRunMode}
            disabled={mode.isPending || plan.isLoading}
            onChange={(e) => mode.mutate(e.currentTarget.checked)}
          />
          <Button
            size="compact-sm"
            variant="light"
            loading={start.isPending || reading}
            onClick={() => start.mutate()}
          >
            What would the next run do?
          </Button>
        </Group>
      </Group>
      <Text size="xs" c="dimmed" mb="xs">
        {dryRunMode
          ? 'Dry-run mode is on: each change, "Run now" and the schedule make a plan to review here instead of writing to your apps.'
          : 'Reads both apps from where the last run stopped and lists what it would write, without writing anything.'}
      </Text>
      {plan.isLoading ? (
        <Loader size="sm" aria-label="Loading the plan" />
      ) : plan.error ? (
        <ErrorAlert error={plan.error} title="Could not load the plan" />
      ) : (
        <Stack gap="xs">
          {reading && progress ? (
            <Stack gap={2}>
              <Text size="sm">
                Reading your apps: {progress.pairsDone} of {plural(progress.pairs, 'table pair')} done
              </Text>
              <Progress
                value={progress.pairs ? Math.max(5, (progress.pairsDone / progress.pairs) * 100) : 5}
                animated
                aria-label="Dry pass progress"
              />
            </Stack>
          ) : null}
          {pass === null ? (
            reading ? null : (
              <Text size="sm" c="dimmed">
                No plan yet.
              </Text>
            )
          ) : pass.status === 'failed' ? (
            <Alert color="red" title="The dry pass stopped" role="alert">
              {pass.error}
            </Alert>
          ) : pass.status === 'discarded' ? (
            <Text size="sm" c="dimmed">
              The plan was discarded. The changes still wait in your apps and show again on the next pass.
            </Text>
          ) : pass.status === 'applied' ? (
            <Text size="sm" c="dimmed">
              The plan was applied: dry-run mode is off and a run writes the changes (see the activity below).
            </Text>
          ) : pass.status === 'done' && pass.total === 0 ? (
            <Alert color="green" title="Nothing to write: the apps are in step">
              {pass.error ?? `Checked ${new Date(pass.finishedAt ?? pass.createdAt).toLocaleString()}.`}
            </Alert>
          ) : pass.status === 'done' && d ? (
            <Stack gap="xs">
              {pass.error ? <Alert color="yellow">{pass.error}</Alert> : null}
              <Text size="sm" fw={600}>
                The next run would make {plural(pass.total, 'write')}:{' '}
                {pass.tablePairs
                  .filter((t) => t.create + t.update + t.delete > 0)
                  .map(
                    (t) =>
                      `${t.leftTable} ⇄ ${t.rightTable}: ${t.create} to create, ${t.update} to update, ${t.delete} to delete`,
                  )
                  .join('; ')}
              </Text>
              <Group gap="xs">
                {pass.tablePairs.length > 1 ? (
                  <Select
                    size="xs"
                    placeholder="Every table pair"
                    aria-label="Table pair"
                    clearable
                    value={pair}
                    onChange={(v) => {
                      setPair(v);
                      setPage(1);
                    }}
                    data={pass.tablePairs.map((t) => ({
                      value: t.tableMappingId,
                      label: `${t.leftTable} ⇄ ${t.rightTable}`,
                    }))}
                  />
                ) : null}
                <SegmentedControl
                  size="xs"
                  value={kind}
                  onChange={(v) => {
                    setKind(v);
                    setPage(1);
                  }}
                  data={[
                    { value: 'all', label: 'All' },
                    { value: 'create', label: 'Creates' },
                    { value: 'update', label: 'Updates' },
                    { value: 'delete', label: 'Deletes' },
                  ]}
                />
              </Group>
              <PlannedWrites writes={d.writes.items} pairName={pairName} appName={appName} />
              {d.writes.total > PAGE_SIZE ? (
                <Pagination total={Math.ceil(d.writes.total / PAGE_SIZE)} value={page} onChange={setPage} />
              ) : null}
              <Group gap="xs" align="start" wrap="nowrap">
                <Button
                  color="blue"
                  loading={apply.isPending}
                  disabled={sync.syncState !== 'on'}
                  title={sync.syncState === 'on' ? undefined : 'Switch the sync on to apply the plan.'}
                  onClick={() => apply.mutate()}
                >
                  Apply
                </Button>
                <Button variant="default" loading={discard.isPending} onClick={() => discard.mutate()}>
                  Discard
                </Button>
              </Group>
              <Text size="xs" c="dimmed">
                Apply turns dry-run mode off and runs the sync now. The run reads again from the same place,
                so it writes what you reviewed plus anything that changed since. Discard clears this plan and
                keeps dry-run mode as it is: nothing is lost, the changes still wait in your apps and show
                again on the next pass.
              </Text>
            </Stack>
          ) : null}
        </Stack>
      )}
    </Card>
  );
}

/** The writes of one page, grouped by table pair: each record with its fields before -> after. */
function PlannedWrites({
  writes,
  pairName,
  appName,
}: {
  writes: DryRunWrite[];
  pairName: (id: string) => string;
  appName: (side: 'left' | 'right') => string;
}) {
  const groups = new Map<string, DryRunWrite[]>();
  for (const w of writes) groups.set(w.tableMappingId, [...(groups.get(w.tableMappingId) ?? []), w]);
  if (writes.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No planned writes of this kind.
      </Text>
    );
  return (
    <Stack gap="sm">
      {[...groups.entries()].map(([id, items]) => (
        <Stack key={id} gap={4} data-testid="dry-run-group">
          <Text size="sm" fw={600}>
            {pairName(id)}
          </Text>
          <Table withTableBorder>
            <Table.Tbody>
              {items.map((w) => (
                <Table.Tr key={w.id} data-testid="dry-run-write">
                  <Table.Td style={{ verticalAlign: 'top', width: '35%' }}>
                    <Group gap={6}>
                      <Badge color={KIND_COLOR[w.kind]} variant="light">
                        {KIND_WORD[w.kind]}
                      </Badge>
                      <Text size="sm">{w.name ?? w.recordId ?? w.sourceId}</Text>
                    </Group>
                    <Text size="xs" c="dimmed">
                      in {appName(w.side)}
                      {w.recordId ? ` · record ${w.recordId}` : ''}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {w.fields.map((f) => (
                      <Text size="sm" key={f.fieldId}>
                        <b>{f.field}</b>: {formatValue(f.before)} → {formatValue(f.after)}
                      </Text>
                    ))}
                    {w.conflicts.map((c) => (
                      <Text size="xs" c="orange" key={`c-${c.field}`}>
                        Conflict on {c.field}: {appName('left')} had {formatValue(c.left)}, {appName('right')}{' '}
                        had {formatValue(c.right)};{' '}
                        {c.winner ? `${appName(c.winner)} wins` : 'held for you to decide'}
                      </Text>
                    ))}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Stack>
      ))}
    </Stack>
  );
}
