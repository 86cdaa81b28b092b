import { syncPermission } from '@lockstep/contract';
import { Button, Stack, Title, Tooltip } from '@mantine/core';
import { Link } from 'react-router';
import { EmptyState } from '../components/empty-state';
import { usePlan } from '../lib/queries';

/** The syncs list; for now every account starts empty (the syncs screens come with their issue). */
export function SyncsPage() {
  const plan = usePlan();
  const create = syncPermission('create', plan.subscription, plan.limits);
  return (
    <Stack>
      <Title order={2}>Syncs</Title>
      <EmptyState
        title="No syncs yet"
        text="A sync keeps two apps in step, both ways. Connect two apps, map their tables and fields, preview the first sync, then let it run."
        action={
          create.allowed ? (
            <Button component={Link} to="/get-started">
              Create your first sync
            </Button>
          ) : (
            <Tooltip label={create.reason}>
              <Button data-disabled onClick={(e) => e.preventDefault()}>
                Create your first sync
              </Button>
            </Tooltip>
          )
        }
      />
    </Stack>
  );
}
