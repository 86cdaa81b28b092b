import { PLAN_GATED_ROUTES } from '@lockstep/contract';
import {
  Alert,
  AppShell,
  Badge,
  Button,
  Group,
  Menu,
  NavLink,
  Text,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { Link, Outlet, useLocation } from 'react-router';
import { authClient } from '../lib/auth-client';
import { useAppConfig, useCurrentUser, usePlan } from '../lib/queries';
import { useSession } from '../lib/session';
import { FullWindowLoader } from './full-window-loader';
import { PlanGateModal } from './plan-gate';

const NAV = [
  { to: '/syncs', label: 'Syncs' },
  { to: '/issues', label: 'Issues' },
  { to: '/operations', label: 'Operations' },
  { to: '/get-started', label: 'Get started' },
  { to: '/settings', label: 'Settings' },
];

function isGated(pathname: string) {
  return (PLAN_GATED_ROUTES as readonly string[]).some((r) => pathname === r || pathname === `${r}/`);
}

/** The signed-in shell: navigation, plan badge, impersonation banner and the plan gate. */
export function AppLayout() {
  const { pathname } = useLocation();
  const { signOut } = useSession();
  const user = useCurrentUser();
  const config = useAppConfig();
  const plan = usePlan();

  if (user.isLoading || plan.loading) return <FullWindowLoader />;
  const me = user.data;
  const selectPlanInApp = me?.lockstepUser.experimentFlags.SELECT_A_PLAN_URL === true;
  const gate = isGated(pathname) && plan.subscription.status === 'none';

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm' }} padding="lg">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="xs">
            <Title order={4}>Lockstep</Title>
            <Badge variant="light" color={plan.subscription.status === 'expired' ? 'red' : 'blue'}>
              {plan.subscription.planDisplayName}
            </Badge>
          </Group>
          <Menu position="bottom-end">
            <Menu.Target>
              <UnstyledButton aria-label="Account menu">
                <Text size="sm">{me?.displayName ?? 'Account'}</Text>
              </UnstyledButton>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item component={Link} to="/settings/profile">
                Profile
              </Menu.Item>
              <Menu.Item component={Link} to="/subscription/manage">
                Subscription
              </Menu.Item>
              <Menu.Item onClick={() => void signOut()}>Sign out</Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        {NAV.map((item) => (
          <NavLink
            key={item.to}
            component={Link}
            to={item.to}
            label={item.label}
            active={pathname === item.to || pathname.startsWith(`${item.to}/`)}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        {me?.impersonatedBy ? (
          <Alert color="orange" mb="md" title="Impersonating">
            <Group justify="space-between">
              <Text size="sm">You are acting as {me.email}. Nothing you do here is tracked as them.</Text>
              <Button
                size="xs"
                color="orange"
                onClick={async () => {
                  await authClient.admin.stopImpersonating();
                  window.location.assign('/settings/users');
                }}
              >
                Stop impersonating
              </Button>
            </Group>
          </Alert>
        ) : null}
        {plan.subscription.status === 'expired' && isGated(pathname) ? (
          <Alert color="red" mb="md" title="Your plan has expired">
            You can look around, but creating, switching on and retrying syncs needs an active plan.{' '}
            <Link to="/subscription/manage">Manage your subscription</Link>.
          </Alert>
        ) : null}
        <Outlet />
        {gate ? (
          <PlanGateModal
            choosePlanHref={
              selectPlanInApp ? '/account/signup' : (config.data?.pricingUrl ?? '/account/signup')
            }
            onSwitchAccounts={() => void signOut()}
          />
        ) : null}
      </AppShell.Main>
    </AppShell>
  );
}
