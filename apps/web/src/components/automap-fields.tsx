import type { CoreBase, SyncDirection, TableMapping } from '@lockstep/contract';
import { Button } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';

export type FieldProposal = {
  leftColumnId: string;
  rightColumnId: string;
  syncDirection: SyncDirection;
  score: number;
  explanation: string;
  /** A select on either side: its options paired with the other side's. */
  optionPairs?: { left: string; right: string }[] | null;
};
export type FieldAutomap = {
  proposals: FieldProposal[];
  /** The proposed match field (left column), its second field (first + last name), and why. */
  matchOnFieldId: string | null;
  matchOnSecondaryFieldId: string | null;
  matchReason: string | null;
};
export type MatchProposal = Pick<FieldAutomap, 'matchOnFieldId' | 'matchOnSecondaryFieldId' | 'matchReason'>;

/** Asks the field mapper for the pairs of two tables (names, types and sample values, scored). */
export function automapFields(
  coreBaseId: string,
  leftTableId: string,
  rightTableId: string,
  plannedTablePairs: { leftTableId: string; rightTableId: string }[] = [],
) {
  return api<FieldAutomap>(`/rest/ai-field-mapper/${coreBaseId}/automap`, {
    method: 'POST',
    body: { leftTableId, rightTableId, plannedTablePairs },
  });
}

export function AutomapFieldsButton({
  sync,
  mapping,
  onProposals,
}: {
  sync: CoreBase;
  mapping: TableMapping;
  onProposals: (proposals: FieldProposal[], match: MatchProposal) => void;
}) {
  const run = useMutation({
    mutationFn: () => automapFields(sync.id, mapping.leftTableId, mapping.rightTableId),
    onSuccess: (r) => {
      onProposals(r.proposals, {
        matchOnFieldId: r.matchOnFieldId,
        matchOnSecondaryFieldId: r.matchOnSecondaryFieldId ?? null,
        matchReason: r.matchReason ?? null,
      });
      showSuccess(
        r.proposals.length
          ? `Automap proposed ${r.proposals.length} field pair${r.proposals.length === 1 ? '' : 's'}; check them, then save.`
          : 'Automap found no fields that correspond.',
      );
    },
    onError: (e) => showError(e, 'Automap failed'),
  });
  return (
    <Button variant="light" loading={run.isPending} onClick={() => run.mutate()}>
      Automap fields
    </Button>
  );
}
