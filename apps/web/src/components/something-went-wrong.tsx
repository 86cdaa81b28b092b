import { Button, Center, Group, Stack, Text, Title } from '@mantine/core';

/** The page render failure screen of spec section 2. */
export function SomethingWentWrong({ supportEmail, onRetry }: { supportEmail: string; onRetry: () => void }) {
  return (
    <Center mih="70vh" p="xl">
      <Stack align="center" maw={560} gap="md">
        <Title order={2}>Something went wrong</Title>
        <Text ta="center" c="dimmed">
          There was a problem loading the page. If this continues, please reach out to us at {supportEmail}.
        </Text>
        <Group>
          <Button component="a" href="/syncs" variant="default">
            Return to dashboard
          </Button>
          <Button onClick={onRetry}>Try again</Button>
        </Group>
      </Stack>
    </Center>
  );
}
