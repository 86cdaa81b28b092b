import { Button, Card, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

/** The syncs list; for now every account starts empty (the syncs screens come with their issue). */
export function SyncsPage() {
  return (
    <Stack>
      <Title order={2}>Syncs</Title>
      <Card withBorder padding="xl">
        <Stack align="center" gap="sm">
          <Title order={3}>No syncs yet</Title>
          <Text c="dimmed" ta="center" maw={480}>
            A sync keeps two apps in step, both ways. Connect two apps, map their tables and fields, preview
            the first sync, then let it run.
          </Text>
          <Button component={Link} to="/get-started">
            Create your first sync
          </Button>
        </Stack>
      </Card>
    </Stack>
  );
}
