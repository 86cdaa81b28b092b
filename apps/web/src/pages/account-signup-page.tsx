import { PLAN_TIERS, type PlanTier, tierOfProductType } from '@lockstep/contract';
import { Badge, Button, Card, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { useAppConfig } from '../lib/queries';
import { useSession } from '../lib/session';

/** The plan chooser (/account/signup and /account/signup/{productType}): starts a trial of a tier. */
export function AccountSignupPage() {
  const { productType } = useParams();
  const highlighted = productType ? tierOfProductType(productType) : null;
  const [busy, setBusy] = useState<PlanTier | null>(null);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const { signedIn, tokenReady } = useSession();
  const payments = useAppConfig().data?.payments === true;

  async function choose(tier: PlanTier) {
    if (!signedIn) {
      // A public page: sign up first, then come back to the chosen plan.
      navigate(`/sign-up?redirect_url=${encodeURIComponent(`/account/signup/${tier}`)}`);
      return;
    }
    setBusy(tier);
    try {
      await api('/rest/users/current/choose-plan', {
        method: 'POST',
        body: { productType: productType && highlighted === tier ? productType : tier },
      });
      await queryClient.invalidateQueries();
      showSuccess(`Your ${PLAN_TIERS[tier].displayName} trial has started.`);
      navigate('/syncs');
    } catch (error) {
      showError(error, 'Could not choose this plan');
    } finally {
      setBusy(null);
    }
  }

  return (
    <Stack p="xl" maw={1280} mx="auto">
      <Title order={2}>Choose a plan</Title>
      <Text c="dimmed">Every plan starts with a 14-day trial.</Text>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
        {(Object.keys(PLAN_TIERS) as PlanTier[]).map((tier) => {
          const p = PLAN_TIERS[tier];
          return (
            <Card key={tier} withBorder shadow={highlighted === tier ? 'md' : undefined} data-tier={tier}>
              <Stack gap="xs">
                <Text fw={700}>{p.displayName}</Text>
                {highlighted === tier ? <Badge>Selected</Badge> : null}
                <Text size="sm">
                  {p.baseLimit === null
                    ? 'Unlimited syncs'
                    : `${p.baseLimit} sync${p.baseLimit === 1 ? '' : 's'}`}
                </Text>
                <Text size="sm">{p.recordLimit.toLocaleString()} records</Text>
                <Text size="sm" c="dimmed">
                  Checks for changes every{' '}
                  {p.pollIntervalSeconds >= 60
                    ? `${p.pollIntervalSeconds / 60} min`
                    : `${p.pollIntervalSeconds} s`}
                </Text>
                <Button
                  onClick={() => void choose(tier)}
                  loading={busy === tier}
                  disabled={(busy !== null && busy !== tier) || (signedIn && !tokenReady)}
                >
                  Start trial
                </Button>
                {payments ? (
                  <Button
                    component={Link}
                    variant="light"
                    to={
                      signedIn
                        ? `/account/payment/${productType && highlighted === tier ? productType : tier}`
                        : `/sign-up?redirect_url=${encodeURIComponent(`/account/payment/${tier}`)}`
                    }
                  >
                    Subscribe
                  </Button>
                ) : null}
              </Stack>
            </Card>
          );
        })}
      </SimpleGrid>
    </Stack>
  );
}
