import {
  type ApiToken,
  type CreatedApiToken,
  type CreatedWebhookSubscription,
  WEBHOOK_EVENT_TYPES,
  type WebhookDeliveryAttempt,
  type WebhookSubscription,
} from '@lockstep/contract';
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  CopyButton,
  Group,
  Loader,
  Modal,
  Pagination,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { LocalTime } from '../components/local-time';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';

const EVENT_TEXT: Record<(typeof WEBHOOK_EVENT_TYPES)[number], string> = {
  'sync.run.finished': 'A run finished (status and counts)',
  'issue.opened': 'An issue opened',
  'issue.resolved': 'An issue resolved',
  'record.changed': 'Records changed (one batch per run)',
};

/** /developer: personal API tokens, the OpenAPI document, and webhooks out with their delivery log. */
export function DeveloperPage() {
  const openApiUrl = `${window.location.origin}/api/docs/json`;
  return (
    <Stack>
      <Title order={2}>Developer</Title>
      <Text c="dimmed" size="sm">
        Use the REST API with a personal token, and have Lockstep call your URL when your syncs run. The API
        is described by its OpenAPI document:{' '}
        <Anchor href={openApiUrl} target="_blank" rel="noreferrer" data-testid="openapi-link">
          {openApiUrl}
        </Anchor>{' '}
        (browse it at{' '}
        <Anchor href="/api/docs" target="_blank" rel="noreferrer">
          /api/docs
        </Anchor>
        ).
      </Text>
      <TokensSection />
      <WebhooksSection />
    </Stack>
  );
}

/** A value shown this once, with a copy button. */
function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <Alert color="green" title={`Your new ${label}`} data-testid="shown-once">
      <Stack gap="xs">
        <Text size="sm">Copy it now: it is shown this once and cannot be read again.</Text>
        <Group gap="xs" wrap="nowrap">
          <Code style={{ wordBreak: 'break-all' }}>{value}</Code>
          <CopyButton value={value}>
            {({ copied, copy }) => (
              <Button size="compact-sm" variant="light" onClick={copy}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Button size="compact-sm" variant="subtle" onClick={onDone} w="fit-content">
          Done
        </Button>
      </Stack>
    </Alert>
  );
}

