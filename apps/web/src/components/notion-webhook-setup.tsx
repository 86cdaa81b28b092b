import type { CoreBase } from '@lockstep/contract';
import { Alert, Button, Card, Code, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api } from '../lib/api';
import { showError } from '../lib/notify';

type Expecting = { webhookUrl: string; expectingUntil: string };

/**
 * Real-time changes from Notion: the owner starts the setup here, and for 15 minutes the
 * connection takes the verification token Notion sends when the subscription is created. Outside
 * that window a token posted to the address is refused, so the address alone cannot take it over.
 */
export function NotionWebhookSetup({ sync }: { sync: CoreBase }) {
  const notion = [sync.leftExternalBase, sync.rightExternalBase].find((b) => b?.type === 'notion');
  const start = useMutation({
    mutationFn: () =>
      api<Expecting>(
        `/rest/external-connections/${notion?.externalConnectionId}/notion-webhook/expect-handshake`,
        {
          method: 'POST',
        },
      ),
    onError: (e) => showError(e, 'Could not start the webhook setup'),
  });
  if (!notion?.externalConnectionId) return null;
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Text fw={600}>Notion webhooks</Text>
        <Text size="sm" c="dimmed">
          Changes in {notion.name} reach this sync at once instead of at its next check, once Notion sends
          them here.
        </Text>
        {start.data ? (
          <Alert color="blue" title="Waiting for Notion's verification">
            In your Notion integration's settings, add a webhook subscription with this address before{' '}
            {new Date(start.data.expectingUntil).toLocaleTimeString()}:
            <Code block mt="xs" style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
              {start.data.webhookUrl}
            </Code>
          </Alert>
        ) : (
          <Button w="fit-content" loading={start.isPending} onClick={() => start.mutate()}>
            Connect Notion webhooks
          </Button>
        )}
      </Stack>
    </Card>
  );
}
