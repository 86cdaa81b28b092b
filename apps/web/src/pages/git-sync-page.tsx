import type { CoreBase, CreateGitSyncBody, GitSync, GitSyncRun, GitTablePreviews } from '@lockstep/contract';
import {
  Anchor,
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  Loader,
  PasswordInput,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';

type Paged<T> = { items: T[]; total: number };
const ACTIVE = ['PENDING', 'IN_PROGRESS'];
const STATUS_COLOR: Record<string, string> = {
  PENDING: 'gray',
  IN_PROGRESS: 'blue',
  COMPLETED: 'teal',
  FAILED: 'red',
  CANCELLED: 'orange',
};
const KIND_LABEL: Record<GitSyncRun['kind'], string> = {
  upload: 'Upload',
  download: 'Download',
  fetch_schema: 'Fetch schema',
};
const short = (oid: string | null) => (oid ? oid.slice(0, 7) : '—');

function RunRow({ run }: { run: GitSyncRun }) {
  const changes = run.counts.map(
    (c) => `${c.file}: ${c.records} rows (${c.created} new, ${c.updated} changed, ${c.deleted} deleted)`,
  );
  return (
    <Table.Tr data-testid={`run-${run.id}`}>
      <Table.Td>{KIND_LABEL[run.kind]}</Table.Td>
      <Table.Td>
        <Badge color={STATUS_COLOR[run.status]} variant="light">
          {run.status === 'IN_PROGRESS' && run.total ? `${run.done}/${run.total}` : run.status.toLowerCase()}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Code>{short(run.commitId)}</Code>
      </Table.Td>
      <Table.Td>
        <Stack gap={2}>
          {run.message ? <Text size="sm">{run.message}</Text> : null}
          {changes.map((line) => (
            <Text size="xs" c="dimmed" key={line}>
              {line}
            </Text>
          ))}
          {run.conflicts.map((c) => (
            <Text size="xs" c="orange" key={`${c.table}-${c.recordId}-${c.field}`}>
              Conflict on {c.table} {c.recordId} ({c.field}): git {JSON.stringify(c.gitValue)}, app{' '}
              {JSON.stringify(c.appValue)} —{' '}
              {c.outcome === 'held' ? 'held for review' : c.outcome.replace('_', ' ')}
            </Text>
          ))}
          {run.problems.map((p) => (
            <Text size="xs" c="red" key={p}>
              {p}
            </Text>
          ))}
          {run.error ? (
            <Text size="sm" c="red">
              {run.error}
            </Text>
          ) : null}
        </Stack>
      </Table.Td>
      <Table.Td>{new Date(run.createdAt).toLocaleString()}</Table.Td>
    </Table.Tr>
  );
}

function GitSyncCard({ sync, gitSync }: { sync: CoreBase; gitSync: GitSync }) {
  const client = useQueryClient();
  const runs = useQuery({
    queryKey: ['git-sync-runs', gitSync.gitSyncId],
    queryFn: () => api<Paged<GitSyncRun>>(`/rest/git-sync/${gitSync.gitSyncId}/runs?take=10`),
    refetchInterval: (q) => (q.state.data?.items.some((r) => ACTIVE.includes(r.status)) ? 1500 : false),
  });
  const [previews, setPreviews] = useState<GitTablePreviews | null>(null);
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['git-sync-runs', gitSync.gitSyncId] });
    void client.invalidateQueries({ queryKey: ['git-syncs'] });
  };
  const action = useMutation({
    mutationFn: (path: string) =>
      api<GitSyncRun>(`/rest/git-sync/${gitSync.gitSyncId}/${path}`, { method: 'POST', body: {} }),
    onSettled: refresh,
  });
  const look = useMutation({
    mutationFn: () => api<GitTablePreviews>(`/rest/git-sync/${gitSync.gitSyncId}/fetch-table-previews`),
    onSuccess: setPreviews,
  });
  const remove = useMutation({
    mutationFn: () => api(`/rest/git-sync/${gitSync.gitSyncId}`, { method: 'DELETE' }),
    onSettled: refresh,
  });
  const running = runs.data?.items.some((r) => ACTIVE.includes(r.status)) ?? false;
  const repo = gitSync.repository;
  return (
    <Stack gap="sm">
      <Text size="sm">
        {repo.kind === 'https' ? repo.url : repo.path} · branch <Code>{gitSync.branch}</Code> · folder{' '}
        <Code>{gitSync.folder}</Code> · {gitSync.sides.join(' and ')} side
        {gitSync.sides.length > 1 ? 's' : ''} as {gitSync.format === 'csv' ? 'CSV' : 'JSON Lines'} · last
        synced <Code>{short(gitSync.lastSyncedCommit)}</Code>
      </Text>
      <Group gap="xs">
        <Button
          size="xs"
          onClick={() => action.mutate('run-upload')}
          disabled={running}
          loading={action.isPending && action.variables === 'run-upload'}
        >
          Upload
        </Button>
        <Button
          size="xs"
          onClick={() => action.mutate('run-download')}
          disabled={running}
          loading={action.isPending && action.variables === 'run-download'}
        >
          Download
        </Button>
        <Button
          size="xs"
          variant="light"
          onClick={() => action.mutate('run-fetch-schema')}
          disabled={running}
        >
          Fetch schema
        </Button>
        <Button
          size="xs"
          variant="light"
          color="orange"
          onClick={() => action.mutate('cancel')}
          disabled={!running}
        >
          Cancel
        </Button>
        <Button size="xs" variant="subtle" onClick={() => look.mutate()} loading={look.isPending}>
          Files in the repository
        </Button>
        <Button
          size="xs"
          variant="subtle"
          color="red"
          onClick={() => remove.mutate()}
          loading={remove.isPending}
        >
          Remove git sync
        </Button>
      </Group>
      {action.error ? <ErrorAlert error={action.error} /> : null}
      {look.error ? <ErrorAlert error={look.error} title="Could not read the repository" /> : null}
      {remove.error ? <ErrorAlert error={remove.error} /> : null}
      {previews ? (
        previews.tables.length === 0 ? (
          <Text size="sm" c="dimmed">
            No table files at {previews.commitId ? short(previews.commitId) : 'the branch (no commit yet)'}.
          </Text>
        ) : (
          <Stack gap={2} aria-label="Files in the repository">
            {previews.tables.map((t) => (
              <Text size="sm" key={t.file}>
                <Code>{t.file}</Code> ({t.side}, {t.table}): {t.records} rows
              </Text>
            ))}
          </Stack>
        )
      ) : null}
      {runs.isLoading ? <Loader size="sm" /> : null}
      {runs.error ? <ErrorAlert error={runs.error} title="Could not load the runs" /> : null}
      {runs.data && runs.data.items.length === 0 ? (
        <Text size="sm" c="dimmed">
          No runs yet. Upload writes {sync.name}'s records to the repository.
        </Text>
      ) : null}
      {runs.data && runs.data.items.length > 0 ? (
        <Table aria-label={`Runs of ${sync.name}`}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Run</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Commit</Table.Th>
              <Table.Th>What happened</Table.Th>
              <Table.Th>Started</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {runs.data.items.map((r) => (
              <RunRow run={r} key={r.id} />
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
    </Stack>
  );
}

function SetUpForm({ sync, onDone }: { sync: CoreBase; onDone: () => void }) {
  const client = useQueryClient();
  const [kind, setKind] = useState<'https' | 'local'>('https');
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [localPath, setLocalPath] = useState('');
  const [branch, setBranch] = useState('main');
  const [folder, setFolder] = useState('lockstep');
  const [sides, setSides] = useState<string[]>(['left', 'right']);
  const [format, setFormat] = useState<'csv' | 'jsonl'>('csv');
  const create = useMutation({
    mutationFn: (body: CreateGitSyncBody) => api<GitSync>('/rest/git-sync', { method: 'POST', body }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['git-syncs'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({
      coreBaseId: sync.id,
      repository: kind === 'https' ? { kind, url, ...(token ? { token } : {}) } : { kind, path: localPath },
      branch,
      folder,
      sides: sides as ('left' | 'right')[],
      format,
    });
  };
  return (
    <form onSubmit={submit} aria-label={`Set up a git sync for ${sync.name}`}>
      <Stack gap="xs" maw={560}>
        <SegmentedControl
          value={kind}
          onChange={(v) => setKind(v as 'https' | 'local')}
          data={[
            { value: 'https', label: 'HTTPS repository' },
            { value: 'local', label: 'Local path (local server)' },
          ]}
        />
        {kind === 'https' ? (
          <>
            <TextInput
              label="Repository URL"
              placeholder="https://github.com/you/data.git"
              value={url}
              onChange={(e) => setUrl(e.currentTarget.value)}
              required
            />
            <PasswordInput
              label="Access token"
              description="Kept encrypted; needs read and write access."
              value={token}
              onChange={(e) => setToken(e.currentTarget.value)}
            />
          </>
        ) : (
          <TextInput
            label="Repository path"
            placeholder="/home/you/data.git"
            value={localPath}
            onChange={(e) => setLocalPath(e.currentTarget.value)}
            required
          />
        )}
        <Group grow>
          <TextInput
            label="Branch"
            value={branch}
            onChange={(e) => setBranch(e.currentTarget.value)}
            required
          />
          <TextInput
            label="Folder"
            value={folder}
            onChange={(e) => setFolder(e.currentTarget.value)}
            required
          />
        </Group>
        <Checkbox.Group label="Tables of" value={sides} onChange={setSides}>
          <Group mt={4}>
            <Checkbox value="left" label="Left side" />
            <Checkbox value="right" label="Right side" />
          </Group>
        </Checkbox.Group>
        <Select
          label="File format"
          value={format}
          onChange={(v) => setFormat((v as 'csv' | 'jsonl') ?? 'csv')}
          data={[
            { value: 'csv', label: 'CSV' },
            { value: 'jsonl', label: 'JSON Lines' },
          ]}
          allowDeselect={false}
        />
        {create.error ? <ErrorAlert error={create.error} title="Could not set up the git sync" /> : null}
        <Group>
          <Button type="submit" loading={create.isPending} disabled={sides.length === 0}>
            Save git sync
          </Button>
          <Button variant="subtle" onClick={onDone}>
            Back
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** /git-sync/core-bases: each sync with its git sync (runs, Upload, Download, Fetch schema, Cancel) or a Set up form. */
export function GitSyncPage() {
  const syncs = useQuery({
    queryKey: ['core-bases', 'git-sync'],
    queryFn: () => api<Paged<CoreBase>>('/rest/core-bases?detailLevel=basic&take=200'),
  });
  const gitSyncs = useQuery({
    queryKey: ['git-syncs'],
    queryFn: () => api<{ items: GitSync[] }>('/rest/git-sync'),
  });
  const [settingUp, setSettingUp] = useState<string | null>(null);
  const error = syncs.error ?? gitSyncs.error;
  return (
    <Stack>
      <Title order={2}>Git sync</Title>
      <Text c="dimmed" maw={720}>
        Keep a sync's tables as files in a git repository (one CSV or JSON Lines file per table and a
        schema.json), to review, diff, branch and restore them with git. Upload commits the apps' records;
        Download applies the edits made in git since, merged field by field with the apps' own.
      </Text>
      {error ? <ErrorAlert error={error} title="Could not load the git syncs" /> : null}
      {!error && (syncs.isLoading || gitSyncs.isLoading) ? <Loader aria-label="Loading" /> : null}
      {syncs.data && syncs.data.items.length === 0 ? (
        <EmptyState
          title="No syncs yet"
          text="A git sync keeps the tables of one of your syncs in a repository. Create a sync first."
          action={
            <Button component={Link} to="/syncs/new">
              Create a sync
            </Button>
          }
        />
      ) : null}
      {syncs.data && gitSyncs.data
        ? syncs.data.items.map((sync) => {
            const gitSync = gitSyncs.data.items.find((g) => g.coreBaseId === sync.id);
            return (
              <Card withBorder key={sync.id} data-testid={`git-sync-${sync.id}`}>
                <Stack gap="sm">
                  <Group justify="space-between">
                    <Anchor component={Link} to={`/syncs/${sync.id}`} fw={600}>
                      {sync.name}
                    </Anchor>
                    {!gitSync && settingUp !== sync.id ? (
                      <Button size="xs" variant="light" onClick={() => setSettingUp(sync.id)}>
                        Set up
                      </Button>
                    ) : null}
                  </Group>
                  {gitSync ? (
                    <GitSyncCard sync={sync} gitSync={gitSync} />
                  ) : settingUp === sync.id ? (
                    <SetUpForm sync={sync} onDone={() => setSettingUp(null)} />
                  ) : (
                    <Text size="sm" c="dimmed">
                      Not kept in git.
                    </Text>
                  )}
                </Stack>
              </Card>
            );
          })
        : null}
    </Stack>
  );
}
