import { Anchor, Card, SimpleGrid, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import { HubSpotWebhookSetup } from '../components/hubspot-webhook-setup';
import { NotionWebhookSetup } from '../components/notion-webhook-setup';
import { SyncScreen } from '../components/sync-screen';

const TOOLS = [
  {
    path: 'dev-tools/schema',
    title: 'Schema',
    text: "Both apps' tables and columns as the sync sees them: field types, read-only columns and options.",
  },
  {
    path: 'dev-tools/record-history',
    title: 'Record history',
    text: 'Find a linked record by id or value and see every write made to it, with before and after values.',
  },
  {
    path: 'dev-tools/records-old',
    title: 'Look up a record',
    text: "Find a linked record from one app's record id and see its status on both sides.",
  },
  {
    path: 'trace-logs',
    title: 'Trace logs',
    text: 'What each run read and wrote, event by event, searchable.',
  },
] as const;

/** The job viewer finds a sync by one of its connected apps. */
const jobsOf = (sync: {
  leftExternalBase?: { id: string } | null;
  rightExternalBase?: { id: string } | null;
}) => sync.leftExternalBase?.id ?? sync.rightExternalBase?.id ?? null;

/** /syncs/{id}/dev-tools: the developer views of one sync. */
export function SyncDevToolsPage() {
  return (
    <SyncScreen title="Dev tools">
      {(sync) => (
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            {TOOLS.map((t) => (
              <Card withBorder key={t.path}>
                <Anchor component={Link} to={`/syncs/${sync.id}/${t.path}`} fw={600}>
                  {t.title}
                </Anchor>
                <Text size="sm" c="dimmed" mt={4}>
                  {t.text}
                </Text>
              </Card>
            ))}
            {jobsOf(sync) ? (
              <Card withBorder>
                <Anchor component={Link} to={`/job-viewer?externalBaseId=${jobsOf(sync)}`} fw={600}>
                  Jobs
                </Anchor>
                <Text size="sm" c="dimmed" mt={4}>
                  The job queue's jobs of this sync: their data, attempts, errors and timing.
                </Text>
              </Card>
            ) : null}
          </SimpleGrid>
          <NotionWebhookSetup sync={sync} />
          <HubSpotWebhookSetup sync={sync} />
        </Stack>
      )}
    </SyncScreen>
  );
}
