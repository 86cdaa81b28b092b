import type { CoreBase } from '@lockstep/contract';
import { Anchor, Button, Card, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { RecordStatusView } from '../components/record-status-view';
import type { CoreMetaRecord } from '../components/run-view-types';
import { PageLoader, SyncScreen } from '../components/sync-screen';
import { api } from '../lib/api';
import type { Paged } from '../lib/paged';

type Lookup = { externalBaseId: string; externalTableId: string; remoteRecordId: string };

/** The side a base is on in this sync, or null when it is not one of the sync's bases. */
function sideOf(sync: CoreBase, externalBaseId: string): 'left' | 'right' | null {
  if (sync.leftExternalBase?.id === externalBaseId) return 'left';
  if (sync.rightExternalBase?.id === externalBaseId) return 'right';
  return null;
}

function LookupResult({ sync, lookup }: { sync: CoreBase; lookup: Lookup }) {
  const query = new URLSearchParams({ query: lookup.remoteRecordId, skip: '0', take: '50' });
  if (lookup.externalTableId) query.set('externalTableId', lookup.externalTableId);
  const found = useQuery({
    queryKey: ['record-lookup', sync.id, lookup],
    queryFn: () => api<Paged<CoreMetaRecord>>(`/rest/core-meta-records/${sync.id}/search?${query}`),
  });
  if (found.isLoading) return <PageLoader label="Looking up the record" />;
  if (found.error) return <ErrorAlert error={found.error} title="Could not look up the record" />;
  // The search also matches values; only a record with this id on the chosen side is the one asked for.
  const side = lookup.externalBaseId ? sideOf(sync, lookup.externalBaseId) : null;
  const matches = (found.data?.items ?? []).filter((r) =>
    side === 'left'
      ? r.leftRemoteId === lookup.remoteRecordId
      : side === 'right'
        ? r.rightRemoteId === lookup.remoteRecordId
        : r.leftRemoteId === lookup.remoteRecordId || r.rightRemoteId === lookup.remoteRecordId,
  );
  const [first, ...others] = matches;
  if (!first)
    return <Text c="dimmed">No linked record has the id “{lookup.remoteRecordId}” in this sync.</Text>;
  return (
    <Stack>
      {others.length > 0 ? (
        <Card withBorder padding="sm">
          <Text size="sm">
            {matches.length} linked records have this id (one per table pair). Others:{' '}
            {others.map((r, i) => (
              <span key={r.id}>
                {i > 0 ? ', ' : ''}
                <Anchor component={Link} to={`/syncs/${sync.id}/record-status/${r.id}`} size="sm">
                  {r.id}
                </Anchor>
              </span>
            ))}
          </Text>
        </Card>
      ) : null}
      <RecordStatusView key={first.id} sync={sync} recordId={first.id} />
    </Stack>
  );
}

function LookupForm({ sync, initial }: { sync: CoreBase; initial: Lookup }) {
  const [, setParams] = useSearchParams();
  const [form, setForm] = useState(initial);
  const bases = [sync.leftExternalBase, sync.rightExternalBase].filter((b) => b !== null);
  const base = bases.find((b) => b.id === form.externalBaseId);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (form.externalBaseId) next.set('externalBaseId', form.externalBaseId);
    if (form.externalTableId) next.set('externalTableId', form.externalTableId);
    if (form.remoteRecordId.trim()) next.set('remoteRecordId', form.remoteRecordId.trim());
    setParams(next);
  };
  return (
    <form onSubmit={submit}>
      <Group gap="xs" align="end" wrap="wrap">
        <Select
          label="App"
          placeholder="Either app"
          data={bases.map((b) => ({
            value: b.id,
            label: `${b.name} (${b.side === 'left' ? 'first' : 'second'})`,
          }))}
          value={form.externalBaseId || null}
          onChange={(v) => setForm((f) => ({ ...f, externalBaseId: v ?? '', externalTableId: '' }))}
          clearable
          w={240}
        />
        <Select
          label="Table"
          placeholder={base ? 'Any table' : 'Choose an app first'}
          data={base?.externalTables.map((t) => ({ value: t.id, label: t.name })) ?? []}
          value={form.externalTableId || null}
          onChange={(v) => setForm((f) => ({ ...f, externalTableId: v ?? '' }))}
          disabled={!base}
          searchable
          clearable
          w={240}
        />
        <TextInput
          label="Record id in that app"
          value={form.remoteRecordId}
          onChange={(e) => {
            const value = e.currentTarget.value;
            setForm((f) => ({ ...f, remoteRecordId: value }));
          }}
          required
          w={260}
        />
        <Button type="submit" variant="default">
          Look up
        </Button>
      </Group>
    </form>
  );
}

/** /syncs/{id}/dev-tools/records-old: a record's status from an app's record id (?externalBaseId, externalTableId, remoteRecordId). */
export function SyncDevToolsRecordsOldPage() {
  const [params] = useSearchParams();
  const lookup: Lookup = {
    externalBaseId: params.get('externalBaseId') ?? '',
    externalTableId: params.get('externalTableId') ?? '',
    remoteRecordId: params.get('remoteRecordId') ?? '',
  };
  return (
    <SyncScreen title="Look up a record">
      {(sync) => (
        <>
          <LookupForm key={params.toString()} sync={sync} initial={lookup} />
          {lookup.remoteRecordId ? (
            <LookupResult sync={sync} lookup={lookup} />
          ) : (
            <Text c="dimmed" size="sm">
              Enter a record id from one of the apps to see the linked record on both sides.
            </Text>
          )}
        </>
      )}
    </SyncScreen>
  );
}
