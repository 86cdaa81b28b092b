import type { CoreBase, Progress } from '@lockstep/contract';
import { Alert, Anchor, Button, Group, Progress as ProgressBar, Stack, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../lib/api';
import { ErrorAlert } from './error-alert';

type DriftResult = {
  checked: number;
  drifted: number;
  tables: {
    tableMappingId: string;
    table: string;
    checked: number;
    drifted: number;
    skipped: string | null;
  }[];
};

/**
 * "Compare values now": reads linked records on both apps and compares them with what was last
 * synced. The record counts above come from Lockstep's own links; this asks the apps themselves.
 */
export function ValueDriftCheck({ sync }: { sync: CoreBase }) {
  const [trackingId, setTrackingId] = useState<string | null>(null);
  const start = useMutation({
    mutationFn: (full: boolean) =>
      api<{ trackingId: string }>(`/rest/core-bases/${sync.id}/drift-checks`, {
        method: 'POST',
        body: full ? { full: true } : {},
      }),
    onSuccess: (r) => setTrackingId(r.trackingId),
  });
  const progress = useQuery({
    queryKey: ['progress', trackingId],
    queryFn: () => api<Progress>(`/rest/progress/${trackingId}`),
    enabled: trackingId !== null,
    refetchInterval: (q) =>
      q.state.data && ['COMPLETED', 'FAILED', 'CANCELLED'].includes(q.state.data.status) ? false : 700,
  });
  const p = progress.data;
  const running =
    start.isPending || (trackingId !== null && (!p || ['PENDING', 'IN_PROGRESS'].includes(p.status)));
  const result = p?.status === 'COMPLETED' ? (p.result as DriftResult | null) : null;
  return (
    <Stack gap="xs" mt="md" data-testid="value-drift">
      <Group gap="xs">
        <Button
          size="compact-sm"
          variant="light"
          loading={running}
          disabled={sync.syncState !== 'on'}
          onClick={() => start.mutate(false)}
        >
          Compare values now
        </Button>
        <Button
          size="compact-sm"
          variant="subtle"
          disabled={running || sync.syncState !== 'on'}
          onClick={() => start.mutate(true)}
        >
          Compare every record
        </Button>
        <Text size="xs" c="dimmed">
          {sync.syncState === 'on'
            ? 'Reads linked records from both apps (500 per table pair, or all) and looks for values that changed without a change signal.'
            : 'Switch the sync on to compare values.'}
        </Text>
      </Group>
      {start.error ? <ErrorAlert error={start.error} title="Could not start the comparison" /> : null}
      {running && p ? (
        <ProgressBar
          value={p.percent ?? 5}
          animated
          aria-label="Comparison progress"
          title={`${p.done.toLocaleString()} of ${p.total?.toLocaleString() ?? '?'} records read`}
        />
      ) : null}
      {p?.status === 'FAILED' ? (
        <Alert color="red" title="The comparison stopped">
          {p.message}
        </Alert>
      ) : null}
      {result ? (
        <Alert color={result.drifted > 0 ? 'orange' : 'green'} title={p?.message ?? ''}>
          <Stack gap={2}>
            {result.tables.map((t) => (
              <Text size="sm" key={t.tableMappingId}>
                {t.table}:{' '}
                {t.skipped ??
                  `${t.checked.toLocaleString()} compared, ${t.drifted === 0 ? 'all in step' : `${t.drifted} drifted`}`}
              </Text>
            ))}
            {result.drifted > 0 ? (
              <Anchor component={Link} to={`/syncs/${sync.id}/issues`} size="sm">
                Review the drift issues: Retry syncs the edited side over
              </Anchor>
            ) : null}
          </Stack>
        </Alert>
      ) : null}
    </Stack>
  );
}
