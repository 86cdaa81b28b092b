import type { CoreBase } from '@lockstep/contract';
import {
  Anchor,
  Box,
  Button,
  Card,
  Group,
  Pagination,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { LocalTime } from '../components/local-time';
import { RawJsonToggle } from '../components/raw-json-toggle';
import type { TraceEvent, TraceLog } from '../components/run-view-types';
import { PageLoader, SyncScreen } from '../components/sync-screen';
import { TraceData } from '../components/trace-data-view';
import { api } from '../lib/api';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';

function useParam(name: string): [string, (value: string | null) => void] {
  const [params, setParams] = useSearchParams();
  const set = (value: string | null) =>
    setParams((prev) => {
      const next = new URLSearchParams(prev);
      if (value) next.set(name, value);
      else next.delete(name);
      return next;
    });
  return [params.get(name) ?? '', set];
}

/** What one event recorded, by name, with the JSON it was stored as behind a toggle. */
function EventData({ sync, data }: { sync: CoreBase; data: Record<string, unknown> }) {
  if (Object.keys(data).length === 0) return null;
  return (
    <>
      <TraceData data={data} sync={sync} />
      <RawJsonToggle value={data} />
    </>
  );
}

function EventTree({ sync, events, depth = 0 }: { sync: CoreBase; events: TraceEvent[]; depth?: number }) {
  return (
    <Box component="ol" style={{ listStyle: 'none', margin: 0, paddingLeft: depth === 0 ? 0 : 20 }}>
      {events.map((e) => (
        <li key={e.id}>
          <Box
            py={6}
            style={{ borderLeft: depth > 0 ? '2px solid var(--mantine-color-gray-3)' : undefined }}
            pl={depth > 0 ? 'xs' : 0}
          >
            <Group gap="xs" wrap="nowrap" align="baseline">
              <LocalTime iso={e.createdAt} size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }} />
              <Text size="sm" fw={600}>
                {e.event}
              </Text>
            </Group>
            <Box mt={4}>
              <EventData sync={sync} data={e.data} />
            </Box>
          </Box>
          {e.children && e.children.length > 0 ? (
            <EventTree sync={sync} events={e.children} depth={depth + 1} />
          ) : null}
        </li>
      ))}
    </Box>
  );
}

function TraceView({ sync, traceId, onClose }: { sync: CoreBase; traceId: string; onClose: () => void }) {
  const trace = useQuery({
    queryKey: ['trace', sync.id, traceId],
    queryFn: () =>
      api<{ traceId: string; events: TraceEvent[] }>(
        `/rest/trace-log/${sync.id}/${encodeURIComponent(traceId)}?nestEvents=true`,
      ),
  });
  return (
    <Card withBorder>
      <Group justify="space-between" mb="sm">
        <Title order={4} style={{ wordBreak: 'break-all' }}>
          Trace {traceId}
        </Title>
        <Button variant="default" size="xs" onClick={onClose}>
          Back to all events
        </Button>
      </Group>
      {trace.isLoading ? <PageLoader label="Loading the trace" /> : null}
      {trace.error ? <ErrorAlert error={trace.error} title="Could not load the trace" /> : null}
      {trace.data ? (
        <>
          <Text size="xs" c="dimmed" mb="xs">
            Oldest first; an event is shown under the event that started it.
          </Text>
          <EventTree sync={sync} events={trace.data.events} />
        </>
      ) : null}
    </Card>
  );
}

function TraceEvents({
  sync,
  q,
  onTrace,
}: {
  sync: CoreBase;
  q: string;
  onTrace: (traceId: string) => void;
}) {
  const [page, setPage] = useState(1);
  const events = useQuery({
    queryKey: ['trace-logs', sync.id, q, page],
    queryFn: () => api<Paged<TraceLog>>(`/rest/trace-log/${sync.id}?${pageQuery(page, { q })}`),
  });
  if (events.isLoading) return <PageLoader label="Loading trace events" />;
  if (events.error) return <ErrorAlert error={events.error} title="Could not load the trace events" />;
  if (!events.data || events.data.total === 0)
    return q ? (
      <Text c="dimmed">No trace event matches “{q}”.</Text>
    ) : (
      <EmptyState
        title="No trace events yet"
        text="Each run records what it read and wrote as trace events; they show up here once the sync has run."
      />
    );
  return (
    <Stack gap="xs">
      <Table striped highlightOnHover layout="fixed">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={190}>When</Table.Th>
            <Table.Th w="22%">Event</Table.Th>
            <Table.Th w="22%">Trace</Table.Th>
            <Table.Th>Data</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.data.items.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td>
                <LocalTime iso={e.createdAt} />
              </Table.Td>
              <Table.Td style={{ wordBreak: 'break-word' }}>{e.event}</Table.Td>
              <Table.Td>
                <Anchor
                  component="button"
                  type="button"
                  size="sm"
                  ff="monospace"
                  style={{ wordBreak: 'break-all', textAlign: 'left' }}
                  onClick={() => onTrace(e.traceId)}
                  aria-label={`Show trace ${e.traceId}`}
                >
                  {e.traceId}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <EventData sync={sync} data={e.data} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {events.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(events.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
    </Stack>
  );
}

/** /syncs/{id}/trace-logs: search trace events (?q=), open one trace (?traceId=) with its events in order. */
export function TraceLogsPage() {
  const [q, setQ] = useParam('q');
  const [traceId, setTraceId] = useParam('traceId');
  const [draft, setDraft] = useState(q);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setQ(draft.trim() || null);
  };
  return (
    <SyncScreen title="Trace logs">
      {(sync) => (
        <>
          <form onSubmit={submit}>
            <Group gap="xs" align="end">
              <TextInput
                label="Search events"
                placeholder="An event, a value in its data, or a trace id"
                value={draft}
                onChange={(e) => setDraft(e.currentTarget.value)}
                w={420}
                maw="100%"
              />
              <Button type="submit" variant="default">
                Search
              </Button>
              {q ? (
                <Button
                  variant="subtle"
                  onClick={() => {
                    setDraft('');
                    setQ(null);
                  }}
                >
                  Clear
                </Button>
              ) : null}
            </Group>
          </form>
          {traceId ? (
            <TraceView sync={sync} traceId={traceId} onClose={() => setTraceId(null)} />
          ) : (
            <TraceEvents key={q} sync={sync} q={q} onTrace={setTraceId} />
          )}
        </>
      )}
    </SyncScreen>
  );
}
