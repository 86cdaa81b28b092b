import type { CoreBase } from '@lockstep/contract';
import { Alert, Card, Code, List, Loader, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api } from '../lib/api';

type WebhooksDebug = { webhookUrl: string | null };

/**
 * Real-time changes from HubSpot: the address to set as the private app's webhook target URL, and
 * what to subscribe to. Deliveries are checked with the app's client secret, which the connection
 * must hold (an optional item of the HubSpot connection).
 */
export function HubSpotWebhookSetup({ sync }: { sync: CoreBase }) {
  const hubspot = [sync.leftExternalBase, sync.rightExternalBase].find((b) => b?.type === 'hubspot');
  const debug = useQuery({
    queryKey: ['webhooks-debug', hubspot?.id],
    queryFn: () => api<WebhooksDebug>(`/rest/external-bases/${hubspot?.id}/webhooks/debug`),
    enabled: Boolean(hubspot?.id),
  });
  if (!hubspot?.id) return null;
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Text fw={600}>HubSpot webhooks</Text>
        <Text size="sm" c="dimmed">
          Changes in {hubspot.name} reach this sync within seconds instead of at its next check, once HubSpot
          sends them here.
        </Text>
        {debug.isPending ? (
          <Loader size="sm" />
        ) : debug.isError ? (
          <Alert color="red" title="Could not load the webhook address">
            {debug.error.message}
          </Alert>
        ) : (
          <>
            <Text size="sm">In HubSpot, open your private app's Webhooks tab:</Text>
            <List size="sm" type="ordered">
              <List.Item>
                Set the target URL to
                <Code block mt={4} style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
                  {debug.data.webhookUrl}
                </Code>
              </List.Item>
              <List.Item>
                Subscribe to contact, company and deal creation, deletion, merge and property changes.
              </List.Item>
              <List.Item>
                Copy the client secret from the app's Auth tab into this HubSpot connection in Lockstep
                (Connections), so deliveries can be checked.
              </List.Item>
            </List>
          </>
        )}
      </Stack>
    </Card>
  );
}
