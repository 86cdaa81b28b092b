import { Button, Card, Group, Stack, Switch, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { api } from '../lib/api';
import { type DevFlag, writeDevFlag } from '../lib/dev-mode';
import { showError } from '../lib/notify';
import { useCurrentUser, useDevFlag } from '../lib/queries';

const FLAGS: { flag: DevFlag; label: string; description: string }[] = [
  {
    flag: 'skipPaywall',
    label: 'Skip the paywall',
    description:
      'Use a dev plan (30 days, unlimited syncs) when you have no plan. On by default on localhost.',
  },
  {
    flag: 'invisibleDevToolbox',
    label: 'Invisible dev toolbox',
    description:
      'A developer toolbox hidden from pages: Ctrl+Shift+D opens it (user, plan, flags, version, links, debug bundle).',
  },
  {
    flag: 'allowUnsupportedMappings',
    label: 'Allow mapping unsupported fields',
    description: 'Let incompatible field types be mapped (for testing connectors).',
  },
];

function DevFlagSwitch({ flag, label, description }: (typeof FLAGS)[number]) {
  const value = useDevFlag(flag);
  return (
    <Switch
      label={label}
      description={description}
      checked={value}
      onChange={(e) => writeDevFlag(flag, e.currentTarget.checked)}
    />
  );
}

/** Fails to render on purpose, to check the Something went wrong screen. */
function BreakPageButton() {
  const [broken, setBroken] = useState(false);
  if (broken) throw new Error('This page was broken on purpose from the developer tools.');
  return (
    <Button color="red" variant="default" onClick={() => setBroken(true)}>
      Break this page
    </Button>
  );
}

export function DevToolsPage() {
  const me = useCurrentUser().data;
  async function forceError() {
    try {
      await api('/rest/debug/error');
    } catch (error) {
      showError(error);
    }
  }
  return (
    <Stack maw={720}>
      <Title order={2}>Developer tools</Title>
      <Card withBorder>
        <Stack>
          <Text fw={600}>Local dev flags</Text>
          {FLAGS.map((f) => (
            <DevFlagSwitch key={f.flag} {...f} />
          ))}
        </Stack>
      </Card>
      {me?.role === 'staff' ? (
        <Card withBorder>
          <Stack align="flex-start">
            <Text fw={600}>Diagnostics</Text>
            <Text size="sm" c="dimmed">
              Force an error calls GET /rest/debug/error, which fails on purpose, to check how API errors are
              shown. Break this page makes this page fail to render.
            </Text>
            <Group>
              <Button color="red" variant="light" onClick={() => void forceError()}>
                Force an error
              </Button>
              <BreakPageButton />
            </Group>
          </Stack>
        </Card>
      ) : null}
    </Stack>
  );
}
