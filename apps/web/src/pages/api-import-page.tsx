import type {
  ApiAuth,
  ApiFetchConfig,
  ApiFieldType,
  ApiImport,
  ApiPagination,
  ExternalConnection,
  Progress,
} from '@lockstep/contract';
import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  List,
  Loader,
  Progress as ProgressBar,
  ScrollArea,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';
import type { Paged } from '../lib/paged';

type Proposal = {
  config: ApiFetchConfig;
  reasons: string[];
  sampleRecords: Record<string, unknown>[];
  candidatePaths: { path: string; count: number }[];
};
type Preview = {
  records: Record<string, unknown>[];
  totalCount: number;
  pagesRead: number;
  stoppedBecause: string;
};
type TargetField = { remoteId: string; name: string; type: string; readOnly: boolean };
type TargetTable = { remoteId: string; name: string; fields: TargetField[] };
type Mapping = { sourceField: string; targetFieldId: string };

const FIELD_TYPES: ApiFieldType[] = ['text', 'number', 'boolean', 'date', 'datetime', 'url', 'email', 'json'];
const PAGINATION_TYPES: { value: ApiPagination['type']; label: string }[] = [
  { value: 'none', label: 'None (one request)' },
  { value: 'page', label: 'Page number' },
  { value: 'offset', label: 'Offset and limit' },
  { value: 'cursor', label: 'Cursor from the response' },
  { value: 'link_header', label: 'Link header (rel="next")' },
  { value: 'next_url', label: 'Next-page URL in the response' },
];
const STOPPED: Record<string, string> = {
  last_page: 'the last page',
  page_cap: 'the page cap',
  record_cap: 'the record cap',
  repeated_page: 'a page that repeated the one before',
};
const STATUS_COLOR: Record<ApiImport['lastRunStatus'], string> = {
  never: 'gray',
  queued: 'blue',
  running: 'blue',
  succeeded: 'teal',
  failed: 'red',
};

/** Header lines "Name: value" as a map (blank lines ignored). */
export function parseHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at <= 0) continue;
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** A pagination of the chosen type, with the usual parameter names as a start. */
function paginationOf(type: ApiPagination['type'], current: ApiPagination): ApiPagination {
  if (type === current.type) return current;
  switch (type) {
    case 'page':
      return { type, param: 'page', start: 1, sizeParam: null, size: null };
    case 'offset':
      return { type, offsetParam: 'offset', limitParam: 'limit', limit: 100, start: 0 };
    case 'cursor':
      return { type, param: 'cursor', path: '$.next_cursor' };
    case 'next_url':
      return { type, path: '$.next' };
    default:
      return { type };
  }
}

const cell = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

function AuthInputs({ auth, onChange }: { auth: ApiAuth; onChange: (a: ApiAuth) => void }) {
  return (
    <Stack gap="xs">
      <Select
        label="Authentication"
        data={[
          { value: 'none', label: 'None' },
          { value: 'bearer', label: 'Bearer token' },
          { value: 'basic', label: 'Basic (user and password)' },
          { value: 'api_key', label: 'API key header' },
        ]}
        value={auth.type}
        allowDeselect={false}
        onChange={(v) =>
          onChange(
            v === 'bearer'
              ? { type: 'bearer', token: '' }
              : v === 'basic'
                ? { type: 'basic', username: '', password: '' }
                : v === 'api_key'
                  ? { type: 'api_key', header: 'X-Api-Key', value: '' }
                  : { type: 'none' },
          )
        }
      />
      {auth.type === 'bearer' ? (
        <TextInput
          label="Token"
          type="password"
          value={auth.token}
          onChange={(e) => onChange({ ...auth, token: e.currentTarget.value })}
        />
      ) : null}
      {auth.type === 'basic' ? (
        <Group grow>
          <TextInput
            label="User"
            value={auth.username}
            onChange={(e) => onChange({ ...auth, username: e.currentTarget.value })}
          />
          <TextInput
            label="Password"
            type="password"
            value={auth.password}
            onChange={(e) => onChange({ ...auth, password: e.currentTarget.value })}
          />
        </Group>
      ) : null}
      {auth.type === 'api_key' ? (
        <Group grow>
          <TextInput
            label="Header"
            value={auth.header}
            onChange={(e) => onChange({ ...auth, header: e.currentTarget.value })}
          />
          <TextInput
            label="Key"
            type="password"
            value={auth.value}
            onChange={(e) => onChange({ ...auth, value: e.currentTarget.value })}
          />
        </Group>
      ) : null}
    </Stack>
  );
}

