import { Card, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useCurrentUser } from '../lib/queries';

export function SettingsPage() {
  const me = useCurrentUser().data;
  const items = [
    { to: '/settings/profile', title: 'Profile', text: 'Your name, email and plan.' },
    { to: '/subscription/manage', title: 'Subscription', text: 'Your plan, its limits and your usage.' },
    { to: '/settings/dev-tools', title: 'Developer tools', text: 'Local dev flags and diagnostics.' },
    ...(me?.role === 'staff'
      ? [
          { to: '/settings/users', title: 'Users', text: 'Search, impersonate and delete users (staff).' },
          {
            to: '/settings/flags',
            title: 'Experiment flags',
            text: "Edit a user's experiment flags (staff).",
          },
          {
            to: '/settings/all-queues',
            title: 'Job queues',
            text: 'Every queue by state, its throughput and the workers alive (staff).',
          },
          {
            to: '/job-viewer',
            title: 'Job viewer',
            text: "One sync's jobs with their data, attempts, errors and timing (your own syncs; staff any).",
          },
          {
            to: '/stuck-syncs',
            title: 'Stuck syncs',
            text: 'Runs that stopped responding, to restart (staff).',
          },
        ]
      : []),
  ];
  return (
    <Stack>
      <Title order={2}>Settings</Title>
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        {items.map((i) => (
          <Card key={i.to} withBorder component={Link} to={i.to}>
            <Text fw={600}>{i.title}</Text>
            <Text size="sm" c="dimmed">
              {i.text}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
    </Stack>
  );
}
