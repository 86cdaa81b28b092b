import { ERROR_DETAILS_BOX } from '@lockstep/contract';
import { Anchor, Button, Code, Collapse, Group, Stack, Text, Title } from '@mantine/core';
import { type ReactNode, useState } from 'react';

export const GENERIC_ERROR_DESCRIPTION =
  'An error has occured. If the error persists, please visit our Support Page.';

/** The generic error view (spec sections 2 and 8) with collapsible details and a Reload button. */
export function GenericErrorView({
  title = 'Error',
  details,
  actions,
}: {
  title?: string;
  details?: string;
  actions?: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  return (
    <Stack align="center" p="xl" gap="md" role="alert">
      <Title order={3}>{title}</Title>
      <Text c="dimmed" ta="center">
        An error has occured. If the error persists, please visit our{' '}
        <Anchor href="/api/docs" target="_blank">
          Support Page
        </Anchor>
        .
      </Text>
      {details ? (
        <>
          <Button variant="subtle" size="xs" onClick={() => setOpen((o) => !o)}>
            {open ? 'Hide details' : 'Show details'}
          </Button>
          <Collapse expanded={open}>
            <Code
              block
              style={{
                maxHeight: ERROR_DETAILS_BOX.maxHeight,
                width: ERROR_DETAILS_BOX.width,
                maxWidth: '90vw',
                overflow: 'auto',
                whiteSpace: 'pre-wrap',
              }}
            >
              {details}
            </Code>
          </Collapse>
        </>
      ) : null}
      <Group>
        <Button onClick={() => window.location.reload()}>Reload</Button>
        {actions}
      </Group>
    </Stack>
  );
}
