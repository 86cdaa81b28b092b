import type { CoreBase, ExternalBase, Progress } from '@lockstep/contract';
import { Alert, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api } from '../lib/api';
import { ErrorAlert } from './error-alert';

/** The Webflow sites of a sync (either side). */
export function webflowBases(sync: CoreBase): ExternalBase[] {
  return [sync.leftExternalBase, sync.rightExternalBase].filter(
    (b): b is ExternalBase => b !== null && b.type === 'webflow',
  );
}

function PublishSite({ base }: { base: ExternalBase }) {
  const publish = useMutation({
    mutationFn: () =>
      api<Progress>(`/rest/connector/webflow/publishSite/${base.id}`, { method: 'POST', body: {} }),
  });
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Text fw={600}>{base.name}</Text>
        <Button loading={publish.isPending} onClick={() => publish.mutate()}>
          Publish site
        </Button>
      </Group>
      {publish.isPending ? <Text size="sm">Publishing {base.name}…</Text> : null}
      {publish.error ? <ErrorAlert error={publish.error} title="The site was not published" /> : null}
      {publish.data && !publish.isPending ? (
        <Alert color="green" title="Publishing started">
          {publish.data.message ?? 'Webflow is publishing the site.'} The staged items go live in a minute or
          so.
        </Alert>
      ) : null}
    </Stack>
  );
}

/**
 * A sync with a Webflow site: the items Lockstep writes are staged (unless the connection publishes
 * them live) and go live when the site is published. Webflow allows one publish a minute.
 */
export function WebflowPublish({ sync }: { sync: CoreBase }) {
  const bases = webflowBases(sync);
  if (bases.length === 0) return null;
  return (
    <Card withBorder>
      <Title order={4} mb={4}>
        Publish to Webflow
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        Items Lockstep writes wait in Webflow as staged changes until the site is published. Webflow allows
        one publish a minute.
      </Text>
      <Stack>
        {bases.map((b) => (
          <PublishSite key={b.id} base={b} />
        ))}
      </Stack>
    </Card>
  );
}
