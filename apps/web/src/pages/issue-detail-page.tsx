import type { SyncError } from '@lockstep/contract';
import {
  Accordion,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Card,
  Code,
  Group,
  List,
  Loader,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { ISSUE_STATUS_COLOR, type SuggestedFix } from '../components/run-view-types';
import { PageLoader } from '../components/sync-screen';
import { api } from '../lib/api';
import { issueActionOf } from '../lib/issue-actions';
import { showError, showSuccess } from '../lib/notify';
import { sideName } from '../lib/schema-names';
import { useCoreBase } from '../lib/sync-queries';
import { type RetryResult, retryMessage } from './issues-page';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div" style={{ wordBreak: 'break-word' }}>
        {children}
      </Text>
    </div>
  );
}

function SuggestedFixCard({ issueId }: { issueId: string }) {
  // POST by the API's design, but it only reads: rules chosen by the error code.
  const fix = useQuery({
    queryKey: ['suggest-fix', issueId],
    queryFn: () => api<SuggestedFix>(`/rest/sync-errors/${issueId}/suggest-fix`, { method: 'POST' }),
    staleTime: Number.POSITIVE_INFINITY,
  });
  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs">
        <Title order={4}>Suggested fix</Title>
        {fix.data ? (
          <Badge variant="outline" color="gray">
            {fix.data.source === 'llm' ? 'AI suggestion' : 'from the error code'}
          </Badge>
        ) : null}
      </Group>
      {fix.isLoading ? <Loader size="sm" aria-label="Loading the suggested fix" /> : null}
      {fix.error ? <ErrorAlert error={fix.error} title="Could not suggest a fix" /> : null}
      {fix.data ? (
        <>
          <Text fw={600} mb={4}>
            {fix.data.title}
          </Text>
          {fix.data.steps.length > 0 ? (
            <List type="ordered" size="sm" spacing={4}>
              {fix.data.steps.map((step) => (
                <List.Item key={step}>{step}</List.Item>
              ))}
            </List>
          ) : null}
        </>
      ) : null}
    </Card>
  );
}

/** /issues/{id}: one sync error, what to do about it, and a retry. */
export function IssueDetailPage() {
  const { id } = useParams();
  const client = useQueryClient();
  const issue = useQuery({
    queryKey: ['sync-error', id],
    queryFn: () => api<SyncError>(`/rest/sync-errors/${id}`),
    // A queued retry is settled by the next run: follow it until the issue is resolved or open again.
    refetchInterval: (q) => (q.state.data?.status === 'retrying' ? 3000 : false),
  });
  const sync = useCoreBase(issue.data?.coreBaseId);
  const retry = useMutation({
    mutationFn: () => api<RetryResult>(`/rest/sync-errors/clear-and-retry/${id}`, { method: 'POST' }),
    onSuccess: (result) => {
      showSuccess(retryMessage(result));
      return Promise.all([
        client.invalidateQueries({ queryKey: ['sync-error', id] }),
        client.invalidateQueries({ queryKey: ['sync-errors'] }),
      ]);
    },
    onError: (e) => showError(e, 'Could not retry the issue'),
  });

  if (issue.isLoading) return <PageLoader label="Loading the issue" />;
  if (issue.error || !issue.data) return <ErrorAlert error={issue.error} title="Could not load the issue" />;
  const e = issue.data;
  const s = sync.data;
  const action = issueActionOf({
    code: e.code,
    coreBaseId: e.coreBaseId,
    tableMappingId: typeof e.details.tableMappingId === 'string' ? e.details.tableMappingId : null,
  });
  const details = Object.keys(e.details).length > 0 ? JSON.stringify(e.details, null, 2) : null;

  return (
    <Stack>
      <div>
        <Breadcrumbs mb={4}>
          <Anchor component={Link} to="/issues" size="sm">
            Issues
          </Anchor>
          <Anchor component={Link} to={`/syncs/${e.coreBaseId}/issues`} size="sm">
            {s?.name ?? 'This sync'}
          </Anchor>
        </Breadcrumbs>
        <Group justify="space-between" align="start" wrap="wrap">
          <Group gap="sm">
            <Title order={2}>Issue</Title>
            <Badge variant="light" color="gray" size="lg">
              {e.code}
            </Badge>
            <Badge color={ISSUE_STATUS_COLOR[e.status]} variant="light" size="lg">
              {e.status}
            </Badge>
          </Group>
          <Stack gap={2} align="end">
            <Group gap="xs">
              {action ? (
                <Button component={Link} to={action.to} variant="light">
                  {action.label}
                </Button>
              ) : null}
              <Button onClick={() => retry.mutate()} loading={retry.isPending} disabled={e.status !== 'open'}>
                Retry
              </Button>
            </Group>
            {e.status !== 'open' ? (
              <Text size="xs" c="dimmed">
                {e.status === 'retrying' ? 'A retry is already queued.' : 'This issue is resolved.'}
              </Text>
            ) : null}
          </Stack>
        </Group>
      </div>

      <Card withBorder>
        <Text size="lg" mb="md" style={{ whiteSpace: 'pre-line' }}>
          {e.userFacingMessage}
        </Text>
        <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }}>
          <Fact label="Sync">
            <Anchor component={Link} to={`/syncs/${e.coreBaseId}`} size="sm">
              {s?.name ?? 'Open the sync'}
            </Anchor>
          </Fact>
          <Fact label="Side">{e.side ? (s ? sideName(s, e.side) : e.side) : '-'}</Fact>
          <Fact label="Record">
            {e.recordName ? `${e.recordName} (${e.remoteId})` : (e.remoteId ?? '-')}
            {e.coreMetaRecordId ? (
              <>
                {' '}
                <Anchor
                  component={Link}
                  to={`/syncs/${e.coreBaseId}/record-status/${e.coreMetaRecordId}`}
                  size="sm"
                >
                  (status)
                </Anchor>
              </>
            ) : null}
          </Fact>
          <Fact label="Attempts">{e.attempts}</Fact>
          <Fact label="First seen">{new Date(e.createdAt).toLocaleString()}</Fact>
          <Fact label="Last seen">{new Date(e.updatedAt).toLocaleString()}</Fact>
        </SimpleGrid>
      </Card>

      <SuggestedFixCard issueId={e.id} />

      <Accordion variant="contained">
        <Accordion.Item value="technical">
          <Accordion.Control>Technical details</Accordion.Control>
          <Accordion.Panel>
            <Text size="sm" mb="xs" style={{ wordBreak: 'break-word' }}>
              {e.message}
            </Text>
            {details ? (
              <Code block mah={400} style={{ overflow: 'auto' }}>
                {details}
              </Code>
            ) : null}
          </Accordion.Panel>
        </Accordion.Item>
      </Accordion>
    </Stack>
  );
}
