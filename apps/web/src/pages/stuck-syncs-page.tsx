import { Anchor, Button, Card, Loader, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { LocalTime } from '../components/local-time';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';

type StuckRun = {
  syncLogId: string;
  coreBaseId: string;
  ownerId: string;
  trigger: string;
  startedAt: string;
};

/** /stuck-syncs (staff): runs still marked running long after their job ended, each restartable. */
export function StuckSyncsPage() {
  const client = useQueryClient();
  const stuck = useQuery({
    queryKey: ['stuck-syncs'],
    queryFn: () => api<{ items: StuckRun[] }>('/rest/debug/stuck-syncs'),
    refetchInterval: 10_000,
  });
  const restart = useMutation({
    mutationFn: (id: string) => api(`/rest/debug/stuck-syncs/${id}/restart`, { method: 'POST', body: {} }),
    onSuccess: () => {
      showSuccess('The run is ended and its sync queued again.');
      return client.invalidateQueries({ queryKey: ['stuck-syncs'] });
    },
    onError: (e) => showError(e, 'Could not restart the run'),
  });
  return (
    <Stack>
      <Title order={2}>Stuck syncs</Title>
      <Text c="dimmed" size="sm">
        Runs still marked running more than 30 minutes after they started, with no job behind them. The reaper
        frees them every few minutes; Restart does it now and queues the sync again.
      </Text>
      {stuck.isLoading ? <Loader aria-label="Loading stuck runs" /> : null}
      {stuck.error ? <ErrorAlert error={stuck.error} title="Could not load the stuck runs" /> : null}
      {stuck.data && stuck.data.items.length === 0 ? <Text>No run is stuck.</Text> : null}
      {stuck.data && stuck.data.items.length > 0 ? (
        <Card withBorder>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Sync</Table.Th>
                <Table.Th>Started</Table.Th>
                <Table.Th>Trigger</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {stuck.data.items.map((r) => (
                <Table.Tr key={r.syncLogId}>
                  <Table.Td>
                    <Anchor component={Link} to={`/syncs/${r.coreBaseId}`} ff="monospace" size="sm">
                      {r.coreBaseId}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <LocalTime iso={r.startedAt} />
                  </Table.Td>
                  <Table.Td>{r.trigger}</Table.Td>
                  <Table.Td>
                    <Button
                      size="compact-sm"
                      loading={restart.isPending && restart.variables === r.syncLogId}
                      onClick={() => restart.mutate(r.syncLogId)}
                    >
                      Restart
                    </Button>
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
