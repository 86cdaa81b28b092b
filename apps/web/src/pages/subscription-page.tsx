import { Badge, Button, Card, Group, Progress, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { usePlan } from '../lib/queries';

function Usage({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  const percent = limit === null ? 0 : limit === 0 ? 100 : Math.min(100, (used / limit) * 100);
  return (
    <Stack gap={4}>
      <Group justify="space-between">
        <Text size="sm" fw={500}>
          {label}
        </Text>
        <Text size="sm" c="dimmed">
          {used.toLocaleString()} of {limit === null ? 'unlimited' : limit.toLocaleString()}
        </Text>
      </Group>
      <Progress
        value={percent}
        color={percent >= 100 ? 'red' : percent >= 80 ? 'orange' : 'blue'}
        aria-label={label}
      />
    </Stack>
  );
}

export function SubscriptionPage() {
  const plan = usePlan();
  const { subscription, limits } = plan;
  return (
    <Stack maw={640}>
      <Title order={2}>Subscription</Title>
      <Card withBorder>
        <Stack>
          <Group justify="space-between">
            <Text fw={600} size="lg">
              {subscription.planDisplayName}
            </Text>
            <Badge
              color={
                subscription.status === 'expired' ? 'red' : subscription.status === 'none' ? 'gray' : 'green'
              }
            >
              {subscription.status}
            </Badge>
          </Group>
          {subscription.daysRemaining !== null ? (
            <Text size="sm" c="dimmed">
              {subscription.daysRemaining} day{subscription.daysRemaining === 1 ? '' : 's'} remaining
              {plan.devPlan ? ' (local dev plan)' : ''}
            </Text>
          ) : null}
          {limits ? (
            <>
              <Usage label="Syncs" used={limits.baseCount} limit={limits.baseLimit} />
              <Usage label="Synced records" used={limits.recordCount} limit={limits.recordLimit} />
            </>
          ) : (
            <Text c="dimmed">No plan yet: choose one to start syncing.</Text>
          )}
          <Group>
            <Button
              component={Link}
              to="/account/signup"
              variant={subscription.status === 'none' ? 'filled' : 'default'}
            >
              {subscription.status === 'none' ? 'Choose a plan' : 'See plans'}
            </Button>
          </Group>
        </Stack>
      </Card>
    </Stack>
  );
}
