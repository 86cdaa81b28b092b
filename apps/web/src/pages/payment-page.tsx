import { PLAN_TIERS, tierOfProductType } from '@lockstep/contract';
import { Alert, Button, Center, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { errorText } from '../lib/api';
import { browser, isPaymentsNotSetUp, startCheckout } from '../lib/payments';

type State = { kind: 'loading' } | { kind: 'redirecting' } | { kind: 'error'; error: unknown };

/**
 * /account/payment/{productType}: starts Stripe Checkout for the plan and goes there; says so when
 * the checkout cannot start (payments not set up on this server, an unknown plan, Stripe failing).
 */
export function PaymentPage() {
  const { productType = '' } = useParams();
  const tier = tierOfProductType(productType);
  const planName = tier ? PLAN_TIERS[tier].displayName : productType;
  const [state, setState] = useState<State>({ kind: 'loading' });
  const started = useRef(false);

  const checkout = useCallback(async () => {
    setState({ kind: 'loading' });
    try {
      const { url } = await startCheckout(productType);
      setState({ kind: 'redirecting' });
      browser.goTo(url);
    } catch (error) {
      setState({ kind: 'error', error });
    }
  }, [productType]);

  useEffect(() => {
    // Once per visit (React's development mode runs effects twice).
    if (started.current) return;
    started.current = true;
    void checkout();
  }, [checkout]);

  if (state.kind !== 'error')
    return (
      <Center h="100vh" aria-busy="true">
        <Stack align="center" gap="sm">
          <Loader size="lg" aria-label="Starting checkout" />
          <Text>
            {state.kind === 'redirecting'
              ? "Taking you to Stripe's secure checkout…"
              : `Starting the checkout for the ${planName} plan…`}
          </Text>
        </Stack>
      </Center>
    );

  const notSetUp = isPaymentsNotSetUp(state.error);
  return (
    <Center h="100vh">
      <Stack maw={520} p="md">
        <Title order={2}>{planName} plan</Title>
        {notSetUp ? (
          <Alert color="yellow" title="Payments are not set up" role="alert">
            {errorText(state.error)}
          </Alert>
        ) : (
          <ErrorAlert error={state.error} title="Could not start the checkout" />
        )}
        <Group>
          {notSetUp ? null : <Button onClick={() => void checkout()}>Try again</Button>}
          <Button
            component={Link}
            to={tier ? `/account/signup/${productType}` : '/account/signup'}
            variant="default"
          >
            Back to plans
          </Button>
          <Button component={Link} to="/subscription/manage" variant="subtle">
            Your subscription
          </Button>
        </Group>
      </Stack>
    </Center>
  );
}