function PaginationInputs({
  value,
  onChange,
}: {
  value: ApiPagination;
  onChange: (p: ApiPagination) => void;
}) {
  return (
    <Stack gap="xs">
      <Select
        label="Pagination"
        data={PAGINATION_TYPES}
        value={value.type}
        allowDeselect={false}
        onChange={(v) => onChange(paginationOf((v ?? 'none') as ApiPagination['type'], value))}
      />
      {value.type === 'page' ? (
        <Group grow>
          <TextInput
            label="Page parameter"
            value={value.param}
            onChange={(e) => onChange({ ...value, param: e.currentTarget.value })}
          />
          <TextInput
            label="First page"
            value={String(value.start)}
            onChange={(e) => onChange({ ...value, start: Number(e.currentTarget.value) || 0 })}
          />
          <TextInput
            label="Page size parameter"
            value={value.sizeParam ?? ''}
            onChange={(e) => onChange({ ...value, sizeParam: e.currentTarget.value || null })}
          />
          <TextInput
            label="Page size"
            value={value.size === null ? '' : String(value.size)}
            onChange={(e) => onChange({ ...value, size: Number(e.currentTarget.value) || null })}
          />
        </Group>
      ) : null}
      {value.type === 'offset' ? (
        <Group grow>
          <TextInput
            label="Offset parameter"
            value={value.offsetParam}
            onChange={(e) => onChange({ ...value, offsetParam: e.currentTarget.value })}
          />
          <TextInput
            label="Limit parameter"
            value={value.limitParam}
            onChange={(e) => onChange({ ...value, limitParam: e.currentTarget.value })}
          />
          <TextInput
            label="Limit"
            value={String(value.limit)}
            onChange={(e) => onChange({ ...value, limit: Number(e.currentTarget.value) || 1 })}
          />
        </Group>
      ) : null}
      {value.type === 'cursor' ? (
        <Group grow>
          <TextInput
            label="Cursor parameter"
            value={value.param}
            onChange={(e) => onChange({ ...value, param: e.currentTarget.value })}
          />
          <TextInput
            label="Cursor in the response (JSONPath)"
            value={value.path}
            onChange={(e) => onChange({ ...value, path: e.currentTarget.value })}
          />
        </Group>
      ) : null}
      {value.type === 'next_url' ? (
        <TextInput
          label="Next URL in the response (JSONPath)"
          value={value.path}
          onChange={(e) => onChange({ ...value, path: e.currentTarget.value })}
        />
      ) : null}
    </Stack>
  );
}

