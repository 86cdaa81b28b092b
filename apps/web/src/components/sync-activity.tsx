import type { CoreBase } from '@lockstep/contract';
import { BarChart, LineChart } from '@mantine/charts';
import { Card, Group, Loader, SegmentedControl, SimpleGrid, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../lib/api';
import { ErrorAlert } from './error-alert';

type Day = {
  day: string;
  createdLeft: number;
  createdRight: number;
  updatedLeft: number;
  updatedRight: number;
  deletedLeft: number;
  deletedRight: number;
  failed: number;
  issuesOpened: number;
  issuesResolved: number;
};

const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
/** "Nov 24" in the user's locale, for a YYYY-MM-DD day (noon UTC keeps it the same day everywhere). */
const dayLabel = (day: string) =>
  new Date(`${day}T12:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });

/**
 * The overview's charts: records written into each app per day (created, updated, deleted, stacked)
 * and issues opened and resolved, over the last 7, 14 or 30 days in the user's time zone.
 */
export function SyncActivity({ sync }: { sync: CoreBase }) {
  const [days, setDays] = useState('14');
  const activity = useQuery({
    queryKey: ['activity', sync.id, days],
    queryFn: () =>
      api<{ days: Day[] }>(
        `/rest/core-bases/${sync.id}/activity?days=${days}&timeZone=${encodeURIComponent(timeZone())}`,
      ),
    refetchInterval: 30_000,
  });
  const left = sync.leftExternalBase?.name ?? 'First app';
  const right = sync.rightExternalBase?.name ?? 'Second app';
  const data = (activity.data?.days ?? []).map((d) => ({
    day: dayLabel(d.day),
    [`Created in ${left}`]: d.createdLeft,
    [`Updated in ${left}`]: d.updatedLeft,
    [`Deleted in ${left}`]: d.deletedLeft,
    [`Created in ${right}`]: d.createdRight,
    [`Updated in ${right}`]: d.updatedRight,
    [`Deleted in ${right}`]: d.deletedRight,
    'Issues opened': d.issuesOpened,
    'Issues resolved': d.issuesResolved,
  }));
  const quiet =
    data.length > 0 &&
    (activity.data?.days ?? []).every((d) => Object.values(d).every((v) => typeof v === 'string' || v === 0));
  return (
    <Card withBorder data-testid="sync-activity">
      <Group justify="space-between" mb="sm">
        <Title order={4}>Activity</Title>
        <SegmentedControl
          size="xs"
          aria-label="Days shown"
          value={days}
          onChange={setDays}
          data={[
            { value: '7', label: '7 days' },
            { value: '14', label: '14 days' },
            { value: '30', label: '30 days' },
          ]}
        />
      </Group>
      {activity.isLoading ? <Loader size="sm" aria-label="Loading the activity" /> : null}
      {activity.error ? <ErrorAlert error={activity.error} title="Could not load the activity" /> : null}
      {quiet ? (
        <Text size="sm" c="dimmed">
          No records written and no issues in these days.
        </Text>
      ) : null}
      {data.length > 0 && !quiet ? (
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <div>
            <Text size="sm" c="dimmed" mb={4}>
              Records written, per app
            </Text>
            <BarChart
              h={220}
              data={data}
              dataKey="day"
              type="stacked"
              withLegend
              legendProps={{ verticalAlign: 'bottom' }}
              series={[
                { name: `Created in ${left}`, color: 'teal.6' },
                { name: `Updated in ${left}`, color: 'blue.6' },
                { name: `Deleted in ${left}`, color: 'red.6' },
                { name: `Created in ${right}`, color: 'teal.3' },
                { name: `Updated in ${right}`, color: 'blue.3' },
                { name: `Deleted in ${right}`, color: 'red.3' },
              ]}
            />
          </div>
          <div>
            <Text size="sm" c="dimmed" mb={4}>
              Issues
            </Text>
            <LineChart
              h={220}
              data={data}
              dataKey="day"
              withLegend
              legendProps={{ verticalAlign: 'bottom' }}
              series={[
                { name: 'Issues opened', color: 'red.6' },
                { name: 'Issues resolved', color: 'green.6' },
              ]}
            />
          </div>
        </SimpleGrid>
      ) : null}
    </Card>
  );
}
