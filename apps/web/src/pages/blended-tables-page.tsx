import type { BlendedTable, ExternalConnection } from '@lockstep/contract';
import {
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  Loader,
  ScrollArea,
  Select,
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
import { api } from '../lib/api';
import type { Paged } from '../lib/paged';

type SourcePick = { connectionId: string | null; baseRemoteId: string | null; tableRemoteId: string | null };
type Source = { connectionId: string; baseRemoteId: string; tableRemoteId: string; name: string };
type SourceField = { remoteId: string; name: string; type: string };
type EditField = {
  name: string;
  type: string;
  sourceFields: (string | null)[];
  options: Record<string, unknown>;
  readOnly: boolean;
  reasons: string[];
  keep: boolean;
};
type Proposal = {
  name: string;
  sources: Source[];
  defaultSource: number;
  fields: Omit<EditField, 'keep'>[];
  sourceFields: SourceField[][];
};
type Preview = {
  fields: { id: string; name: string; type: string }[];
  rows: { id: string; source: string; sourceIndex: number; fields: Record<string, unknown> }[];
};

const emptyPick = (): SourcePick => ({ connectionId: null, baseRemoteId: null, tableRemoteId: null });
const show = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** One source table: a connection of the user's, one of its bases, one of its tables. */
function SourcePicker({
  index,
  pick,
  connections,
  onChange,
  onRemove,
}: {
  index: number;
  pick: SourcePick;
  connections: ExternalConnection[];
  onChange: (p: SourcePick) => void;
  onRemove: (() => void) | null;
}) {
  const bases = useQuery({
    queryKey: ['base-previews', pick.connectionId],
    queryFn: () =>
      api<{ basePreviews: { remoteId: string; name: string }[] }>(
        `/rest/external-connections/${pick.connectionId}/fetch-base-previews`,
        { method: 'PATCH' },
      ),
    enabled: pick.connectionId !== null,
  });
  const tables = useQuery({
    queryKey: ['blended-source-tables', pick.connectionId, pick.baseRemoteId],
    queryFn: () =>
      api<{ tables: { remoteId: string; name: string }[] }>('/rest/api-import/target-tables', {
        method: 'POST',
        body: { connectionId: pick.connectionId, baseRemoteId: pick.baseRemoteId },
      }),
    enabled: pick.connectionId !== null && pick.baseRemoteId !== null,
  });
  return (
    <Stack gap={4} data-testid={`blended-source-${index}`}>
      <Group align="end">
        <Select
          label={`Source ${index + 1}: connection`}
          placeholder="Choose a connection"
          data={connections.map((c) => ({ value: c.id, label: c.name }))}
          value={pick.connectionId}
          onChange={(v) => onChange({ connectionId: v, baseRemoteId: null, tableRemoteId: null })}
        />
        <Select
          label={`Source ${index + 1}: base`}
          placeholder={bases.isLoading ? 'Loading…' : 'Choose a base'}
          data={(bases.data?.basePreviews ?? []).map((b) => ({ value: b.remoteId, label: b.name }))}
          value={pick.baseRemoteId}
          disabled={!pick.connectionId}
          onChange={(v) => onChange({ ...pick, baseRemoteId: v, tableRemoteId: null })}
        />
        <Select
          label={`Source ${index + 1}: table`}
          placeholder={tables.isLoading ? 'Loading…' : 'Choose a table'}
          data={(tables.data?.tables ?? []).map((t) => ({ value: t.remoteId, label: t.name }))}
          value={pick.tableRemoteId}
          disabled={!pick.baseRemoteId}
          onChange={(v) => onChange({ ...pick, tableRemoteId: v })}
        />
        {onRemove ? (
          <Button variant="subtle" color="red" onClick={onRemove}>
            Remove
          </Button>
        ) : null}
      </Group>
      {bases.error ? <ErrorAlert error={bases.error} title="Could not list the bases" /> : null}
      {tables.error ? <ErrorAlert error={tables.error} title="Could not list the tables" /> : null}
    </Stack>
  );
}

/** The editor: choose sources, edit the proposed fields, preview, save. */
function NewBlendedTable() {
  const queryClient = useQueryClient();
  const [picks, setPicks] = useState<SourcePick[]>([emptyPick(), emptyPick()]);
  const [proposal, setProposal] = useState<Proposal | null>(null);
  const [name, setName] = useState('');
  const [sources, setSources] = useState<Source[]>([]);
  const [defaultSource, setDefaultSource] = useState(0);
  const [fields, setFields] = useState<EditField[]>([]);
  const connections = useQuery({
    queryKey: ['external-connections', 'all'],
    queryFn: () => api<Paged<ExternalConnection>>('/rest/external-connections?skip=0&take=100'),
  });
  const usable = (connections.data?.items ?? []).filter((c) => c.type !== 'blended');
  const chosen = picks.every((p) => p.connectionId && p.baseRemoteId && p.tableRemoteId);
  const generate = useMutation({
    mutationFn: () =>
      api<Proposal>('/rest/blended-tables/generate-config', { method: 'POST', body: { sources: picks } }),
    onSuccess: (p) => {
      setProposal(p);
      setName(p.name);
      setSources(p.sources);
      setDefaultSource(p.defaultSource);
      setFields(p.fields.map((f) => ({ ...f, keep: true })));
      preview.reset();
    },
  });
  const kept = fields.filter((f) => f.keep).map(({ keep: _k, reasons: _r, ...f }) => f);
  const preview = useMutation({
    mutationFn: () =>
      api<Preview>('/rest/blended-tables/preview', {
        method: 'POST',
        body: { sources, fields: kept, perSource: 5 },
      }),
  });
  const save = useMutation({
    mutationFn: () =>
      api<BlendedTable>('/rest/blended-tables', {
        method: 'POST',
        body: { name, sources, defaultSource, fields: kept },
      }),
    onSuccess: () => {
      setProposal(null);
      setPicks([emptyPick(), emptyPick()]);
      preview.reset();
      void queryClient.invalidateQueries({ queryKey: ['blended-tables'] });
    },
  });
  const setField = (k: number, change: Partial<EditField>) =>
    setFields(fields.map((f, i) => (i === k ? { ...f, ...change } : f)));

  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>New blended table</Title>
        <Text c="dimmed" size="sm">
          Choose two or more tables of your connections. Their records are shown as one table, with a Source
          field saying where each comes from; edits go back to the record's own table and new records to the
          default source. Linked-record fields are not blended.
        </Text>
        {connections.isLoading ? <Loader size="sm" /> : null}
        {connections.error ? (
          <ErrorAlert error={connections.error} title="Could not load your connections" />
        ) : null}
        {connections.data && usable.length === 0 ? (
          <Text c="dimmed">Connect an app first: a blended table is made of tables of your connections.</Text>
        ) : null}
        {usable.length > 0
          ? picks.map((p, i) => (
              <SourcePicker
                // biome-ignore lint/suspicious/noArrayIndexKey: sources are positions in the list
                key={i}
                index={i}
                pick={p}
                connections={usable}
                onChange={(next) => setPicks(picks.map((x, k) => (k === i ? next : x)))}
                onRemove={picks.length > 2 ? () => setPicks(picks.filter((_, k) => k !== i)) : null}
              />
            ))
          : null}
        <Group>
          <Button
            variant="default"
            onClick={() => setPicks([...picks, emptyPick()])}
            disabled={picks.length >= 10}
          >
            Add a source
          </Button>
          <Button onClick={() => generate.mutate()} loading={generate.isPending} disabled={!chosen}>
            Propose fields
          </Button>
        </Group>
        {generate.error ? <ErrorAlert error={generate.error} title="Could not propose the fields" /> : null}
        {proposal ? (
          <Stack data-testid="blended-proposal">
            <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <Group align="end">
              {sources.map((s, i) => (
                <TextInput
                  // biome-ignore lint/suspicious/noArrayIndexKey: sources are positions in the list
                  key={i}
                  label={`Source ${i + 1} is called`}
                  value={s.name}
                  onChange={(e) => {
                    const v = e.currentTarget.value;
                    setSources(sources.map((x, k) => (k === i ? { ...x, name: v } : x)));
                  }}
                />
              ))}
              <Select
                label="New records go to"
                data={sources.map((s, i) => ({ value: String(i), label: s.name || `Source ${i + 1}` }))}
                value={String(defaultSource)}
                onChange={(v) => setDefaultSource(Number(v ?? 0))}
                allowDeselect={false}
              />
            </Group>
            <ScrollArea>
              <Table withTableBorder fz="sm" data-testid="blended-fields">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Keep</Table.Th>
                    <Table.Th>Field</Table.Th>
                    <Table.Th>Type</Table.Th>
                    {sources.map((s, i) => (
                      // biome-ignore lint/suspicious/noArrayIndexKey: sources are positions in the list
                      <Table.Th key={i}>{s.name}</Table.Th>
                    ))}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {fields.map((f, k) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: fields are positions in the list
                    <Table.Tr key={k}>
                      <Table.Td>
                        <Checkbox
                          aria-label={`Keep ${f.name}`}
                          checked={f.keep}
                          onChange={(e) => setField(k, { keep: e.currentTarget.checked })}
                        />
                      </Table.Td>
                      <Table.Td>
                        <TextInput
                          aria-label={`Name of field ${k + 1}`}
                          value={f.name}
                          onChange={(e) => setField(k, { name: e.currentTarget.value })}
                          title={f.reasons.join('\n')}
                        />
                      </Table.Td>
                      <Table.Td>
                        <Badge variant="light">{f.type}</Badge>
                      </Table.Td>
                      {sources.map((s, i) => (
                        // biome-ignore lint/suspicious/noArrayIndexKey: sources are positions in the list
                        <Table.Td key={i}>
                          <Select
                            aria-label={`${f.name} in ${s.name}`}
                            data={[
                              { value: '', label: '(none)' },
                              ...(proposal.sourceFields[i] ?? []).map((x) => ({
                                value: x.remoteId,
                                label: x.name,
                              })),
                            ]}
                            value={f.sourceFields[i] ?? ''}
                            allowDeselect={false}
                            onChange={(v) =>
                              setField(k, {
                                sourceFields: f.sourceFields.map((x, j) => (j === i ? v || null : x)),
                              })
                            }
                          />
                        </Table.Td>
                      ))}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </ScrollArea>
            <Group>
              <Button variant="default" onClick={() => preview.mutate()} loading={preview.isPending}>
                Preview
              </Button>
              <Button
                onClick={() => save.mutate()}
                loading={save.isPending}
                disabled={!name.trim() || kept.length === 0}
              >
                Save blended table
              </Button>
            </Group>
            {preview.error ? <ErrorAlert error={preview.error} title="Could not preview" /> : null}
            {save.error ? <ErrorAlert error={save.error} title="The blended table was not saved" /> : null}
            {preview.data ? (
              <ScrollArea>
                <Table withTableBorder fz="sm" data-testid="blended-preview">
                  <Table.Thead>
                    <Table.Tr>
                      {preview.data.fields.map((f) => (
                        <Table.Th key={f.id}>{f.name}</Table.Th>
                      ))}
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {preview.data.rows.map((r) => (
                      <Table.Tr key={r.id}>
                        {preview.data.fields.map((f) => (
                          <Table.Td key={f.id}>{show(r.fields[f.id])}</Table.Td>
                        ))}
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
                {preview.data.rows.length === 0 ? (
                  <Text c="dimmed">The sources have no records yet.</Text>
                ) : null}
              </ScrollArea>
            ) : null}
          </Stack>
        ) : null}
      </Stack>
    </Card>
  );
}

/** Blended tables: the user's list (with delete) and the editor for a new one. */
export function BlendedTablesPage() {
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: ['blended-tables'],
    queryFn: () => api<{ items: BlendedTable[] }>('/rest/blended-tables'),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api(`/rest/blended-tables/${id}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['blended-tables'] }),
  });
  return (
    <Stack>
      <Title order={2}>Blended tables</Title>
      <Text c="dimmed">
        A blended table unions tables of your connections into one. It appears in the base "Blended tables"
        when you set up a sync, and syncs like any other table.
      </Text>
      {list.isLoading ? <Loader /> : null}
      {list.error ? <ErrorAlert error={list.error} title="Could not load your blended tables" /> : null}
      {remove.error ? <ErrorAlert error={remove.error} title="The blended table was not deleted" /> : null}
      {list.data && list.data.items.length === 0 ? (
        <EmptyState
          title="No blended tables yet"
          text="Choose two or more tables below to see them as one table."
        />
      ) : null}
      {list.data && list.data.items.length > 0 ? (
        <Table withTableBorder data-testid="blended-list">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Sources</Table.Th>
              <Table.Th>Fields</Table.Th>
              <Table.Th>Used by</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.items.map((b) => (
              <Table.Tr key={b.id}>
                <Table.Td>{b.name}</Table.Td>
                <Table.Td>{b.sources.map((s) => s.name).join(', ')}</Table.Td>
                <Table.Td>{b.fields.length + 1}</Table.Td>
                <Table.Td>{b.usedBySyncs === 0 ? 'No sync' : `${b.usedBySyncs} sync(s)`}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    color="red"
                    variant="light"
                    onClick={() => remove.mutate(b.id)}
                    loading={remove.isPending && remove.variables === b.id}
                  >
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      <NewBlendedTable />
    </Stack>
  );
}
