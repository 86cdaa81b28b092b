import { Box, Text } from '@mantine/core';
import type { ReactNode } from 'react';

export type LabelledItem = { key: string; label: string; value: ReactNode };

/** Label and value side by side; both wrap, so a long value is never cut off. */
export function LabelledList({ items }: { items: LabelledItem[] }) {
  return (
    <Box
      component="dl"
      m={0}
      style={{
        display: 'grid',
        gridTemplateColumns: 'minmax(0, max-content) minmax(0, 1fr)',
        columnGap: 'var(--mantine-spacing-sm)',
        rowGap: 2,
      }}
    >
      {items.map((item) => (
        <Box key={item.key} style={{ display: 'contents' }}>
          <Text component="dt" size="xs" c="dimmed" style={{ wordBreak: 'break-word' }}>
            {item.label}
          </Text>
          <Text component="dd" size="xs" m={0} style={{ wordBreak: 'break-word', whiteSpace: 'pre-wrap' }}>
            {item.value}
          </Text>
        </Box>
      ))}
    </Box>
  );
}
