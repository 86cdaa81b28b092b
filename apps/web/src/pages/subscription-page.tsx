import { type PlanSummary, type Subscription, tierOfProductType } from '@lockstep/contract';
import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Loader,
  Progress,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { browser, openBillingPortal } from '../lib/payments';
import { useAppConfig, usePlan, usePlans } from '../lib/queries';

const days = (n: number) => `${n} day${n === 1 ? '' : 's'}`;

/** What the days remaining mean for this subscription. */
export function remainingWords(subscription: Subscription, devPlan: boolean): string | null {
  const n = subscription.daysRemaining;
  if (n === null) return null;
  if (subscription.status === 'past_due')
    return `A payment failed. Update your payment details with Manage billing: the plan stays usable for ${days(n)}.`;
  if (subscription.status === 'expired') return null;
  if (subscription.billedByStripe && subscription.cancelAtPeriodEnd) return `Canceled: ends in ${days(n)}.`;
  if (subscription.billedByStripe) return `Renews in ${days(n)}.`;
  return `${days(n)} remaining${devPlan ? ' (local dev plan)' : ''}`;
}

/**
 * Manage billing: Stripe's billing portal (plan, payment details, invoices, cancel). On a server
 * without payments it says so instead.
 */
function ManageBilling() {
  const config = useAppConfig();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!config.data) return null;
  if (!config.data.payments)
    return (
      <Text size="sm" c="dimmed">
        Payments are not set up on this server: plans come from a trial or from staff.
      </Text>
    );
  async function open() {
    setBusy(true);
    setError(null);
    try {
      browser.goTo((await openBillingPortal()).url);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }
  return (
    <Stack gap="xs">
      <Group>
        <Button variant="default" onClick={() => void open()} loading={busy}>
          Manage billing
        </Button>
      </Group>
      {error ? <ErrorAlert error={error} title="Could not open billing" /> : null}
    </Stack>
  );
}

/**
 * Back from Stripe Checkout (?checkout=success): the plan arrives with Stripe's webhook, usually
 * within seconds; the user is read again until it has.
 */
function CheckoutReturn({ subscription }: { subscription: Subscription }) {
  const [params] = useSearchParams();
  const queryClient = useQueryClient();
  const back = params.get('checkout') === 'success';
  const arrived = subscription.billedByStripe === true && subscription.status !== 'expired';
  useEffect(() => {
    if (!back || arrived) return;
    let tries = 0;
    const timer = setInterval(() => {
      tries += 1;
      void queryClient.invalidateQueries({ queryKey: ['current-user'] });
      void queryClient.invalidateQueries({ queryKey: ['limit-data'] });
      if (tries >= 15) clearInterval(timer);
    }, 2000);
    return () => clearInterval(timer);
  }, [back, arrived, queryClient]);
  if (!back) return null;
  return (
    <Alert color={arrived ? 'green' : 'blue'} title={arrived ? 'Thank you' : 'Payment received'}>
      {arrived
        ? `Your ${subscription.planDisplayName} plan is active.`
        : 'Your plan becomes active as soon as Stripe confirms the payment, usually within seconds.'}
    </Alert>
  );
}

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

/** 900 → "15 min", 30 → "30 s". */
export function intervalWords(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** Every plan with the limits the server enforces; the user's own plan is marked. */
function PlanTable({ subscription }: { subscription: Subscription }) {
  const plans = usePlans();
  const current =
    subscription.status !== 'none' && subscription.productType
      ? tierOfProductType(subscription.productType)
      : null;
  if (plans.isLoading) return <Loader size="sm" aria-label="Loading plans" />;
  if (plans.error) return <ErrorAlert error={plans.error} title="Could not load the plans" />;
  const items: PlanSummary[] = plans.data?.items ?? [];
  return (
    <Stack gap="xs">
      <Table.ScrollContainer minWidth={560}>
        <Table aria-label="Plans">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Plan</Table.Th>
              <Table.Th>Syncs</Table.Th>
              <Table.Th>Synced records</Table.Th>
              <Table.Th>Checks for changes</Table.Th>
              <Table.Th>History kept</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((p) => {
              const isCurrent = p.tier === current;
              return (
                <Table.Tr
                  key={p.tier}
                  data-tier={p.tier}
                  data-current={isCurrent || undefined}
                  aria-current={isCurrent ? 'true' : undefined}
                  bg={isCurrent ? 'var(--mantine-color-blue-light)' : undefined}
                >
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Text size="sm" fw={isCurrent ? 700 : 500}>
                        {p.displayName}
                      </Text>
                      {isCurrent ? (
                        <Badge size="sm" color={subscription.status === 'expired' ? 'red' : 'blue'}>
                          {subscription.status === 'expired' ? 'Current plan (expired)' : 'Current plan'}
                        </Badge>
                      ) : null}
                    </Group>
                  </Table.Td>
                  <Table.Td>{p.baseLimit === null ? 'Unlimited' : p.baseLimit.toLocaleString()}</Table.Td>
                  <Table.Td>{p.recordLimit.toLocaleString()}</Table.Td>
                  <Table.Td>Every {intervalWords(p.pollIntervalSeconds)}</Table.Td>
                  <Table.Td>
                    {p.historyRetentionDays} day{p.historyRetentionDays === 1 ? '' : 's'}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Text size="xs" c="dimmed">
        Checks for changes: how often each sync looks for changes at the latest; changes an app announces
        (webhooks, PostgreSQL change capture) are picked up sooner on every plan.
      </Text>
    </Stack>
  );
}

export function SubscriptionPage() {
  const plan = usePlan();
  const { subscription, limits } = plan;
  return (
    <Stack maw={760}>
      <Title order={2}>Subscription</Title>
      <CheckoutReturn subscription={subscription} />
      <Card withBorder>
        <Stack>
          <Group justify="space-between">
            <Text fw={600} size="lg">
              {subscription.planDisplayName}
            </Text>
            <Badge
              color={
                subscription.status === 'expired'
                  ? 'red'
                  : subscription.status === 'none'
                    ? 'gray'
                    : subscription.status === 'past_due'
                      ? 'orange'
                      : 'green'
              }
            >
              {subscription.status}
            </Badge>
          </Group>
          {remainingWords(subscription, plan.devPlan) !== null ? (
            <Text size="sm" c={subscription.status === 'past_due' ? 'orange' : 'dimmed'}>
              {remainingWords(subscription, plan.devPlan)}
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
          {plan.devPlan ? null : <ManageBilling />}
        </Stack>
      </Card>
      <Title order={3}>Plans</Title>
      <PlanTable subscription={subscription} />
    </Stack>
  );
}
