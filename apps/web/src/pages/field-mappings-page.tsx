import type { CoreBase, SyncDirection, TableMapping } from '@lockstep/contract';
import { checkFieldMapping, FIELD_TYPES, type FieldSpec } from '@lockstep/engine';
import {
  Alert,
  Badge,
  Button,
  Card,
  Center,
  Group,
  Loader,
  Radio,
  Select,
  Stack,
  Table,
  Text,
  Tooltip,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { AutomapFieldsButton, type FieldProposal, type MatchProposal } from '../components/automap-fields';
import { ErrorAlert } from '../components/error-alert';
import { type OptionPair, OptionPairsButton } from '../components/option-pairs';
import { SyncNav } from '../components/sync-nav';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { useDevFlag } from '../lib/queries';
import { renamedNote } from '../lib/schema-names';
import {
  type Column,
  type Table as ExternalTableInfo,
  saveMappings,
  tableOf,
  toMappingInput,
  useCoreBase,
  useInvalidateSync,
} from '../lib/sync-queries';

type Row = {
  leftColumnId: string | null;
  rightColumnId: string | null;
  syncDirection: SyncDirection;
  optionPairs?: OptionPair[] | null;
};

export function specOf(c: Column): FieldSpec {
  return {
    id: c.id,
    name: c.name,
    type: (FIELD_TYPES as readonly string[]).includes(c.fieldType)
      ? (c.fieldType as FieldSpec['type'])
      : 'json',
    readOnly: c.readOnly,
  };
}

/** What the engine says of one pair: fine (maybe narrowed to one way), or why it cannot be synced. */
function Compatibility({
  left,
  right,
  direction,
}: {
  left?: Column;
  right?: Column;
  direction: SyncDirection;
}) {
  if (!left || !right) return <Text c="dimmed">–</Text>;
  const check = checkFieldMapping(specOf(left), specOf(right), direction);
  if (!check.ok)
    return (
      <Tooltip label={check.reason} multiline w={280}>
        <Badge color="red" variant="light" tabIndex={0}>
          Unsupported
        </Badge>
      </Tooltip>
    );
  const narrowed = check.effectiveDirection !== direction;
  return (
    <Tooltip
      label={
        check.note ??
        (narrowed ? 'Synced one way only (a side cannot be written).' : 'Values convert both ways.')
      }
      multiline
      w={280}
    >
      <Badge color={narrowed || check.note ? 'yellow' : 'green'} variant="light" tabIndex={0}>
        {narrowed ? (check.effectiveDirection === 'left_to_right' ? 'One way →' : 'One way ←') : 'Compatible'}
      </Badge>
    </Tooltip>
  );
}

type CreatedColumns = {
  columns: { sourceColumnId: string; externalColumnId: string; name: string; renamedFrom?: string }[];
};

/**
 * Fields of one side with no partner on the other: schema generation creates them there (same
 * name, a matching type) and pairs them, so nothing the user keeps in one app is left out.
 */
function MissingFields({
  sync,
  side,
  table,
  otherTable,
  taken,
  onCreated,
}: {
  sync: CoreBase;
  side: 'left' | 'right';
  table: ExternalTableInfo | undefined;
  otherTable: ExternalTableInfo | undefined;
  taken: Set<string>;
  onCreated: (pairs: { sourceColumnId: string; externalColumnId: string }[]) => void;
}) {
  const invalidate = useInvalidateSync();
  const other = side === 'left' ? sync.rightExternalBase : sync.leftExternalBase;
  // Record ids and links to other tables mean nothing in the other app; they are not offered.
  const missing = (table?.externalColumns ?? []).filter(
    (c) => !taken.has(c.id) && typeof c.options.references !== 'string' && !(c.readOnly && c.name === 'id'),
  );
  const create = useMutation({
    mutationFn: () =>
      api<CreatedColumns>(`/rest/generate-schema/${other?.id}/create-fields`, {
        method: 'POST',
        body: { destTableId: otherTable?.id, sourceColumnIds: missing.map((c) => c.id) },
      }),
    onSuccess: async (r) => {
      await invalidate(sync.id);
      onCreated(r.columns);
      showSuccess(
        `${r.columns.length} field${r.columns.length === 1 ? '' : 's'} created in ${other?.name} and paired.${renamedNote(r.columns)}`,
      );
    },
    onError: (e) => showError(e, `Could not create the fields in ${other?.name}`),
  });
  if (!other || !otherTable || missing.length === 0) return null;
  return (
    <Group gap="xs">
      <Text size="sm" c="dimmed">
        {missing.length} field{missing.length === 1 ? '' : 's'} of {table?.name}{' '}
        {missing.length === 1 ? 'has' : 'have'} no partner in {otherTable.name}:{' '}
        {missing.map((c) => c.name).join(', ')}.
      </Text>
      <Button size="compact-sm" variant="light" loading={create.isPending} onClick={() => create.mutate()}>
        Create {missing.length === 1 ? 'it' : 'them'} in {other.name}
      </Button>
    </Group>
  );
}

function Editor({ sync, mapping }: { sync: CoreBase; mapping: TableMapping }) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const allowUnsupported = useDevFlag('allowUnsupportedMappings');
  const left = tableOf(sync, mapping.leftTableId)?.table;
  const right = tableOf(sync, mapping.rightTableId)?.table;
  const [rows, setRows] = useState<Row[]>(
    mapping.columnMappings.map((c) => ({
      leftColumnId: c.leftColumnId,
      rightColumnId: c.rightColumnId,
      syncDirection: c.syncDirection,
      optionPairs: c.optionPairs ?? null,
    })),
  );
  const [matchOn, setMatchOn] = useState<string | null>(mapping.matchOnFieldId);
  const [matchOnSecondary, setMatchOnSecondary] = useState<string | null>(mapping.matchOnSecondaryFieldId);
  /** Why automap proposed the match field, while it is the one chosen. */
  const [matchReason, setMatchReason] = useState<string | null>(null);
  const chooseMatch = (id: string | null) => {
    setMatchOn(id);
    setMatchOnSecondary(null);
    setMatchReason(null);
  };
  const leftCol = (id: string | null) => left?.externalColumns.find((c) => c.id === id);
  const rightCol = (id: string | null) => right?.externalColumns.find((c) => c.id === id);
  const update = (i: number, patch: Partial<Row>) =>
    setRows((all) => all.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const complete = rows.filter((r) => r.leftColumnId && r.rightColumnId);
  const unsupported = complete.filter((r) => {
    const l = leftCol(r.leftColumnId);
    const rc = rightCol(r.rightColumnId);
    return l && rc && !checkFieldMapping(specOf(l), specOf(rc), r.syncDirection).ok;
  });
  const applyProposals = (proposals: FieldProposal[], match: MatchProposal) => {
    const taken = new Set(rows.map((r) => r.rightColumnId));
    const added = proposals
      .filter((p) => !taken.has(p.rightColumnId))
      .map((p) => ({
        leftColumnId: p.leftColumnId,
        rightColumnId: p.rightColumnId,
        syncDirection: p.syncDirection,
        optionPairs: p.optionPairs ?? null,
      }));
    setRows((all) => [...all.filter((r) => r.leftColumnId || r.rightColumnId), ...added]);
    if (!matchOn && match.matchOnFieldId) {
      setMatchOn(match.matchOnFieldId);
      setMatchOnSecondary(match.matchOnSecondaryFieldId);
      setMatchReason(match.matchReason);
    }
  };

  const save = useMutation({
    mutationFn: () => {
      const mine = {
        ...toMappingInput(mapping),
        columnMappings: complete.map((r) => ({
          leftColumnId: r.leftColumnId as string,
          rightColumnId: r.rightColumnId as string,
          syncDirection: r.syncDirection,
          ownerSide: null,
          optionPairs: r.optionPairs ?? null,
        })),
        matchOnFieldId: complete.some((r) => r.leftColumnId === matchOn) ? matchOn : null,
        matchOnSecondaryFieldId:
          complete.some((r) => r.leftColumnId === matchOn) &&
          complete.some((r) => r.leftColumnId === matchOnSecondary)
            ? matchOnSecondary
            : null,
      };
      const all = sync.mappings.tableMappings.map((m) => (m.id === mapping.id ? mine : toMappingInput(m)));
      return saveMappings(sync.id, all, allowUnsupported);
    },
    onSuccess: (saved) => {
      client.setQueryData(['core-base', sync.id], saved);
      showSuccess(`${complete.length} field pair${complete.length === 1 ? '' : 's'} saved.`);
      navigate(`/syncs/${sync.id}/table-mappings`);
    },
  });
  const leftName = sync.leftExternalBase?.name ?? 'First app';
  const rightName = sync.rightExternalBase?.name ?? 'Second app';
  const option = (c: Column) => ({
    value: c.id,
    label: `${c.name} · ${c.fieldType}${c.readOnly ? ' · read-only' : ''}`,
  });

  return (
    <Stack>
      <Group>
        <AutomapFieldsButton sync={sync} mapping={mapping} onProposals={applyProposals} />
        <Button
          variant="default"
          onClick={() =>
            setRows((all) => [...all, { leftColumnId: null, rightColumnId: null, syncDirection: 'both' }])
          }
        >
          Add a field pair
        </Button>
      </Group>
      {save.error ? <ErrorAlert error={save.error} title="Could not save the fields" /> : null}
      {unsupported.length > 0 ? (
        <Alert color={allowUnsupported ? 'yellow' : 'red'}>
          {unsupported.length} pair{unsupported.length === 1 ? ' is' : 's are'} not supported
          {allowUnsupported
            ? ': the local dev flag allows saving them anyway; values that do not convert become issues.'
            : '. Remove or change them to save (see each badge for the reason).'}
        </Alert>
      ) : null}
      <Card withBorder padding={0}>
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>
                {leftName} · {left?.name}
              </Table.Th>
              <Table.Th>Direction</Table.Th>
              <Table.Th>
                {rightName} · {right?.name}
              </Table.Th>
              <Table.Th>Types</Table.Th>
              <Table.Th>Match on</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.length === 0 ? (
              <Table.Tr>
                <Table.Td colSpan={6}>
                  <Text c="dimmed" ta="center" p="md">
                    No fields mapped yet. Automap proposes pairs by name, type and values; or add one
                    yourself.
                  </Text>
                </Table.Td>
              </Table.Tr>
            ) : null}
            {rows.map((r, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity until saved
              <Table.Tr key={i} data-testid="field-pair">
                <Table.Td>
                  <Select
                    aria-label={`Field in ${leftName}`}
                    data={(left?.externalColumns ?? []).map(option)}
                    value={r.leftColumnId}
                    onChange={(v) => update(i, { leftColumnId: v })}
                    searchable
                  />
                </Table.Td>
                <Table.Td>
                  <Select
                    aria-label="Direction"
                    w={130}
                    data={[
                      { value: 'both', label: '⇄ both' },
                      { value: 'left_to_right', label: '→ one way' },
                      { value: 'right_to_left', label: '← one way' },
                    ]}
                    value={r.syncDirection}
                    onChange={(v) => update(i, { syncDirection: (v ?? 'both') as SyncDirection })}
                    allowDeselect={false}
                  />
                </Table.Td>
                <Table.Td>
                  <Select
                    aria-label={`Field in ${rightName}`}
                    data={(right?.externalColumns ?? []).map(option)}
                    value={r.rightColumnId}
                    onChange={(v) => update(i, { rightColumnId: v })}
                    searchable
                  />
                </Table.Td>
                <Table.Td>
                  <Compatibility
                    left={leftCol(r.leftColumnId)}
                    right={rightCol(r.rightColumnId)}
                    direction={r.syncDirection}
                  />
                  <OptionPairsButton
                    left={leftCol(r.leftColumnId)}
                    right={rightCol(r.rightColumnId)}
                    leftApp={leftName}
                    rightApp={rightName}
                    pairs={r.optionPairs ?? null}
                    onChange={(optionPairs) => update(i, { optionPairs })}
                  />
                </Table.Td>
                <Table.Td>
                  <Radio
                    aria-label={`Match records on ${leftCol(r.leftColumnId)?.name ?? 'this field'}`}
                    checked={Boolean(r.leftColumnId) && matchOn === r.leftColumnId}
                    disabled={!r.leftColumnId || !r.rightColumnId}
                    onChange={() => chooseMatch(r.leftColumnId)}
                  />
                  {r.leftColumnId && r.leftColumnId === matchOnSecondary && matchOn ? (
                    <Text size="xs" c="dimmed">
                      second match field, with {leftCol(matchOn)?.name}
                    </Text>
                  ) : null}
                  {r.leftColumnId && r.leftColumnId === matchOn && matchReason ? (
                    <Text size="xs" c="dimmed" maw={220} data-testid="match-reason">
                      {matchReason}
                    </Text>
                  ) : null}
                </Table.Td>
                <Table.Td>
                  <Button
                    variant="subtle"
                    color="red"
                    size="xs"
                    onClick={() => setRows((all) => all.filter((_, j) => j !== i))}
                  >
                    Remove
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
      <MissingFields
        sync={sync}
        side="left"
        table={left}
        otherTable={right}
        taken={new Set(rows.map((r) => r.leftColumnId ?? ''))}
        onCreated={(pairs) =>
          setRows((all) => [
            ...all,
            ...pairs.map((p) => ({
              leftColumnId: p.sourceColumnId,
              rightColumnId: p.externalColumnId,
              syncDirection: 'both' as const,
            })),
          ])
        }
      />
      <MissingFields
        sync={sync}
        side="right"
        table={right}
        otherTable={left}
        taken={new Set(rows.map((r) => r.rightColumnId ?? ''))}
        onCreated={(pairs) =>
          setRows((all) => [
            ...all,
            ...pairs.map((p) => ({
              leftColumnId: p.externalColumnId,
              rightColumnId: p.sourceColumnId,
              syncDirection: 'both' as const,
            })),
          ])
        }
      />
      <Text size="sm" c="dimmed">
        {matchOn
          ? `Records with the same ${leftCol(matchOn)?.name ?? 'value'}${matchOnSecondary ? ` and ${leftCol(matchOnSecondary)?.name ?? 'second value'}` : ''} on both sides are matched in the first sync instead of created twice.`
          : 'No match field: the first sync creates every record on the other side. Choose one (an email, say) to match existing records.'}
        {matchOn ? (
          <Button variant="subtle" size="compact-xs" ml="xs" onClick={() => chooseMatch(null)}>
            Do not match
          </Button>
        ) : null}
      </Text>
      <Group>
        <Button
          loading={save.isPending}
          disabled={unsupported.length > 0 && !allowUnsupported}
          onClick={() => save.mutate()}
        >
          Save fields
        </Button>
        <Button variant="default" component={Link} to={`/syncs/${sync.id}/table-mappings`}>
          Cancel
        </Button>
      </Group>
    </Stack>
  );
}

/** /syncs/{id}/table-mappings/{tableMappingId}/field-mappings: which field goes to which, each way. */
export function FieldMappingsPage() {
  const { id, tableMappingId } = useParams();
  const sync = useCoreBase(id);
  if (sync.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the sync" />
      </Center>
    );
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  const mapping = sync.data.mappings.tableMappings.find((m) => m.id === tableMappingId);
  if (!mapping)
    return <ErrorAlert error={new Error('This table pair does not exist (any more).')} title="Not found" />;
  const l = tableOf(sync.data, mapping.leftTableId)?.table.name;
  const r = tableOf(sync.data, mapping.rightTableId)?.table.name;
  return (
    <Stack>
      <SyncNav sync={sync.data} title={`Fields: ${l} ⇄ ${r}`} />
      <Editor key={mapping.updatedAt} sync={sync.data} mapping={mapping} />
    </Stack>
  );
}
