import type { CoreBase, SyncDirection, TableMapping } from '@lockstep/contract';
import {
  Button,
  Card,
  Center,
  Checkbox,
  Group,
  Loader,
  SegmentedControl,
  Select,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { SyncNav } from '../components/sync-nav';
import { showSuccess } from '../lib/notify';
import { type MappingInput, saveMappings, toMappingInput, useCoreBase } from '../lib/sync-queries';

type Condition = { side: 'left' | 'right'; fieldId: string; op: string; value: string };
const OPS = [
  { value: 'eq', label: 'is' },
  { value: 'neq', label: 'is not' },
  { value: 'contains', label: 'contains' },
  { value: 'gt', label: 'is greater than' },
  { value: 'lt', label: 'is less than' },
  { value: 'empty', label: 'is empty' },
  { value: 'not_empty', label: 'is not empty' },
];
const NO_VALUE = new Set(['empty', 'not_empty']);

/** The engine's filter (data, see packages/engine/src/filter.ts) from the conditions, all of which must hold. */
function filterOf(conditions: Condition[]): unknown {
  const parts = conditions
    .filter((c) => c.fieldId)
    .map((c) =>
      NO_VALUE.has(c.op)
        ? { side: c.side, fieldId: c.fieldId, op: c.op }
        : { side: c.side, fieldId: c.fieldId, op: c.op, value: c.value },
    );
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : { and: parts };
}

function conditionsOf(filter: unknown): Condition[] {
  if (!filter || typeof filter !== 'object') return [];
  const f = filter as { and?: unknown[] } & Partial<Condition> & { value?: unknown };
  if (Array.isArray(f.and)) return f.and.flatMap((x) => conditionsOf(x));
  if (f.side && f.fieldId && f.op)
    return [{ side: f.side, fieldId: f.fieldId, op: f.op, value: f.value == null ? '' : String(f.value) }];
  return [];
}

function Editor({ sync, existing }: { sync: CoreBase; existing: TableMapping | null }) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const leftTables = sync.leftExternalBase?.externalTables ?? [];
  const rightTables = sync.rightExternalBase?.externalTables ?? [];
  const [leftTableId, setLeft] = useState<string | null>(existing?.leftTableId ?? null);
  const [rightTableId, setRight] = useState<string | null>(existing?.rightTableId ?? null);
  const [direction, setDirection] = useState<SyncDirection>(existing?.syncDirection ?? 'both');
  const [winner, setWinner] = useState<'left' | 'right'>(existing?.conflictWinnerSide ?? 'left');
  const [review, setReview] = useState(existing?.conflictReview ?? false);
  const [protect, setProtect] = useState(existing?.deleteProtection ?? false);
  const [conditions, setConditions] = useState<Condition[]>(conditionsOf(existing?.filter));
  const columnsOf = (side: 'left' | 'right') =>
    (side === 'left' ? leftTables : rightTables)
      .find((t) => t.id === (side === 'left' ? leftTableId : rightTableId))
      ?.externalColumns.map((c) => ({ value: c.remoteId, label: c.name })) ?? [];

  const save = useMutation({
    mutationFn: async () => {
      if (!leftTableId || !rightTableId) throw new Error('Choose a table on each side.');
      const tablesChanged =
        existing && (existing.leftTableId !== leftTableId || existing.rightTableId !== rightTableId);
      // Other tables: the old field pairs no longer apply, so the pair starts afresh.
      const base =
        existing && !tablesChanged
          ? toMappingInput(existing)
          : { columnMappings: [], matchOnFieldId: null, matchOnSecondaryFieldId: null };
      const mine = {
        ...base,
        leftTableId,
        rightTableId,
        syncDirection: direction,
        conflictWinnerSide: winner,
        conflictReview: review,
        deleteProtection: protect,
        filter: filterOf(conditions),
      } as MappingInput;
      const others = sync.mappings.tableMappings.filter((m) => m.id !== existing?.id).map(toMappingInput);
      return saveMappings(sync.id, [...others, mine]);
    },
    onSuccess: (saved) => {
      client.setQueryData(['core-base', sync.id], saved);
      const mine = saved.mappings.tableMappings.find(
        (m) => m.leftTableId === leftTableId && m.rightTableId === rightTableId,
      );
      showSuccess('The table pair is saved.');
      navigate(
        mine && mine.columnMappings.length === 0
          ? `/syncs/${sync.id}/table-mappings/${mine.id}/field-mappings`
          : `/syncs/${sync.id}/table-mappings`,
      );
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const leftName = sync.leftExternalBase?.name ?? 'First app';
  const rightName = sync.rightExternalBase?.name ?? 'Second app';

  return (
    <form onSubmit={submit}>
      <Stack maw={760}>
        {save.error ? <ErrorAlert error={save.error} title="Could not save the table pair" /> : null}
        <Card withBorder>
          <Stack>
            <Group grow align="end">
              <Select
                label={`Table in ${leftName}`}
                data={leftTables.map((t) => ({ value: t.id, label: t.name }))}
                value={leftTableId}
                onChange={setLeft}
                required
                searchable
              />
              <Select
                label={`Table in ${rightName}`}
                data={rightTables.map((t) => ({ value: t.id, label: t.name }))}
                value={rightTableId}
                onChange={setRight}
                required
                searchable
              />
            </Group>
            <div>
              <Text size="sm" fw={500} mb={4}>
                Direction
              </Text>
              <SegmentedControl
                value={direction}
                onChange={(v) => setDirection(v as SyncDirection)}
                data={[
                  { value: 'both', label: 'Both ways' },
                  { value: 'left_to_right', label: `${leftName} → ${rightName}` },
                  { value: 'right_to_left', label: `${rightName} → ${leftName}` },
                ]}
              />
            </div>
          </Stack>
        </Card>
        <Card withBorder>
          <Stack gap="xs">
            <Text fw={600}>When both sides changed the same field</Text>
            <SegmentedControl
              value={winner}
              onChange={(v) => setWinner(v as 'left' | 'right')}
              data={[
                { value: 'left', label: `${leftName} wins` },
                { value: 'right', label: `${rightName} wins` },
              ]}
            />
            <Text size="xs" c="dimmed">
              Also for records matched by the first sync. There, a value on one side always fills an empty
              field on the other: an empty field never wins.
            </Text>
            <Checkbox
              label="Hold conflicts for me to decide instead (shown on the sync's overview)"
              checked={review}
              onChange={(e) => setReview(e.currentTarget.checked)}
            />
            <Checkbox
              label="Delete protection: ask me before a delete is carried to the other side"
              checked={protect}
              onChange={(e) => setProtect(e.currentTarget.checked)}
            />
          </Stack>
        </Card>
        <Card withBorder>
          <Stack gap="xs">
            <Text fw={600}>Only sync records where</Text>
            {conditions.length === 0 ? (
              <Text size="sm" c="dimmed">
                Every record is synced. Add a condition to sync only some.
              </Text>
            ) : null}
            {conditions.map((c, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: conditions have no identity but their place
              <Group key={i} align="end" wrap="nowrap">
                <Select
                  aria-label="Side"
                  w={150}
                  data={[
                    { value: 'left', label: leftName },
                    { value: 'right', label: rightName },
                  ]}
                  value={c.side}
                  onChange={(v) =>
                    setConditions((all) =>
                      all.map((x, j) => (j === i ? { ...x, side: v as 'left' | 'right', fieldId: '' } : x)),
                    )
                  }
                />
                <Select
                  aria-label="Field"
                  w={180}
                  data={columnsOf(c.side)}
                  value={c.fieldId || null}
                  onChange={(v) =>
                    setConditions((all) => all.map((x, j) => (j === i ? { ...x, fieldId: v ?? '' } : x)))
                  }
                />
                <Select
                  aria-label="Condition"
                  w={160}
                  data={OPS}
                  value={c.op}
                  onChange={(v) =>
                    setConditions((all) => all.map((x, j) => (j === i ? { ...x, op: v ?? 'eq' } : x)))
                  }
                />
                {NO_VALUE.has(c.op) ? null : (
                  <TextInput
                    aria-label="Value"
                    value={c.value}
                    onChange={(e) => {
                      const value = e.currentTarget.value;
                      setConditions((all) => all.map((x, j) => (j === i ? { ...x, value } : x)));
                    }}
                  />
                )}
                <Button
                  variant="subtle"
                  color="red"
                  onClick={() => setConditions((all) => all.filter((_, j) => j !== i))}
                >
                  Remove
                </Button>
              </Group>
            ))}
            <Group>
              <Button
                variant="default"
                size="xs"
                onClick={() =>
                  setConditions((all) => [...all, { side: 'left', fieldId: '', op: 'eq', value: '' }])
                }
              >
                Add a condition
              </Button>
            </Group>
          </Stack>
        </Card>
        <Group>
          <Button type="submit" loading={save.isPending}>
            {existing ? 'Save' : 'Save and map fields'}
          </Button>
          <Button variant="default" component={Link} to={`/syncs/${sync.id}/table-mappings`}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** /syncs/{id}/table-mapping-editor/{tableMappingId}: one table pair's settings; 0 is a new pair. */
export function TableMappingEditorPage() {
  const { id, tableMappingId } = useParams();
  const sync = useCoreBase(id);
  if (sync.isLoading)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the sync" />
      </Center>
    );
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  const isNew = tableMappingId === '0';
  const existing = sync.data.mappings.tableMappings.find((m) => m.id === tableMappingId) ?? null;
  if (!isNew && !existing)
    return <ErrorAlert error={new Error('This table pair does not exist (any more).')} title="Not found" />;
  return (
    <Stack>
      <SyncNav sync={sync.data} title={isNew ? 'New table pair' : 'Table pair settings'} />
      <Editor sync={sync.data} existing={existing} />
    </Stack>
  );
}