function TokensSection() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [write, setWrite] = useState(false);
  const [created, setCreated] = useState<CreatedApiToken | null>(null);
  const tokens = useQuery({
    queryKey: ['developer', 'tokens'],
    queryFn: () => api<{ items: ApiToken[] }>('/rest/developer/tokens'),
  });
  const create = useMutation({
    mutationFn: () =>
      api<CreatedApiToken>('/rest/developer/tokens', {
        method: 'POST',
        body: { name, scopes: write ? ['read', 'write'] : ['read'] },
      }),
    onSuccess: (token) => {
      setCreated(token);
      setName('');
      setWrite(false);
      return client.invalidateQueries({ queryKey: ['developer', 'tokens'] });
    },
    onError: (e) => showError(e, 'Could not create the token'),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api(`/rest/developer/tokens/${id}`, { method: 'DELETE' }),
    onSuccess: () => {
      showSuccess('The token is revoked: it stops working at once.');
      return client.invalidateQueries({ queryKey: ['developer', 'tokens'] });
    },
    onError: (e) => showError(e, 'Could not revoke the token'),
  });
  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>API tokens</Title>
        <Text size="sm" c="dimmed">
          Send a token as <Code>Authorization: Bearer &lt;token&gt;</Code>. It acts as you; a read-only token
          cannot change anything.
        </Text>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Group align="end">
            <TextInput
              label="Token name"
              placeholder="CI export"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              maxLength={100}
              required
            />
            <Checkbox
              label="Allow writes"
              checked={write}
              onChange={(e) => setWrite(e.currentTarget.checked)}
              mb={8}
            />
            <Button type="submit" loading={create.isPending} disabled={name.trim() === ''}>
              Create token
            </Button>
          </Group>
        </form>
        {created ? (
          <ShownOnce label="API token" value={created.token} onDone={() => setCreated(null)} />
        ) : null}
        {tokens.isLoading ? <Loader aria-label="Loading tokens" /> : null}
        {tokens.error ? <ErrorAlert error={tokens.error} title="Could not load your tokens" /> : null}
        {tokens.data && tokens.data.items.length === 0 ? (
          <EmptyState title="No tokens yet" text="Create a token to call the REST API from a script." />
        ) : null}
        {tokens.data && tokens.data.items.length > 0 ? (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Token</Table.Th>
                <Table.Th>Scopes</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {tokens.data.items.map((t) => (
                <Table.Tr key={t.id} data-testid={`token-${t.name}`}>
                  <Table.Td>{t.name}</Table.Td>
                  <Table.Td>
                    <Code>{t.prefix}…</Code>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      {t.scopes.map((s) => (
                        <Badge key={s} variant="light" size="sm">
                          {s}
                        </Badge>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <LocalTime iso={t.createdAt} />
                  </Table.Td>
                  <Table.Td>{t.lastUsedAt ? <LocalTime iso={t.lastUsedAt} /> : 'Never'}</Table.Td>
                  <Table.Td>
                    <Button
                      size="compact-sm"
                      color="red"
                      variant="light"
                      loading={revoke.isPending && revoke.variables === t.id}
                      onClick={() => revoke.mutate(t.id)}
                    >
                      Revoke
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        ) : null}
      </Stack>
    </Card>
  );
}

function WebhooksSection() {
  const client = useQueryClient();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['sync.run.finished']);
  const [created, setCreated] = useState<CreatedWebhookSubscription | null>(null);
  const [logOf, setLogOf] = useState<WebhookSubscription | null>(null);
  const hooks = useQuery({
    queryKey: ['developer', 'webhooks'],
    queryFn: () => api<{ items: WebhookSubscription[] }>('/rest/developer/webhooks'),
  });
  const refresh = () => client.invalidateQueries({ queryKey: ['developer', 'webhooks'] });
  const create = useMutation({
    mutationFn: () =>
      api<CreatedWebhookSubscription>('/rest/developer/webhooks', { method: 'POST', body: { url, events } }),
    onSuccess: (sub) => {
      setCreated(sub);
      setUrl('');
      return refresh();
    },
    onError: (e) => showError(e, 'Could not add the webhook'),
  });
  const pause = useMutation({
    mutationFn: (s: WebhookSubscription) =>
      api(`/rest/developer/webhooks/${s.id}`, { method: 'PATCH', body: { paused: !s.paused } }),
    onSuccess: refresh,
    onError: (e) => showError(e, 'Could not change the webhook'),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api(`/rest/developer/webhooks/${id}`, { method: 'DELETE' }),
    onSuccess: () => {
      showSuccess('The webhook is deleted.');
      return refresh();
    },
    onError: (e) => showError(e, 'Could not delete the webhook'),
  });
  const test = useMutation({
    mutationFn: (id: string) =>
      api<WebhookDeliveryAttempt>(`/rest/developer/webhooks/${id}/test`, { method: 'POST' }),
    onSuccess: (attempt) => {
      if (attempt.error) showError(new Error(attempt.error), 'The test event was not accepted');
      else showSuccess(`The test event was delivered (${attempt.statusCode}, ${attempt.durationMs} ms).`);
      return client.invalidateQueries({ queryKey: ['developer', 'deliveries'] });
    },
    onError: (e) => showError(e, 'Could not send the test event'),
  });
  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>Webhooks</Title>
        <Text size="sm" c="dimmed">
          Lockstep POSTs JSON to your URL when events of your syncs happen, signed in the{' '}
          <Code>Lockstep-Signature</Code> header as{' '}
          <Code>t=&lt;unix time&gt;,v1=&lt;hex HMAC-SHA256&gt;</Code> of <Code>t + "." + body</Code> with the
          webhook's secret. Failed deliveries are retried with backoff, five attempts in all.
        </Text>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack gap="xs">
            <TextInput
              label="Receiver URL"
              placeholder="https://example.com/hooks/lockstep"
              value={url}
              onChange={(e) => setUrl(e.currentTarget.value)}
              required
            />
            <Checkbox.Group label="Events" value={events} onChange={setEvents}>
              <Group mt={4}>
                {WEBHOOK_EVENT_TYPES.map((type) => (
                  <Checkbox key={type} value={type} label={EVENT_TEXT[type]} />
                ))}
              </Group>
            </Checkbox.Group>
            <Button
              type="submit"
              loading={create.isPending}
              disabled={url.trim() === '' || events.length === 0}
              w="fit-content"
            >
              Add webhook
            </Button>
          </Stack>
        </form>
        {created ? (
          <ShownOnce label="webhook signing secret" value={created.secret} onDone={() => setCreated(null)} />
        ) : null}
        {hooks.isLoading ? <Loader aria-label="Loading webhooks" /> : null}
        {hooks.error ? <ErrorAlert error={hooks.error} title="Could not load your webhooks" /> : null}
        {hooks.data && hooks.data.items.length === 0 ? (
          <EmptyState
            title="No webhooks yet"
            text="Add a URL to hear when your syncs run, open issues or change records."
          />
        ) : null}
        {hooks.data && hooks.data.items.length > 0 ? (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>URL</Table.Th>
                <Table.Th>Events</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {hooks.data.items.map((s) => (
                <Table.Tr key={s.id} data-testid={`webhook-${s.url}`}>
                  <Table.Td style={{ wordBreak: 'break-all' }}>{s.url}</Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      {s.events.map((e) => (
                        <Badge key={e} variant="light" size="sm">
                          {e}
                        </Badge>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    {s.paused ? <Badge color="gray">Paused</Badge> : <Badge color="green">Active</Badge>}
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button size="compact-sm" variant="light" onClick={() => setLogOf(s)}>
                        Deliveries
                      </Button>
                      <Button
                        size="compact-sm"
                        variant="light"
                        loading={test.isPending && test.variables === s.id}
                        onClick={() => test.mutate(s.id)}
                      >
                        Send test
                      </Button>
                      <Button size="compact-sm" variant="light" onClick={() => pause.mutate(s)}>
                        {s.paused ? 'Resume' : 'Pause'}
                      </Button>
                      <Button
                        size="compact-sm"
                        color="red"
                        variant="light"
                        loading={remove.isPending && remove.variables === s.id}
                        onClick={() => remove.mutate(s.id)}
                      >
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        ) : null}
        <Modal opened={logOf !== null} onClose={() => setLogOf(null)} title="Deliveries" size="xl">
          {logOf ? <DeliveryLog subscription={logOf} /> : null}
        </Modal>
      </Stack>
    </Card>
  );
}

const PAGE = 20;

function DeliveryLog({ subscription }: { subscription: WebhookSubscription }) {
  const [page, setPage] = useState(1);
  const log = useQuery({
    queryKey: ['developer', 'deliveries', subscription.id, page],
    queryFn: () =>
      api<{ items: WebhookDeliveryAttempt[]; total: number }>(
        `/rest/developer/webhooks/${subscription.id}/deliveries?skip=${(page - 1) * PAGE}&take=${PAGE}`,
      ),
    refetchInterval: 5_000,
  });
  return (
    <Stack>
      <Text size="sm" c="dimmed" style={{ wordBreak: 'break-all' }}>
        {subscription.url}
      </Text>
      {log.isLoading ? <Loader aria-label="Loading deliveries" /> : null}
      {log.error ? <ErrorAlert error={log.error} title="Could not load the deliveries" /> : null}
      {log.data && log.data.items.length === 0 ? <Text>No deliveries yet.</Text> : null}
      {log.data && log.data.items.length > 0 ? (
        <Table data-testid="delivery-log">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Event</Table.Th>
              <Table.Th>Attempt</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Duration</Table.Th>
              <Table.Th>Error</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {log.data.items.map((a) => (
              <Table.Tr key={a.id}>
                <Table.Td>
                  <LocalTime iso={a.createdAt} />
                </Table.Td>
                <Table.Td>{a.eventType}</Table.Td>
                <Table.Td>{a.attempt}</Table.Td>
                <Table.Td>
                  <Badge color={a.error ? 'red' : 'green'} variant="light">
                    {a.statusCode ?? 'No answer'}
                  </Badge>
                </Table.Td>
                <Table.Td>{a.durationMs} ms</Table.Td>
                <Table.Td>
                  <Text size="xs" style={{ wordBreak: 'break-word' }}>
                    {a.error ?? ''}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {log.data && log.data.total > PAGE ? (
        <Pagination value={page} onChange={setPage} total={Math.ceil(log.data.total / PAGE)} />
      ) : null}
    </Stack>
  );
}
