import { Box, Button, Code, Collapse } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';

/** The exact JSON behind a structured view, for when the labels hide a detail; closed at first. */
export function RawJsonToggle({ value }: { value: unknown }) {
  const [opened, { toggle }] = useDisclosure(false);
  return (
    <Box mt={4}>
      <Button variant="subtle" size="compact-xs" onClick={toggle} aria-expanded={opened}>
        {opened ? 'Hide raw JSON' : 'Show raw JSON'}
      </Button>
      {/* Not kept mounted: a page holds dozens of entries, most never opened. */}
      <Collapse expanded={opened} keepMounted={false}>
        <Code block mt={4} style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
          {JSON.stringify(value, null, 2)}
        </Code>
      </Collapse>
    </Box>
  );
}
