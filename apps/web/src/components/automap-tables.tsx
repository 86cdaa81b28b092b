import type { CoreBase } from '@lockstep/contract';
import { Badge, Button, Checkbox, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { saveMappings, tableOf, toMappingInput } from '../lib/sync-queries';
import { automapFields } from './automap-fields';

export type TableProposal = {
  leftTableId: string;
  rightTableId: string;
  score: number;
  explanation: string;
  /** The field to match existing records on (and a second one), and why; null when none is proposed. */
  matchField?: {
    leftColumnId: string;
    secondaryLeftColumnId: string | null;
    reason: string;
  } | null;
};

/**
 * Automap of a whole sync: the table mapper proposes pairs, each explained; the user keeps the
 * ones that are right, and each kept pair gets its fields from the field mapper before it is saved.
 */
export function AutomapTablesButton({ sync }: { sync: CoreBase }) {
  const client = useQueryClient();
  const [proposals, setProposals] = useState<TableProposal[] | null>(null);
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const mapped = new Set(sync.mappings.tableMappings.map((m) => `${m.leftTableId}:${m.rightTableId}`));
  const propose = useMutation({
    mutationFn: () =>
      api<{ proposals: TableProposal[] }>(`/rest/ai-table-mapper/${sync.id}/automap`, {
        method: 'POST',
        body: {},
      }),
    onSuccess: (r) => {
      setProposals(r.proposals);
      setChosen(
        new Set(r.proposals.map((p, i) => (mapped.has(`${p.leftTableId}:${p.rightTableId}`) ? -1 : i))),
      );
    },
    onError: (e) => showError(e, 'Automap failed'),
  });
  const apply = useMutation({
    mutationFn: async () => {
      const picked = (proposals ?? []).filter((_, i) => chosen.has(i));
      const added = [];
      for (const p of picked) {
        // Linked-record fields pair through the other tables being mapped in the same go.
        const planned = picked.map(({ leftTableId, rightTableId }) => ({ leftTableId, rightTableId }));
        const fields = await automapFields(sync.id, p.leftTableId, p.rightTableId, planned);
        added.push({
          leftTableId: p.leftTableId,
          rightTableId: p.rightTableId,
          syncDirection: 'both' as const,
          filter: null,
          matchOnFieldId: fields.matchOnFieldId,
          matchOnSecondaryFieldId: fields.matchOnFieldId ? (fields.matchOnSecondaryFieldId ?? null) : null,
          conflictWinnerSide: 'left' as const,
          conflictReview: false,
          deleteProtection: false,
          columnMappings: fields.proposals.map((f) => ({
            leftColumnId: f.leftColumnId,
            rightColumnId: f.rightColumnId,
            syncDirection: f.syncDirection,
            ownerSide: null,
            optionPairs: f.optionPairs ?? null,
          })),
        });
      }
      return {
        saved: await saveMappings(sync.id, [...sync.mappings.tableMappings.map(toMappingInput), ...added]),
        n: added.length,
      };
    },
    onSuccess: ({ saved, n }) => {
      client.setQueryData(['core-base', sync.id], saved);
      setProposals(null);
      showSuccess(
        `${n} table pair${n === 1 ? '' : 's'} mapped with their fields. Check the fields, then preview.`,
      );
    },
    onError: (e) => showError(e, 'Could not save the automapped tables'),
  });
  const name = (id: string) => (sync ? tableOf(sync, id)?.table.name : id) ?? id;
  const columnName = (tableId: string, columnId: string | null) =>
    tableOf(sync, tableId)?.table.externalColumns.find((c) => c.id === columnId)?.name ?? columnId;
  const matchLine = (p: TableProposal) =>
    p.matchField
      ? `Match records on ${columnName(p.leftTableId, p.matchField.leftColumnId)}${p.matchField.secondaryLeftColumnId ? ` + ${columnName(p.leftTableId, p.matchField.secondaryLeftColumnId)}` : ''}: ${p.matchField.reason}.`
      : 'No match field proposed: the first sync creates every record on the other side.';

  return (
    <>
      <Button loading={propose.isPending} onClick={() => propose.mutate()}>
        Automap tables and fields
      </Button>
      <Modal opened={proposals !== null} onClose={() => setProposals(null)} title="Automap" size="lg">
        <Stack>
          {proposals?.length === 0 ? (
            <Text>No tables look alike. Add a table pair yourself.</Text>
          ) : (
            <Text size="sm" c="dimmed">
              Keep the pairs that are right; their fields are mapped too and can be changed afterwards.
            </Text>
          )}
          {proposals?.map((p, i) => {
            const already = mapped.has(`${p.leftTableId}:${p.rightTableId}`);
            return (
              <Checkbox
                key={`${p.leftTableId}:${p.rightTableId}`}
                disabled={already}
                checked={chosen.has(i)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setChosen((s) => {
                    const next = new Set(s);
                    if (on) next.add(i);
                    else next.delete(i);
                    return next;
                  });
                }}
                label={
                  <Group gap="xs">
                    <Text fw={600}>
                      {name(p.leftTableId)} ⇄ {name(p.rightTableId)}
                    </Text>
                    <Badge variant="light" color={p.score >= 0.7 ? 'green' : 'yellow'}>
                      {Math.round(p.score * 100)}%
                    </Badge>
                    {already ? (
                      <Badge variant="light" color="gray">
                        already mapped
                      </Badge>
                    ) : null}
                  </Group>
                }
                description={
                  <>
                    {p.explanation}
                    <br />
                    <span data-testid="match-reason">{matchLine(p)}</span>
                  </>
                }
              />
            );
          })}
          <Group justify="end">
            <Button variant="default" onClick={() => setProposals(null)}>
              Cancel
            </Button>
            <Button
              loading={apply.isPending}
              disabled={chosen.size === 0 || [...chosen].every((i) => i < 0)}
              onClick={() => apply.mutate()}
            >
              Map the chosen tables
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
