import {
  type CoreBase,
  type Progress,
  type SyncPreview,
  type SyncPreviewStatus,
  stepOfStatus,
} from '@lockstep/contract';
import {
  Alert,
  Badge,
  Button,
  Card,
  Center,
  Group,
  Loader,
  Pagination,
  Progress as ProgressBar,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Stepper,
  Table,
  Tabs,
  Text,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { SyncNav } from '../components/sync-nav';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';
import { tableOf, useCoreBase, useInvalidateSync } from '../lib/sync-queries';

const STEPS = ['scan', 'merge', 'preview'] as const;
const WORKING: SyncPreviewStatus[] = ['new', 'downloading', 'download_finished', 'planning', 'applying'];
const FINAL: SyncPreviewStatus[] = ['done', 'cancelled'];

type Problem = {
  id: number;
  tableMappingId: string | null;
  kind: string;
  message: string;
  details: Record<string, unknown>;
};
type PreviewRecord = {
  externalTableId: string;
  side: 'left' | 'right';
  remoteId: string;
  fields: Record<string, unknown>;
  plan: string | null;
  /** For a record the preview updates: each written field's value before and after. */
  changes?: Record<string, [unknown, unknown]> | null;
};

function usePatchPreview(preview: SyncPreview) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (status: SyncPreviewStatus) =>
      api<SyncPreview>(`/rest/sync-preview/${preview.id}`, {
        method: 'PATCH',
        body: { id: preview.id, status },
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['sync-previews', preview.coreBaseId] }),
    onError: (e) => showError(e, 'The preview could not move on'),
  });
}

/** Downloading: live progress from the preview's tracking id. */
function ScanProgress({ preview }: { preview: SyncPreview }) {
  const progress = useQuery({
    queryKey: ['progress', preview.trackingId],
    queryFn: () => api<Progress>(`/rest/progress/${preview.trackingId}`),
    enabled: Boolean(preview.trackingId),
    refetchInterval: 700,
  });
  const p = progress.data;
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group gap="xs">
          <Loader size="xs" />
          <Text fw={600}>
            {preview.status === 'planning' ? 'Matching records…' : 'Reading the records of both apps…'}
          </Text>
        </Group>
        <ProgressBar value={p?.percent ?? (p && p.done > 0 ? 50 : 5)} animated aria-label="Scan progress" />
        <Text size="sm" c="dimmed">
          {p
            ? `${p.done.toLocaleString()}${p.total ? ` of ${p.total.toLocaleString()}` : ''} records read`
            : 'Starting…'}
          {p?.message ? ` · ${p.message}` : ''}. Nothing is written to your apps yet.
        </Text>
      </Stack>
    </Card>
  );
}

type ApplyProgressAnswer = {
  done: number;
  total: number;
  tables: { tableMappingId: string; done: number; total: number }[];
};

/** Applying: a bar per table pair with records in step so far of all, polled while it runs. */
function ApplyProgress({ sync, preview }: { sync: CoreBase; preview: SyncPreview }) {
  const progress = useQuery({
    queryKey: ['apply-progress', preview.id],
    queryFn: () => api<ApplyProgressAnswer>(`/rest/sync-preview/${preview.id}/apply-progress`),
    refetchInterval: 1000,
  });
  const name = (id: string) => {
    const m = sync.mappings.tableMappings.find((x) => x.id === id);
    return m
      ? `${tableOf(sync, m.leftTableId)?.table.name ?? '?'} ⇄ ${tableOf(sync, m.rightTableId)?.table.name ?? '?'}`
      : 'Table pair';
  };
  const pct = (done: number, total: number) => (total > 0 ? Math.round((done / total) * 100) : 100);
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Group gap="xs">
          <Loader size="xs" />
          <Text fw={600}>Applying: writing the first sync to both apps…</Text>
          {progress.data ? (
            <Text c="dimmed" size="sm" data-testid="apply-progress">
              {progress.data.done.toLocaleString()} of {progress.data.total.toLocaleString()} records in step
            </Text>
          ) : null}
        </Group>
        {progress.data?.tables.map((t) => (
          <Stack key={t.tableMappingId} gap={4}>
            <Group justify="space-between">
              <Text size="sm">{name(t.tableMappingId)}</Text>
              <Text size="sm" c="dimmed">
                {t.done.toLocaleString()} / {t.total.toLocaleString()}
              </Text>
            </Group>
            <ProgressBar value={pct(t.done, t.total)} aria-label={`${name(t.tableMappingId)} applied`} />
          </Stack>
        ))}
      </Stack>
    </Card>
  );
}

