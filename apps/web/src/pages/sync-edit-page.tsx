import { type CoreBase, DEFAULT_SYNC_NAME, syncPermission } from '@lockstep/contract';
import {
  Alert,
  Button,
  Center,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { SideSetup } from '../components/side-setup';
import { SyncNav } from '../components/sync-nav';
import { api } from '../lib/api';
import { showError } from '../lib/notify';
import { usePlan } from '../lib/queries';
import { useCoreBase, useInvalidateSync } from '../lib/sync-queries';

/** /syncs/new: a name, then the sync exists and its apps are chosen on the edit screen. */
export function SyncNewPage() {
  const navigate = useNavigate();
  const client = useQueryClient();
  const plan = usePlan();
  const [name, setName] = useState(DEFAULT_SYNC_NAME);
  const allowed = syncPermission('create', plan.subscription, plan.limits);
  const create = useMutation({
    mutationFn: () => api<CoreBase>('/rest/core-bases', { method: 'POST', body: { name } }),
    onSuccess: (base) => {
      void client.invalidateQueries({ queryKey: ['core-bases'] });
      void client.invalidateQueries({ queryKey: ['limit-data'] });
      navigate(`/syncs/edit/${base.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Stack maw={560}>
      <Title order={2}>New sync</Title>
      <Text c="dimmed">
        Name the sync, then choose the two apps it keeps in step. You can preview everything before a single
        record is written.
      </Text>
      {!allowed.allowed ? <Alert color="yellow">{allowed.reason}</Alert> : null}
      {create.error ? <ErrorAlert error={create.error} title="Could not create the sync" /> : null}
      <form onSubmit={submit}>
        <Stack>
          <TextInput
            label="Name"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            required
            maxLength={200}
            data-autofocus
          />
          <Group>
            <Button type="submit" loading={create.isPending} disabled={!allowed.allowed}>
              Create sync and choose apps
            </Button>
            <Button variant="default" component={Link} to="/syncs">
              Cancel
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  );
}

function NameField({ sync }: { sync: CoreBase }) {
  const invalidate = useInvalidateSync();
  const [name, setName] = useState(sync.name);
  useEffect(() => setName(sync.name), [sync.name]);
  const rename = useMutation({
    mutationFn: () => api(`/rest/core-bases/${sync.id}`, { method: 'PATCH', body: { name } }),
    onSuccess: () => invalidate(sync.id),
    onError: (e) => showError(e, 'Could not rename the sync'),
  });
  const dirty = name.trim() !== sync.name && name.trim() !== '';
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (dirty) rename.mutate();
      }}
    >
      <Group align="end">
        <TextInput
          label="Name"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          maxLength={200}
          w={360}
        />
        <Button type="submit" variant="default" disabled={!dirty} loading={rename.isPending}>
          Rename
        </Button>
      </Group>
    </form>
  );
}

/** /syncs/edit/{id}: the sync's two apps (connection and base each), then on to the tables. */
export function SyncEditPage() {
  const { id } = useParams();
  const sync = useCoreBase(id);
  if (sync.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the sync" />
      </Center>
    );
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  const s = sync.data;
  const ready = Boolean(s.leftExternalBase && s.rightExternalBase);
  return (
    <Stack>
      <SyncNav sync={s} title="Apps" />
      <NameField sync={s} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <SideSetup coreBase={s} side="left" />
        <SideSetup coreBase={s} side="right" />
      </SimpleGrid>
      <Group>
        <Button component={Link} to={`/syncs/${s.id}/table-mappings`} disabled={!ready}>
          Next: map tables
        </Button>
        {!ready ? (
          <Text size="sm" c="dimmed">
            Connect both apps to map their tables.
          </Text>
        ) : null}
      </Group>
    </Stack>
  );
}
