import {
  Badge,
  Button,
  Card,
  Code,
  Group,
  Loader,
  Modal,
  SegmentedControl,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { LocalTime } from '../components/local-time';
import { api } from '../lib/api';

export type Job = {
  id: string;
  name: string;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  data: unknown;
  retryCount: number;
  retryLimit: number;
  output: unknown;
  priority: number;
  singletonKey: string | null;
  createdOn: string;
  startAfter: string;
  startedOn: string | null;
  completedOn: string | null;
  durationMs: number | null;
};
type JobPage = {
  items: Job[];
  total: number;
  skip: number;
  take: number;
  coreBaseId: string;
  byState: Record<Job['state'], number>;
};

const PAGE = 50;
const STATE_COLOR: Record<Job['state'], string> = {
  created: 'gray',
  retry: 'orange',
  active: 'blue',
  completed: 'teal',
  cancelled: 'dark',
  failed: 'red',
};
const STATE_LABEL: Record<Job['state'], string> = {
  created: 'Waiting',
  retry: 'Retrying',
  active: 'Active',
  completed: 'Completed',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

/** A duration in the unit a person reads at a glance. */
export function duration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** One bar per job, its length its duration against the longest on the page. */
function TimingChart({ jobs }: { jobs: Job[] }) {
  const timed = jobs.filter((j) => j.durationMs !== null);
  const longest = Math.max(1, ...timed.map((j) => j.durationMs as number));
  if (timed.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No job on this page has started yet.
      </Text>
    );
  return (
    <Stack gap={4} aria-label="Job durations">
      {timed.map((j) => (
        <Group key={j.id} gap="xs" wrap="nowrap">
          <Text size="xs" ff="monospace" w={160} truncate>
            {j.name}
          </Text>
          <Tooltip label={`${j.name}: ${duration(j.durationMs)}`}>
            <div
              data-testid={`bar-${j.id}`}
              style={{
                height: 12,
                width: `${Math.max(1, ((j.durationMs as number) / longest) * 100)}%`,
                maxWidth: '70%',
                background: `var(--mantine-color-${STATE_COLOR[j.state]}-5)`,
                borderRadius: 2,
              }}
            />
          </Tooltip>
          <Text size="xs" c="dimmed">
            {duration(j.durationMs)}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}

function Json({ label, value }: { label: string; value: unknown }) {
  return (
    <Stack gap={4}>
      <Text fw={600} size="sm">
        {label}
      </Text>
      <Code block aria-label={label}>
        {value === null || value === undefined ? 'none' : JSON.stringify(value, null, 2)}
      </Code>
    </Stack>
  );
}

/**
 * /job-viewer?externalBaseId=…: the queue's jobs of one sync, found from one of its apps (the owner
 * sees their own, staff any), with a state filter, a timing chart and each job's data and error.
 */
export function JobViewerPage() {
  const [params, setParams] = useSearchParams();
  const externalBaseId = params.get('externalBaseId') ?? '';
  const state = params.get('state') ?? '';
  const skip = Number(params.get('skip') ?? 0) || 0;
  const [draft, setDraft] = useState(externalBaseId);
  const [open, setOpen] = useState<Job | null>(null);
  const jobs = useQuery({
    queryKey: ['job-viewer', externalBaseId, state, skip],
    enabled: externalBaseId !== '',
    queryFn: () => {
      const q = new URLSearchParams({ externalBaseId, skip: String(skip), take: String(PAGE) });
      if (state) q.set('state', state);
      return api<JobPage>(`/rest/debug/jobs?${q}`);
    },
    refetchInterval: 5000,
  });
  const set = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setParams(next);
  };
  const data = jobs.data;
  return (
    <Stack>
      <Title order={2}>Job viewer</Title>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          set({ externalBaseId: draft.trim(), skip: '' });
        }}
      >
        <Group align="end">
          <TextInput
            label="Connected app id (externalBaseId)"
            value={draft}
            onChange={(e) => setDraft(e.currentTarget.value)}
            w={380}
          />
          <Button type="submit" variant="light">
            Show jobs
          </Button>
        </Group>
      </form>
      {externalBaseId === '' ? (
        <Text c="dimmed">Give the id of one of a sync's connected apps to see the sync's jobs.</Text>
      ) : null}
      {jobs.isLoading ? <Loader aria-label="Loading the jobs" /> : null}
      {jobs.error ? <ErrorAlert error={jobs.error} title="Could not load the jobs" /> : null}
      {data ? (
        <>
          <SegmentedControl
            aria-label="Filter by state"
            value={state}
            onChange={(v) => set({ state: v, skip: '' })}
            data={[
              { value: '', label: `All (${Object.values(data.byState).reduce((a, b) => a + b, 0)})` },
              ...(Object.keys(STATE_LABEL) as Job['state'][]).map((s) => ({
                value: s,
                label: `${STATE_LABEL[s]} (${data.byState[s] ?? 0})`,
              })),
            ]}
          />
          <Card withBorder>
            <Text fw={600} size="sm" mb="xs">
              How long each job took
            </Text>
            <TimingChart jobs={data.items} />
          </Card>
          {data.items.length === 0 ? <Text c="dimmed">No jobs kept for this sync.</Text> : null}
          {data.items.length > 0 ? (
            <Card withBorder>
              <Table highlightOnHover>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Job</Table.Th>
                    <Table.Th>State</Table.Th>
                    <Table.Th>Attempts</Table.Th>
                    <Table.Th>Created</Table.Th>
                    <Table.Th>Started</Table.Th>
                    <Table.Th>Duration</Table.Th>
                    <Table.Th />
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {data.items.map((j) => (
                    <Table.Tr key={j.id} data-testid={`job-${j.id}`}>
                      <Table.Td>
                        <Text ff="monospace" size="sm">
                          {j.name}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Badge color={STATE_COLOR[j.state]} variant="light">
                          {STATE_LABEL[j.state]}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        {j.retryCount + (j.startedOn ? 1 : 0)} of {j.retryLimit + 1}
                      </Table.Td>
                      <Table.Td>
                        <LocalTime iso={j.createdOn} />
                      </Table.Td>
                      <Table.Td>{j.startedOn ? <LocalTime iso={j.startedOn} /> : '—'}</Table.Td>
                      <Table.Td>{duration(j.durationMs)}</Table.Td>
                      <Table.Td>
                        <Button size="xs" variant="subtle" onClick={() => setOpen(j)}>
                          Details
                        </Button>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Card>
          ) : null}
          <Group>
            <Button
              variant="default"
              disabled={skip === 0}
              onClick={() => set({ skip: String(Math.max(0, skip - PAGE)) })}
            >
              Newer
            </Button>
            <Text size="sm" c="dimmed">
              {data.total === 0 ? 0 : skip + 1}–{Math.min(skip + PAGE, data.total)} of {data.total}
            </Text>
            <Button
              variant="default"
              disabled={skip + PAGE >= data.total}
              onClick={() => set({ skip: String(skip + PAGE) })}
            >
              Older
            </Button>
          </Group>
        </>
      ) : null}
      <Modal opened={open !== null} onClose={() => setOpen(null)} title={open?.name} size="lg">
        {open ? (
          <Stack>
            <Text size="sm">
              {STATE_LABEL[open.state]} · priority {open.priority} · retried {open.retryCount} of{' '}
              {open.retryLimit} · {duration(open.durationMs)}
            </Text>
            <Text size="xs" c="dimmed" ff="monospace">
              {open.id}
            </Text>
            <Json label="Data" value={open.data} />
            <Json
              label={open.state === 'failed' || open.state === 'retry' ? 'Error' : 'Output'}
              value={open.output}
            />
          </Stack>
        ) : null}
      </Modal>
    </Stack>
  );
}
