import { Button, Center, Group, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { ReadDocsButton } from './read-docs-button';

export function NotFoundView() {
  return (
    <Center mih="60vh" p="xl">
      <Stack align="center" gap="md">
        <Title order={2}>Page not found</Title>
        <Text c="dimmed">There is nothing at this address (yet).</Text>
        <Group>
          <Button component={Link} to="/syncs">
            Go to your syncs
          </Button>
          <ReadDocsButton />
        </Group>
      </Stack>
    </Center>
  );
}