function RecordsTable({ records, fields }: { records: Record<string, unknown>[]; fields: string[] }) {
  return (
    <ScrollArea>
      <Table striped withTableBorder fz="sm" data-testid="api-import-preview">
        <Table.Thead>
          <Table.Tr>
            {fields.map((f) => (
              <Table.Th key={f}>{f}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {records.map((r, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: preview rows have no key of their own
            <Table.Tr key={i}>
              {fields.map((f) => (
                <Table.Td
                  key={f}
                  maw={240}
                  style={{ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}
                >
                  {cell(r[f])}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </ScrollArea>
  );
}

function RunProgress({ trackingId }: { trackingId: string }) {
  const client = useQueryClient();
  const progress = useQuery({
    queryKey: ['progress', trackingId],
    queryFn: async () => {
      const p = await api<Progress>(`/rest/progress/${trackingId}`);
      if (['COMPLETED', 'FAILED', 'CANCELLED'].includes(p.status))
        void client.invalidateQueries({ queryKey: ['api-imports'] });
      return p;
    },
    refetchInterval: (q) =>
      q.state.data && ['COMPLETED', 'FAILED', 'CANCELLED'].includes(q.state.data.status) ? false : 800,
  });
  const p = progress.data;
  if (progress.error)
    return <ErrorAlert error={progress.error} title="Could not read the import's progress" />;
  if (!p) return <Loader size="sm" />;
  return (
    <Stack gap={4} data-testid="api-import-progress">
      <ProgressBar
        value={p.status === 'COMPLETED' ? 100 : (p.percent ?? 5)}
        animated={p.status === 'IN_PROGRESS' || p.status === 'PENDING'}
        color={p.status === 'FAILED' ? 'red' : 'blue'}
      />
      <Text size="sm" c={p.status === 'FAILED' ? 'red' : undefined}>
        {p.status === 'PENDING' ? 'Waiting for a worker…' : (p.message ?? p.status)}
      </Text>
    </Stack>
  );
}

function Destination({ proposal, config }: { proposal: Proposal; config: ApiFetchConfig }) {
  const client = useQueryClient();
  const [connectionId, setConnectionId] = useState<string | null>(null);
  const [baseRemoteId, setBaseRemoteId] = useState<string | null>(null);
  const [tableRemoteId, setTableRemoteId] = useState<string | null>(null);
  const [mapping, setMapping] = useState<Mapping[]>([]);
  const [name, setName] = useState('');
  const [schedule, setSchedule] = useState<'none' | 'hourly' | 'daily'>('none');
  const [trackingId, setTrackingId] = useState<string | null>(null);
  const connections = useQuery({
    queryKey: ['external-connections', 'all'],
    queryFn: () => api<Paged<ExternalConnection>>('/rest/external-connections?skip=0&take=100'),
  });
  const bases = useQuery({
    queryKey: ['base-previews', connectionId],
    queryFn: () =>
      api<{ basePreviews: { remoteId: string; name: string }[] }>(
        `/rest/external-connections/${connectionId}/fetch-base-previews`,
        { method: 'PATCH' },
      ),
    enabled: connectionId !== null,
  });
  const tables = useQuery({
    queryKey: ['api-import-target-tables', connectionId, baseRemoteId],
    queryFn: () =>
      api<{ tables: TargetTable[] }>('/rest/api-import/target-tables', {
        method: 'POST',
        body: { connectionId, baseRemoteId },
      }),
    enabled: connectionId !== null && baseRemoteId !== null,
  });
  const target =
    connectionId && baseRemoteId && tableRemoteId ? { connectionId, baseRemoteId, tableRemoteId } : null;
  const automap = useQuery({
    queryKey: ['api-import-automap', target, config.fields, config.idField],
    queryFn: async () => {
      const r = await api<{
        mapping: Mapping[];
        targetFields: TargetField[];
        matchTargetFieldId: string | null;
      }>('/rest/api-import/automap', {
        method: 'POST',
        body: {
          target,
          fields: config.fields,
          idField: config.idField,
          sampleRecords: proposal.sampleRecords.slice(0, 20),
        },
      });
      setMapping(r.mapping.map(({ sourceField, targetFieldId }) => ({ sourceField, targetFieldId })));
      return r;
    },
    enabled: target !== null && config.fields.length > 0,
  });
  const start = useMutation({
    mutationFn: () =>
      api<{ apiImport: ApiImport; trackingId: string | null }>('/rest/api-import/import', {
        method: 'POST',
        body: { name: name.trim() || new URL(config.url).hostname, config, target, mapping, schedule },
      }),
    onSuccess: (r) => {
      setTrackingId(r.trackingId);
      void client.invalidateQueries({ queryKey: ['api-imports'] });
    },
  });
  const writable = (automap.data?.targetFields ?? []).filter((f) => !f.readOnly);
  const targetOf = (source: string) => mapping.find((m) => m.sourceField === source)?.targetFieldId ?? null;
  const setTarget = (source: string, targetFieldId: string | null) =>
    setMapping((all) => [
      ...all.filter((m) => m.sourceField !== source && m.targetFieldId !== targetFieldId),
      ...(targetFieldId ? [{ sourceField: source, targetFieldId }] : []),
    ]);
  const idMapped = config.idField !== null && targetOf(config.idField) !== null;

  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>3. Where the records go</Title>
        {connections.error ? (
          <ErrorAlert error={connections.error} title="Could not load your connections" />
        ) : null}
        {connections.data && connections.data.items.length === 0 ? (
          <Text c="dimmed">
            Connect an app first (Syncs → New sync): records are imported into one of its tables.
          </Text>
        ) : null}
        <Group grow align="flex-start">
          <Select
            label="Connection"
            placeholder={connections.isLoading ? 'Loading…' : 'Choose a connection'}
            data={(connections.data?.items ?? []).map((c) => ({
              value: c.id,
              label: `${c.name} (${c.type})`,
            }))}
            value={connectionId}
            onChange={(v) => {
              setConnectionId(v);
              setBaseRemoteId(null);
              setTableRemoteId(null);
            }}
          />
          <Select
            label="Base"
            placeholder={bases.isLoading ? 'Loading…' : 'Choose a base'}
            data={(bases.data?.basePreviews ?? []).map((b) => ({ value: b.remoteId, label: b.name }))}
            value={baseRemoteId}
            disabled={!connectionId}
            onChange={(v) => {
              setBaseRemoteId(v);
              setTableRemoteId(null);
            }}
          />
          <Select
            label="Table"
            placeholder={tables.isLoading ? 'Loading…' : 'Choose a table'}
            data={(tables.data?.tables ?? []).map((t) => ({ value: t.remoteId, label: t.name }))}
            value={tableRemoteId}
            disabled={!baseRemoteId}
            onChange={setTableRemoteId}
          />
        </Group>
        {bases.error ? <ErrorAlert error={bases.error} title="Could not list the bases" /> : null}
        {tables.error ? <ErrorAlert error={tables.error} title="Could not list the tables" /> : null}
        {automap.isLoading ? <Loader size="sm" /> : null}
        {automap.error ? <ErrorAlert error={automap.error} title="Could not propose a mapping" /> : null}
        {automap.data ? (
          <Table withTableBorder fz="sm" data-testid="api-import-mapping">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>API field</Table.Th>
                <Table.Th>Table field</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {config.fields.map((f) => (
                <Table.Tr key={f.name}>
                  <Table.Td>
                    {f.name}{' '}
                    <Badge variant="light" size="xs">
                      {f.type}
                    </Badge>{' '}
                    {f.name === config.idField ? <Badge size="xs">id: matched on</Badge> : null}
                  </Table.Td>
                  <Table.Td>
                    <Select
                      aria-label={`Table field for ${f.name}`}
                      placeholder="Not imported"
                      clearable
                      data={writable.map((w) => ({ value: w.remoteId, label: `${w.name} (${w.type})` }))}
                      value={targetOf(f.name)}
                      onChange={(v) => setTarget(f.name, v)}
                    />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        ) : null}
        {automap.data && !idMapped ? (
          <Alert color="yellow">
            Map the id field{config.idField ? ` "${config.idField}"` : ''} to a field of the table: records
            are matched on it when they are imported again.
          </Alert>
        ) : null}
        <Group grow align="flex-end">
          <TextInput
            label="Name"
            placeholder="e.g. Products from the shop API"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Select
            label="Repeat"
            data={[
              { value: 'none', label: 'Only now' },
              { value: 'hourly', label: 'Every hour' },
              { value: 'daily', label: 'Every day' },
            ]}
            value={schedule}
            allowDeselect={false}
            onChange={(v) => setSchedule((v ?? 'none') as typeof schedule)}
          />
          <Button disabled={!target || !idMapped} loading={start.isPending} onClick={() => start.mutate()}>
            Import
          </Button>
        </Group>
        {start.error ? <ErrorAlert error={start.error} title="The import was not started" /> : null}
        {trackingId ? <RunProgress trackingId={trackingId} /> : null}
      </Stack>
    </Card>
  );
}

function SavedImports() {
  const client = useQueryClient();
  const [running, setRunning] = useState<Record<string, string>>({});
  const list = useQuery({
    queryKey: ['api-imports'],
    queryFn: () => api<{ items: ApiImport[] }>('/rest/api-import'),
    refetchInterval: (q) =>
      q.state.data?.items.some((i) => i.lastRunStatus === 'queued' || i.lastRunStatus === 'running')
        ? 2000
        : false,
  });
  const refresh = () => client.invalidateQueries({ queryKey: ['api-imports'] });
  const run = useMutation({
    mutationFn: (id: string) => api<{ trackingId: string }>(`/rest/api-import/${id}/run`, { method: 'POST' }),
    onSuccess: (r, id) => {
      setRunning((all) => ({ ...all, [id]: r.trackingId }));
      void refresh();
    },
  });
  const patch = useMutation({
    mutationFn: ({ id, schedule }: { id: string; schedule: string }) =>
      api<ApiImport>(`/rest/api-import/${id}`, { method: 'PATCH', body: { schedule } }),
    onSuccess: () => void refresh(),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api(`/rest/api-import/${id}`, { method: 'DELETE' }),
    onSuccess: () => void refresh(),
  });

  return (
    <Stack>
      <Title order={3}>Saved imports</Title>
      {list.isLoading ? <Loader /> : null}
      {list.error ? <ErrorAlert error={list.error} title="Could not load your imports" /> : null}
      {(run.error ?? patch.error ?? remove.error) ? (
        <ErrorAlert error={run.error ?? patch.error ?? remove.error} />
      ) : null}
      {list.data && list.data.items.length === 0 ? (
        <EmptyState
          title="No imports yet"
          text="Propose a configuration from an API above, preview its records and import them into a table of a connected app."
        />
      ) : null}
      {list.data?.items.map((i) => (
        <Card key={i.id} withBorder data-testid={`api-import-${i.id}`}>
          <Stack gap="xs">
            <Group justify="space-between">
              <div>
                <Text fw={600}>{i.name}</Text>
                <Text size="sm" c="dimmed">
                  {i.config.url} → {i.target.connectionName ?? 'a deleted connection'} /{' '}
                  {i.target.tableRemoteId}
                </Text>
              </div>
              <Group gap="xs">
                <Select
                  aria-label={`Schedule of ${i.name}`}
                  size="xs"
                  w={130}
                  data={[
                    { value: 'none', label: 'Not repeated' },
                    { value: 'hourly', label: 'Every hour' },
                    { value: 'daily', label: 'Every day' },
                  ]}
                  value={i.schedule}
                  allowDeselect={false}
                  onChange={(v) => v && patch.mutate({ id: i.id, schedule: v })}
                />
                <Button
                  size="xs"
                  variant="light"
                  loading={run.isPending && run.variables === i.id}
                  onClick={() => run.mutate(i.id)}
                >
                  Run now
                </Button>
                <Button size="xs" variant="subtle" color="red" onClick={() => remove.mutate(i.id)}>
                  Delete
                </Button>
              </Group>
            </Group>
            <Group gap="xs">
              <Badge color={STATUS_COLOR[i.lastRunStatus]}>
                {i.lastRunStatus === 'never' ? 'never run' : i.lastRunStatus}
              </Badge>
              {i.lastRunCounts ? (
                <Text size="sm">
                  {i.lastRunCounts.fetched} read: {i.lastRunCounts.created} created, {i.lastRunCounts.updated}{' '}
                  updated, {i.lastRunCounts.unchanged} unchanged
                  {i.lastRunCounts.failed ? `, ${i.lastRunCounts.failed} failed` : ''}
                </Text>
              ) : null}
              {i.lastRunAt ? (
                <Text size="sm" c="dimmed">
                  last run {new Date(i.lastRunAt).toLocaleString()}
                </Text>
              ) : null}
              {i.nextRunAt ? (
                <Text size="sm" c="dimmed">
                  · next {new Date(i.nextRunAt).toLocaleString()}
                </Text>
              ) : null}
            </Group>
            {i.lastRunError ? (
              <Text size="sm" c="red">
                {i.lastRunError}
              </Text>
            ) : null}
            {running[i.id] ? <RunProgress trackingId={running[i.id] as string} /> : null}
          </Stack>
        </Card>
      ))}
    </Stack>
  );
}

/** API import: any JSON API's records into a table of a connected app, now or on a schedule. */
export function ApiImportPage() {
  const [mode, setMode] = useState<'url' | 'sample'>('url');
  const [url, setUrl] = useState('');
  const [sample, setSample] = useState('');
  const [headers, setHeaders] = useState('');
  const [auth, setAuth] = useState<ApiAuth>({ type: 'none' });
  const [proposal, setProposal] = useState<Proposal | null>(null);
  const [config, setConfig] = useState<ApiFetchConfig | null>(null);
  const propose = useMutation({
    mutationFn: () =>
      api<Proposal>('/rest/api-import/generate-fetch', {
        method: 'POST',
        body: mode === 'url' ? { url, headers: parseHeaders(headers), auth } : { sample },
      }),
    onSuccess: (p) => {
      setProposal(p);
      // A pasted sample has no address: the user gives the real one (and its auth) here.
      setConfig(
        mode === 'sample' ? { ...p.config, url: '', headers: parseHeaders(headers), auth } : p.config,
      );
      preview.reset();
    },
  });
  const preview = useMutation({
    mutationFn: (c: ApiFetchConfig) =>
      api<Preview>('/rest/api-import/fetch', { method: 'POST', body: { config: c } }),
  });
  const edit = (change: Partial<ApiFetchConfig>) => setConfig((c) => (c ? { ...c, ...change } : c));

  return (
    <Stack maw={1100}>
      <div>
        <Title order={2}>API import</Title>
        <Text c="dimmed">
          Bring records from any JSON HTTP API into a table of a connected app, once or every hour or day.
          Records are matched on their id: changed ones are updated, new ones created, none deleted.
        </Text>
      </div>

      <Card withBorder>
        <Stack>
          <Title order={3}>1. The API</Title>
          <SegmentedControl
            value={mode}
            onChange={(v) => setMode(v as 'url' | 'sample')}
            data={[
              { value: 'url', label: 'Sample URL' },
              { value: 'sample', label: 'Paste a sample response' },
            ]}
          />
          {mode === 'url' ? (
            <>
              <TextInput
                label="URL"
                placeholder="https://api.example.com/v1/products?page=1"
                value={url}
                onChange={(e) => setUrl(e.currentTarget.value)}
              />
              <AuthInputs auth={auth} onChange={setAuth} />
              <Textarea
                label="Headers"
                description="One per line: Name: value. Credentials are stored sealed and never shown again."
                rows={2}
                value={headers}
                onChange={(e) => setHeaders(e.currentTarget.value)}
              />
            </>
          ) : (
            <Textarea
              label="Sample response (JSON)"
              rows={8}
              value={sample}
              onChange={(e) => setSample(e.currentTarget.value)}
            />
          )}
          <Group>
            <Button
              loading={propose.isPending}
              disabled={mode === 'url' ? url.trim() === '' : sample.trim() === ''}
              onClick={() => propose.mutate()}
            >
              Propose a configuration
            </Button>
          </Group>
          {propose.error ? <ErrorAlert error={propose.error} title="Could not read the API" /> : null}
        </Stack>
      </Card>

      {proposal && config ? (
        <Card withBorder>
          <Stack>
            <Title order={3}>2. How to read it</Title>
            <List size="sm" data-testid="api-import-reasons">
              {proposal.reasons.map((r) => (
                <List.Item key={r}>{r}</List.Item>
              ))}
            </List>
            <TextInput
              label="URL"
              value={config.url}
              onChange={(e) => edit({ url: e.currentTarget.value })}
            />
            {mode === 'sample' ? <AuthInputs auth={config.auth} onChange={(a) => edit({ auth: a })} /> : null}
            <Group grow align="flex-start">
              <TextInput
                label="Records (JSONPath)"
                value={config.recordsPath}
                onChange={(e) => edit({ recordsPath: e.currentTarget.value })}
                description={
                  proposal.candidatePaths.length > 1
                    ? `Other lists: ${proposal.candidatePaths
                        .slice(1, 4)
                        .map((c) => c.path)
                        .join(', ')}`
                    : undefined
                }
              />
              <Select
                label="Id field"
                placeholder="Choose the id field"
                data={config.fields.map((f) => f.name)}
                value={config.idField}
                onChange={(v) => edit({ idField: v })}
              />
            </Group>
            <PaginationInputs value={config.pagination} onChange={(p) => edit({ pagination: p })} />
            <Table withTableBorder fz="sm" data-testid="api-import-fields">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Field</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>Sample</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {config.fields.map((f, i) => (
                  <Table.Tr key={f.name}>
                    <Table.Td>
                      <Code>{f.name}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Select
                        aria-label={`Type of ${f.name}`}
                        size="xs"
                        data={FIELD_TYPES}
                        value={f.type}
                        allowDeselect={false}
                        onChange={(v) =>
                          edit({
                            fields: config.fields.map((x, j) =>
                              j === i ? { ...x, type: (v ?? 'text') as ApiFieldType } : x,
                            ),
                          })
                        }
                      />
                    </Table.Td>
                    <Table.Td>{cell(proposal.sampleRecords[0]?.[f.name])}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            <Group>
              <Button
                variant="light"
                loading={preview.isPending}
                disabled={config.url === ''}
                onClick={() => preview.mutate(config)}
              >
                Fetch preview
              </Button>
            </Group>
            {preview.error ? <ErrorAlert error={preview.error} title="The preview failed" /> : null}
            {preview.data ? (
              <Stack gap="xs">
                <Text size="sm" data-testid="api-import-preview-summary">
                  {preview.data.totalCount} records over {preview.data.pagesRead} page
                  {preview.data.pagesRead === 1 ? '' : 's'}, stopped at{' '}
                  {STOPPED[preview.data.stoppedBecause] ?? preview.data.stoppedBecause}.
                  {preview.data.records.length < preview.data.totalCount
                    ? ` The first ${preview.data.records.length} are shown.`
                    : ''}
                </Text>
                {preview.data.totalCount === 0 ? (
                  <Text c="dimmed">No records at {config.recordsPath}. Check the records path.</Text>
                ) : (
                  <RecordsTable records={preview.data.records} fields={config.fields.map((f) => f.name)} />
                )}
              </Stack>
            ) : null}
          </Stack>
        </Card>
      ) : null}

      {proposal && config && preview.data ? <Destination proposal={proposal} config={config} /> : null}

      <SavedImports />
    </Stack>
  );
}
