import { Button, List, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { Link } from 'react-router';

const STEPS = [
  ['Connect two apps', 'Pick the app on each side and sign in to it. Your credentials are stored encrypted.'],
  [
    'Map tables and fields',
    'Choose which tables stay in step and how fields correspond; automap suggests a mapping.',
  ],
  [
    'Preview the first sync',
    'See record by record what will be matched, created or updated on each side, before anything is written.',
  ],
  [
    'Go live',
    'Switch the sync on. Changes flow both ways in real time; the Issues page shows anything that needs you.',
  ],
] as const;

export function GetStartedPage() {
  return (
    <Stack maw={720}>
      <Title order={2}>Get started</Title>
      <Text c="dimmed">A first sync takes a few minutes:</Text>
      <List spacing="md" size="md" center>
        {STEPS.map(([title, text], i) => (
          <List.Item
            key={title}
            icon={
              <ThemeIcon radius="xl" size={28}>
                {i + 1}
              </ThemeIcon>
            }
          >
            <Text fw={600}>{title}</Text>
            <Text size="sm" c="dimmed">
              {text}
            </Text>
          </List.Item>
        ))}
      </List>
      <div>
        <Button component={Link} to="/syncs/new">
          Create a sync
        </Button>
      </div>
    </Stack>
  );
}