/**
 * What the user should know before applying (values the other app cannot hold, a pair without a
 * match field whose records look shared): the problems list with the way to fix them.
 */
function PreviewWarnings({ sync, preview }: { sync: CoreBase; preview: SyncPreview }) {
  const navigate = useNavigate();
  const problems = useQuery({
    queryKey: ['preview-problems', preview.id, preview.updatedAt, 'count'],
    queryFn: () => api<Paged<Problem>>(`/rest/sync-preview/${preview.id}/problems?skip=0&take=1`),
  });
  if (!problems.data) return null;
  if (problems.data.total === 0)
    return (
      <Text size="sm" c="green.8" data-testid="preview-no-problems">
        No problems found: every value can be written to the other app.
      </Text>
    );
  return (
    <Alert color="yellow" title="Before you apply">
      <Stack gap="xs">
        <Text size="sm">
          Records with these values are synced without them and become issues. Pair the options (or change the
          field mapping), then scan again.
        </Text>
        <ProblemsList preview={preview} />
        <Group>
          <Button size="xs" variant="light" onClick={() => navigate(`/syncs/${sync.id}/table-mappings`)}>
            Open the field mappings
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}

function ProblemsList({ preview }: { preview: SyncPreview }) {
  const [page, setPage] = useState(1);
  const problems = useQuery({
    queryKey: ['preview-problems', preview.id, preview.updatedAt, page],
    queryFn: () => api<Paged<Problem>>(`/rest/sync-preview/${preview.id}/problems?${pageQuery(page)}`),
  });
  if (problems.isLoading) return <Loader size="sm" aria-label="Loading problems" />;
  if (problems.error) return <ErrorAlert error={problems.error} title="Could not load the problems" />;
  if (!problems.data || problems.data.total === 0) return <Text c="dimmed">No problems.</Text>;
  return (
    <Stack gap="xs">
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Problem</Table.Th>
            <Table.Th>Records</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {problems.data.items.map((p) => (
            <Table.Tr key={p.id}>
              <Table.Td>
                <Badge color={p.kind === 'duplicate' ? 'red' : 'yellow'} variant="light" mr="xs">
                  {p.kind === 'duplicate'
                    ? 'duplicate key'
                    : p.kind === 'no_match_field'
                      ? 'no match field'
                      : p.kind === 'value'
                        ? 'value'
                        : p.kind === 'required_unmapped'
                          ? 'required, not mapped'
                          : 'missing key'}
                </Badge>
                {p.message}
              </Table.Td>
              <Table.Td>
                <Text size="xs" ff="monospace">
                  {Array.isArray(p.details.recordIds)
                    ? (p.details.recordIds as string[]).join(', ')
                    : String(p.details.recordId ?? '')}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {problems.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(problems.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}

const PLAN_TABS = [
  {
    value: 'create_right',
    label: (s: CoreBase) => `New in ${s.rightExternalBase?.name}`,
    key: 'createRight',
  },
  { value: 'create_left', label: (s: CoreBase) => `New in ${s.leftExternalBase?.name}`, key: 'createLeft' },
  {
    value: 'update_right',
    label: (s: CoreBase) => `Updated in ${s.rightExternalBase?.name}`,
    key: 'updateRight',
  },
  {
    value: 'update_left',
    label: (s: CoreBase) => `Updated in ${s.leftExternalBase?.name}`,
    key: 'updateLeft',
  },
  { value: 'conflict', label: () => 'Conflicts', key: 'conflicts' },
  { value: 'unchanged', label: () => 'Already in step', key: 'unchanged' },
] as const;

function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') {
    if ('json' in (v as object)) return JSON.stringify((v as { json: unknown }).json);
    if (Array.isArray(v)) return v.map(valueText).join(', ');
    return JSON.stringify(v);
  }
  // Timestamps in the user's time zone.
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v) && !Number.isNaN(Date.parse(v)))
    return new Date(v).toLocaleString();
  return String(v);
}

/**
 * The table whose records a plan lists, for one table pair: creates come from the source side,
 * updates show the record that is updated, the rest the left side's.
 */
function tableOfPlan(plan: string, pair: { leftTableId: string; rightTableId: string }) {
  if (plan === 'create_left' || plan === 'update_right') return pair.rightTableId;
  return pair.leftTableId;
}

function RecordsOfPlan({
  sync,
  preview,
  plan,
  pair,
}: {
  sync: CoreBase;
  preview: SyncPreview;
  plan: string;
  pair: { leftTableId: string; rightTableId: string };
}) {
  const [page, setPage] = useState(1);
  const externalTableId = tableOfPlan(plan, pair);
  const records = useQuery({
    queryKey: ['preview-records', preview.id, preview.updatedAt, plan, externalTableId, page],
    queryFn: () =>
      api<Paged<PreviewRecord>>(
        `/rest/sync-preview/${preview.id}/records?${pageQuery(page, { plan, externalTableId })}`,
      ),
  });
  if (records.isLoading) return <Loader size="sm" aria-label="Loading records" />;
  if (records.error) return <ErrorAlert error={records.error} title="Could not load the records" />;
  if (!records.data || records.data.total === 0)
    return (
      <Text c="dimmed" p="md">
        No records.
      </Text>
    );
  const table = tableOf(sync, externalTableId)?.table;
  // The mapped fields of that table: what the sync carries, not every column the app has.
  const mapped = new Set(
    sync.mappings.tableMappings.flatMap((m) =>
      m.columnMappings.flatMap((c) => [c.leftColumnId, c.rightColumnId]),
    ),
  );
  const columns = (table?.externalColumns ?? []).filter((c) => mapped.has(c.id)).slice(0, 6);
  const side = tableOf(sync, externalTableId)?.side;
  // Updates show each written field, before and after.
  const updates = plan.startsWith('update_');
  const nameOf = (remoteId: string) =>
    table?.externalColumns.find((c) => c.remoteId === remoteId)?.name ?? remoteId;
  const app = side === 'left' ? sync.leftExternalBase?.name : sync.rightExternalBase?.name;
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed">
        {records.data.total.toLocaleString()} record{records.data.total === 1 ? '' : 's'} of {app} ·{' '}
        {table?.name}
      </Text>
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            {columns.map((c) => (
              <Table.Th key={c.id}>{c.name}</Table.Th>
            ))}
            {updates ? <Table.Th>Changes</Table.Th> : null}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {records.data.items.map((r) => (
            <Table.Tr key={`${r.side}:${r.remoteId}`}>
              {columns.map((c) => (
                <Table.Td key={c.id}>
                  <Text size="sm" lineClamp={1}>
                    {valueText(r.fields[c.remoteId])}
                  </Text>
                </Table.Td>
              ))}
              {updates ? (
                <Table.Td data-testid="preview-changes">
                  {Object.entries(r.changes ?? {}).map(([field, [before, after]]) => (
                    <Text size="sm" key={field}>
                      <b>{nameOf(field)}</b>: <del>{valueText(before) || '(empty)'}</del> →{' '}
                      {valueText(after) || '(empty)'}
                    </Text>
                  ))}
                </Table.Td>
              ) : null}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {records.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(records.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}

function Summary({ sync, summary }: { sync: CoreBase; summary: Record<string, unknown> }) {
  const n = (k: string) => Number(summary[k] ?? 0);
  const tiles = [
    ['Matched pairs', n('pairs')],
    [`To create in ${sync.rightExternalBase?.name}`, n('createRight')],
    [`To create in ${sync.leftExternalBase?.name}`, n('createLeft')],
    [`To update in ${sync.rightExternalBase?.name}`, n('updateRight')],
    [`To update in ${sync.leftExternalBase?.name}`, n('updateLeft')],
    ['Conflicts', n('conflicts')],
  ] as const;
  return (
    <SimpleGrid cols={{ base: 2, md: 3, xl: 6 }}>
      {tiles.map(([label, value]) => (
        <Card key={label} withBorder padding="sm">
          <Text size="xs" c="dimmed">
            {label}
          </Text>
          <Text fw={700} size="xl" data-testid={`summary-${label}`}>
            {value.toLocaleString()}
          </Text>
        </Card>
      ))}
    </SimpleGrid>
  );
}

/** A plan's count for the table pair on show (the totals for a preview planned before per-pair counts). */
function countOf(preview: SyncPreview, pairId: string | undefined, key: string): number {
  const byTable = preview.summary.byTable as Record<string, Record<string, number>> | undefined;
  const one = pairId ? byTable?.[pairId] : undefined;
  return Number((one ?? preview.summary)[key] ?? 0);
}

function PreviewBody({ sync, preview }: { sync: CoreBase; preview: SyncPreview }) {
  const navigate = useNavigate();
  const patch = usePatchPreview(preview);
  const { status } = preview;
  const error = typeof preview.summary.error === 'string' ? preview.summary.error : null;
  const [tab, setTab] = useState<string | null>('create_right');
  // One table pair at a time: records of different tables never share a grid.
  const pairs = sync.mappings.tableMappings;
  const [pairId, setPairId] = useState<string | null>(pairs[0]?.id ?? null);
  const pair = pairs.find((m) => m.id === pairId) ?? pairs[0];
  const pairName = (m: (typeof pairs)[number]) =>
    `${tableOf(sync, m.leftTableId)?.table.name ?? '?'} ⇄ ${tableOf(sync, m.rightTableId)?.table.name ?? '?'}`;

  if (status === 'new' || status === 'downloading' || status === 'download_finished' || status === 'planning')
    return <ScanProgress preview={preview} />;
  if (status === 'download_failed' || status === 'applying_failed')
    return (
      <Stack>
        <Alert
          color="red"
          title={status === 'download_failed' ? 'Reading the records failed' : 'Applying failed'}
        >
          {error ?? 'Something went wrong.'}{' '}
          {status === 'applying_failed' ? 'Records that failed are on the Issues page.' : ''}
        </Alert>
        <Group>
          <Button
            loading={patch.isPending}
            onClick={() => patch.mutate(status === 'download_failed' ? 'downloading' : 'applying')}
          >
            Try again
          </Button>
          <Button variant="default" onClick={() => patch.mutate('cancelled')}>
            Cancel the preview
          </Button>
        </Group>
      </Stack>
    );
  if (status === 'planning_problem')
    return (
      <Stack>
        <Alert color="orange" title="Some records cannot be matched yet">
          {error ??
            'Two or more records on one side share the value of the match field, so Lockstep cannot tell which one matches. Fix them in your app (or choose another match field), then scan again.'}
        </Alert>
        <Summary sync={sync} summary={preview.summary} />
        <ProblemsList preview={preview} />
        <Group>
          <Button loading={patch.isPending} onClick={() => patch.mutate('downloading')}>
            Scan again
          </Button>
          <Button variant="default" onClick={() => navigate(`/syncs/${sync.id}/table-mappings`)}>
            Change the match field
          </Button>
        </Group>
      </Stack>
    );
  if (status === 'applying') return <ApplyProgress sync={sync} preview={preview} />;
  // in_review
  return (
    <Stack>
      <Text c="dimmed">Nothing has been written yet. This is what applying will do:</Text>
      <Summary sync={sync} summary={preview.summary} />
      {Number(preview.summary.missingKeys ?? 0) > 0 ? (
        <Alert color="yellow">
          {String(preview.summary.missingKeys)} record(s) have no value in the match field; they will be
          created on the other side rather than matched.
        </Alert>
      ) : null}
      <PreviewWarnings sync={sync} preview={preview} />
      {/* Above the records: apply is reachable without scrolling past them. */}
      <Group>
        <Button color="green" loading={patch.isPending} onClick={() => patch.mutate('applying')}>
          Apply and start syncing
        </Button>
        <Button variant="default" onClick={() => patch.mutate('downloading')}>
          Scan again
        </Button>
        <Button variant="subtle" color="gray" onClick={() => patch.mutate('cancelled')}>
          Cancel
        </Button>
      </Group>
      {pairs.length > 1 ? (
        <SegmentedControl
          aria-label="Table pair"
          value={pair?.id ?? ''}
          onChange={setPairId}
          data={pairs.map((m) => ({ value: m.id, label: pairName(m) }))}
        />
      ) : null}
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List>
          {PLAN_TABS.map((t) => (
            <Tabs.Tab key={t.value} value={t.value}>
              {t.label(sync)} ({countOf(preview, pair?.id, t.key).toLocaleString()})
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {PLAN_TABS.map((t) => (
          <Tabs.Panel key={t.value} value={t.value} pt="sm">
            {pair ? <RecordsOfPlan sync={sync} preview={preview} plan={t.value} pair={pair} /> : null}
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}

/**
 * /syncs/{id}/sync-preview/{step}: scan (read both sides), merge (match, problems) and preview
 * (what applying will do, record by record), then Apply. The step follows the server's status.
 */
export function SyncPreviewPage() {
  const { id, step } = useParams();
  const navigate = useNavigate();
  const client = useQueryClient();
  const sync = useCoreBase(id);
  const [polling, setPolling] = useState(true);
  const previews = useQuery({
    queryKey: ['sync-previews', id],
    queryFn: async () => (await api<{ items: SyncPreview[] }>(`/rest/sync-preview/core-bases/${id}`)).items,
    enabled: Boolean(id),
    refetchInterval: polling ? 1000 : false,
  });
  const latest = previews.data?.[0];
  const current = latest && latest.status !== 'cancelled' ? latest : undefined;
  const working = current ? WORKING.includes(current.status) : false;
  useEffect(() => setPolling(working), [working]);
  useEffect(() => {
    if (!current || FINAL.includes(current.status)) return;
    const want = stepOfStatus(current.status);
    if (want !== step) navigate(`/syncs/${id}/sync-preview/${want}`, { replace: true });
  }, [current, step, id, navigate]);
  // Applying ends on the sync's overview: it is on now, and that is where its runs show.
  const invalidate = useInvalidateSync();
  const seenUnfinished = useRef<string | null>(null);
  useEffect(() => {
    if (current && current.status !== 'done') seenUnfinished.current = current.id;
    if (current?.status === 'done' && seenUnfinished.current === current.id) {
      seenUnfinished.current = null;
      showSuccess('The first sync is done: the sync is on and carries changes as they happen.');
      void invalidate(id as string);
      navigate(`/syncs/${id}`);
    }
  }, [current, id, navigate, invalidate]);
  const start = useMutation({
    mutationFn: () =>
      api<SyncPreview>('/rest/sync-preview/create', { method: 'POST', body: { coreBaseId: id } }),
    onSuccess: () => {
      setPolling(true);
      return client.invalidateQueries({ queryKey: ['sync-previews', id] });
    },
  });

  if (sync.isLoading || previews.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the preview" />
      </Center>
    );
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  const s = sync.data;
  const active =
    step && (STEPS as readonly string[]).includes(step) ? STEPS.indexOf(step as (typeof STEPS)[number]) : 0;
  const mapped = s.mappings.tableMappings.some((m) => m.columnMappings.length > 0);
  const startCard = (
    <EmptyState
      title={current?.status === 'done' ? 'The first sync is done' : 'Preview the first sync'}
      text={
        mapped
          ? 'Lockstep reads the records of both apps, matches them on the match field and shows what it would create or update on each side. Nothing is written until you apply.'
          : 'Map at least one table pair with its fields first.'
      }
      action={
        <Button loading={start.isPending} disabled={!mapped} onClick={() => start.mutate()}>
          {current?.status === 'done' ? 'Preview again' : 'Start scanning'}
        </Button>
      }
    />
  );
  return (
    <Stack>
      <SyncNav sync={s} title="Preview the first sync" />
      <Stepper active={current ? active : 0} size="sm" allowNextStepsSelect={false}>
        <Stepper.Step label="Scan" description="Read both apps" />
        <Stepper.Step label="Merge" description="Match records" />
        <Stepper.Step label="Preview" description="Check and apply" />
      </Stepper>
      {previews.error ? <ErrorAlert error={previews.error} title="Could not load the preview" /> : null}
      {start.error ? <ErrorAlert error={start.error} title="Could not start the preview" /> : null}
      {!current || current.status === 'done' ? startCard : <PreviewBody sync={s} preview={current} />}
    </Stack>
  );
}
