import { Card, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

export function EmptyState({ title, text, action }: { title: string; text: string; action?: ReactNode }) {
  return (
    <Card withBorder padding="xl">
      <Stack align="center" gap="sm">
        <Title order={3}>{title}</Title>
        <Text c="dimmed" ta="center" maw={480}>
          {text}
        </Text>
        {action}
      </Stack>
    </Card>
  );
}
