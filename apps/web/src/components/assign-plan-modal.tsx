import { PLAN_TIER_NAMES, PLAN_TIERS, type PlanTier, type UserSummary } from '@lockstep/contract';
import { Button, Group, Modal, NumberInput, Select, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';

const TIER_OPTIONS = PLAN_TIER_NAMES.map((tier) => ({ value: tier, label: PLAN_TIERS[tier].displayName }));

/** Staff give a user a plan (POST /rest/users/{id}/plan); no number of days means no end date. */
export function AssignPlanModal({
  user,
  onClose,
  onAssigned,
}: {
  user: UserSummary | null;
  onClose: () => void;
  onAssigned: () => void;
}) {
  const [productType, setProductType] = useState<PlanTier | null>('pro');
  const [days, setDays] = useState<number | string>(30);
  const [busy, setBusy] = useState(false);

  async function assign() {
    if (!user || !productType) return;
    setBusy(true);
    try {
      await api(`/rest/users/${user.id}/plan`, {
        method: 'POST',
        body: { productType, days: typeof days === 'number' ? days : null },
      });
      showSuccess(`${user.email} now has the ${PLAN_TIERS[productType].displayName} plan.`);
      onAssigned();
      onClose();
    } catch (error) {
      showError(error, 'Could not assign the plan');
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal opened={user !== null} onClose={onClose} title="Assign a plan">
      <Stack>
        <Text size="sm">
          {user?.email} has {user?.subscription.planDisplayName} ({user?.subscription.status}) now.
        </Text>
        <Select
          label="Plan"
          data={TIER_OPTIONS}
          value={productType}
          onChange={(value) => setProductType(value as PlanTier | null)}
          allowDeselect={false}
        />
        <NumberInput
          label="Days"
          description="Leave empty for a plan without an end date."
          min={1}
          max={3650}
          value={days}
          onChange={setDays}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => void assign()} loading={busy} disabled={!productType}>
            Assign plan
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
