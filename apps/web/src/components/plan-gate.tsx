import { PLAN_GATE_TITLE } from '@lockstep/contract';
import { Button, Group, Modal, Text } from '@mantine/core';

/**
 * The modal of spec section 2 for subscription status none: it cannot be dismissed (no close button,
 * no Escape, no outside click). Choose Plan goes where the SELECT_A_PLAN_URL flag says.
 */
export function PlanGateModal({
  choosePlanHref,
  onSwitchAccounts,
}: {
  choosePlanHref: string;
  onSwitchAccounts: () => void;
}) {
  return (
    <Modal
      opened
      onClose={() => {}}
      title={PLAN_GATE_TITLE}
      withCloseButton={false}
      closeOnEscape={false}
      closeOnClickOutside={false}
      centered
    >
      <Text mb="lg">
        Lockstep keeps your apps in step both ways. Pick a plan to create syncs, review operations and fix
        issues.
      </Text>
      <Group justify="flex-end">
        <Button variant="default" onClick={onSwitchAccounts}>
          Switch Accounts
        </Button>
        <Button component="a" href={choosePlanHref}>
          Choose Plan
        </Button>
      </Group>
    </Modal>
  );
}
