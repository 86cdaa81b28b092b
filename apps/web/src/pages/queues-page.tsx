import { Badge, Card, Group, Loader, Progress, Stack, Table, Text, Title, Tooltip } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';

type Queue = {
  name: string;
  created: number;
  retry: number;
  active: number;
  completed: number;
  failed: number;
  cancelled: number;
  completedLastHour: number;
  failedLastHour: number;
  oldestWaitingAt: string | null;
};
type Overview = { queues: Queue[]; workersAlive: number };

const STATES = [
  { key: 'active', label: 'Active', color: 'blue' },
  { key: 'created', label: 'Waiting', color: 'gray' },
  { key: 'retry', label: 'Retrying', color: 'orange' },
  { key: 'failed', label: 'Failed', color: 'red' },
  { key: 'completed', label: 'Completed', color: 'teal' },
] as const;

/** How long ago, in words a person reads at a glance. */
function age(iso: string | null): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/** One bar per queue: its jobs by state, in proportion. */
function StateBar({ q }: { q: Queue }) {
  const total = STATES.reduce((n, s) => n + q[s.key], 0);
  if (total === 0)
    return (
      <Text size="xs" c="dimmed">
        No jobs kept
      </Text>
    );
  return (
    <Progress.Root size="lg" aria-label={`${q.name} jobs by state`}>
      {STATES.map((s) =>
        q[s.key] > 0 ? (
          <Tooltip key={s.key} label={`${s.label}: ${q[s.key].toLocaleString()}`}>
            <Progress.Section value={(q[s.key] / total) * 100} color={s.color} />
          </Tooltip>
        ) : null,
      )}
    </Progress.Root>
  );
}

/** /settings/all-queues (staff): every job queue, what it holds and gets through, and the workers alive. */
export function QueuesPage() {
  const overview = useQuery({
    queryKey: ['queues'],
    queryFn: () => api<Overview>('/rest/debug/queues'),
    refetchInterval: 3000,
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Job queues</Title>
        {overview.data ? (
          <Badge color={overview.data.workersAlive > 0 ? 'teal' : 'red'} size="lg" variant="light">
            {overview.data.workersAlive} worker{overview.data.workersAlive === 1 ? '' : 's'} alive
          </Badge>
        ) : null}
      </Group>
      <Group gap="md">
        {STATES.map((s) => (
          <Group gap={4} key={s.key}>
            <Badge color={s.color} size="xs" circle>
              {' '}
            </Badge>
            <Text size="xs">{s.label}</Text>
          </Group>
        ))}
      </Group>
      {overview.isLoading ? <Loader aria-label="Loading the queues" /> : null}
      {overview.error ? <ErrorAlert error={overview.error} title="Could not load the queues" /> : null}
      {overview.data && overview.data.queues.length === 0 ? <Text c="dimmed">No queues yet.</Text> : null}
      {overview.data && overview.data.queues.length > 0 ? (
        <Card withBorder>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Queue</Table.Th>
                <Table.Th w="35%">Jobs by state</Table.Th>
                <Table.Th>Active</Table.Th>
                <Table.Th>Waiting</Table.Th>
                <Table.Th>Oldest waiting</Table.Th>
                <Table.Th>Done / failed in the last hour</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {overview.data.queues.map((q) => (
                <Table.Tr key={q.name} data-testid={`queue-${q.name}`}>
                  <Table.Td>
                    <Text ff="monospace" size="sm">
                      {q.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <StateBar q={q} />
                  </Table.Td>
                  <Table.Td>{q.active.toLocaleString()}</Table.Td>
                  <Table.Td>{(q.created + q.retry).toLocaleString()}</Table.Td>
                  <Table.Td>{age(q.oldestWaitingAt)}</Table.Td>
                  <Table.Td>
                    {q.completedLastHour.toLocaleString()} /{' '}
                    <Text span inherit c={q.failedLastHour > 0 ? 'red' : undefined}>
                      {q.failedLastHour.toLocaleString()}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      ) : null}
    </Stack>
  );
}
