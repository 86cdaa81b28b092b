import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  List,
  Modal,
  Progress,
  Stack,
  Table,
  Text,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../lib/api';
import { showError } from '../lib/notify';
import type { SyncLogDetail } from './run-view-types';

const OUTCOME = {
  restored: { color: 'green', label: 'restored' },
  held: { color: 'orange', label: 'held for you' },
  failed: { color: 'red', label: 'failed' },
  unsupported: { color: 'gray', label: 'not possible' },
} as const;

/**
 * "Undo this run" on a run's operations page, with a confirmation that says what happens in both
 * apps; on an undo run, its progress and what it did per record (restored or held).
 */
export function UndoRun({ run, names }: { run: SyncLogDetail; names: { left?: string; right?: string } }) {
  if (run.undoOf) return <UndoOutcome run={run} />;
  if (run.undoneBy)
    return (
      <Alert color="blue" title="This run was undone">
        <Anchor component={Link} to={`/operations/${run.undoneBy}`} size="sm">
          See the undo and what it restored or held
        </Anchor>
      </Alert>
    );
  if (run.status === 'running' || run.entries.total === 0) return null;
  return <UndoButton run={run} names={names} />;
}

function UndoButton({ run, names }: { run: SyncLogDetail; names: { left?: string; right?: string } }) {
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  const client = useQueryClient();
  const left = names.left ?? 'the first app';
  const right = names.right ?? 'the second app';
  const undo = useMutation({
    mutationFn: () => api<{ undoRunId: string }>(`/rest/sync-logs/${run.id}/undo`, { method: 'POST' }),
    onSuccess: ({ undoRunId }) => {
      setOpen(false);
      void client.invalidateQueries({ queryKey: ['sync-log'] });
      navigate(`/operations/${undoRunId}`);
    },
    onError: (e) => showError(e, 'Could not undo this run'),
  });
  return (
    <>
      <Group>
        <Button variant="light" color="orange" onClick={() => setOpen(true)}>
          Undo this run
        </Button>
      </Group>
      <Modal opened={open} onClose={() => setOpen(false)} title="Undo this run?" size="lg">
        <Stack>
          <Text size="sm">
            Lockstep puts back what this run changed, in both {left} and {right}, as a new run (“undo of this
            run”, with its own operations):
          </Text>
          <List size="sm" spacing={4}>
            <List.Item>
              Each record it updated gets the values it had before, in the app the run wrote to.
            </List.Item>
            <List.Item>Each record it created is deleted.</List.Item>
            <List.Item>Each record it deleted is created again from its values before the run.</List.Item>
            <List.Item>
              Those changes are then synced to the other app as any edit is, so both apps end in step at their
              values from before the run: the edits this run carried over are undone in the app they came from
              too.
            </List.Item>
          </List>
          <Text size="sm">
            A record changed since the run, in either app, is not touched: it is listed as held, with an issue
            saying what differs, and nothing of it is overwritten. A run can be undone once.
          </Text>
          <Group justify="end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Cancel
            </Button>
            <Button color="orange" loading={undo.isPending} onClick={() => undo.mutate()}>
              Undo this run
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

function UndoOutcome({ run }: { run: SyncLogDetail }) {
  const results = run.undoResults ?? [];
  const count = (o: keyof typeof OUTCOME) => results.filter((r) => r.outcome === o).length;
  const held = count('held');
  return (
    <Stack gap="sm">
      <Alert color={held > 0 ? 'orange' : 'blue'} title="Undo of a run">
        <Stack gap={4}>
          <Anchor component={Link} to={`/operations/${run.undoOf}`} size="sm">
            The run this undoes
          </Anchor>
          {run.status === 'running' ? (
            <>
              <Text size="sm">
                Undoing: {run.progress?.done ?? 0} of {run.progress?.total ?? '?'} records
              </Text>
              <Progress
                value={run.progress?.total ? (100 * run.progress.done) / run.progress.total : 0}
                aria-label="Undo progress"
              />
            </>
          ) : (
            <Text size="sm">
              {count('restored')} restored, {held} held
              {count('failed') ? `, ${count('failed')} failed` : ''}
              {count('unsupported') ? `, ${count('unsupported')} not possible` : ''}.
              {held > 0
                ? ' Held records changed since the run and were left as they are; the sync’s Issues page lists them.'
                : ''}
            </Text>
          )}
        </Stack>
      </Alert>
      {results.length > 0 ? (
        <Table verticalSpacing="xs" aria-label="Undo outcome per record">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Record</Table.Th>
              <Table.Th>Undid</Table.Th>
              <Table.Th>Outcome</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {results.map((r) => (
              <Table.Tr key={`${r.entryId}:${r.remoteId}`}>
                <Table.Td>
                  <Text size="sm" style={{ wordBreak: 'break-word' }}>
                    {r.remoteId ?? '-'} ({r.side})
                  </Text>
                </Table.Td>
                <Table.Td>{r.operation}</Table.Td>
                <Table.Td>
                  <Badge color={OUTCOME[r.outcome].color} variant="light">
                    {OUTCOME[r.outcome].label}
                  </Badge>
                  <Text size="xs" c="dimmed">
                    {r.message}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
    </Stack>
  );
}
