import { Button, Card, Stack, Switch, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { api, errorText } from '../lib/api';
import { type DevFlag, writeDevFlag } from '../lib/dev-mode';
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
    description: 'Hide the developer toolbox from pages.',
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

export function DevToolsPage() {
  const me = useCurrentUser().data;
  async function forceError() {
    try {
      await api('/rest/debug/error');
    } catch (error) {
      notifications.show({ color: 'red', title: 'Error', message: errorText(error) });
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
              Calls GET /rest/debug/error, which fails on purpose, to check how errors are shown.
            </Text>
            <Button color="red" variant="light" onClick={() => void forceError()}>
              Force an error
            </Button>
          </Stack>
        </Card>
      ) : null}
    </Stack>
  );
}
