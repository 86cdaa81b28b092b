import { Alert, Anchor, AppShell, NavLink } from '@mantine/core';
import { Link, Outlet, useLocation } from 'react-router';
import { errorText } from '../lib/api';
import { choosePlanHref, planGateView } from '../lib/plan-gate-rules';
import { useAppConfig, useCurrentUser, usePlan } from '../lib/queries';
import { useSession } from '../lib/session';
import { AppHeader } from './app-header';
import { DevToolbox } from './dev-toolbox';
import { FullWindowLoader } from './full-window-loader';
import { GenericErrorView } from './generic-error-view';
import { ImpersonationBanner } from './impersonation-banner';
import { PlanGateModal } from './plan-gate';
import { SupportChat } from './support-chat';

const NAV = [
  { to: '/syncs', label: 'Syncs' },
  { to: '/issues', label: 'Issues' },
  { to: '/operations', label: 'Operations' },
  { to: '/api-import', label: 'API import' },
  { to: '/blended-tables', label: 'Blended tables' },
  { to: '/get-started', label: 'Get started' },
  { to: '/git-sync/core-bases', label: 'Git sync' },
  { to: '/settings', label: 'Settings' },
];

/** The signed-in shell: navigation, plan badge, impersonation banner and the plan gate. */
export function AppLayout() {
  const { pathname } = useLocation();
  const { signOut } = useSession();
  const user = useCurrentUser();
  const config = useAppConfig();
  const plan = usePlan();

  if (user.isLoading || plan.loading) return <FullWindowLoader />;
  // Without the current user nothing below can be right: say so rather than show the gate.
  if (user.error || !user.data) {
    return (
      <GenericErrorView
        title="Could not load your account"
        details={user.error ? errorText(user.error) : undefined}
      />
    );
  }
  const me = user.data;
  const view = planGateView(pathname, plan.subscription.status);

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm' }} padding="lg">
      <AppShell.Header>
        <AppHeader
          displayName={me.displayName}
          subscription={plan.subscription}
          limits={plan.subscription.status === 'none' ? null : plan.limits}
          onSignOut={() => void signOut()}
        />
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
        {me.impersonatedBy ? <ImpersonationBanner email={me.email} /> : null}
        {view === 'expired-notice' ? (
          <Alert color="red" mb="md" title="Your plan has expired">
            You can look around, but creating, switching on and retrying syncs needs an active plan.{' '}
            <Anchor component={Link} to="/subscription/manage" size="sm">
              Manage your subscription
            </Anchor>
            .
          </Alert>
        ) : null}
        <Outlet />
        <SupportChat settings={config.data?.supportChat} me={me} />
        <DevToolbox me={me} />
        {view === 'gate' ? (
          <PlanGateModal
            choosePlanHref={choosePlanHref(me.lockstepUser.experimentFlags, config.data?.pricingUrl)}
            onSwitchAccounts={() => void signOut()}
          />
        ) : null}
      </AppShell.Main>
    </AppShell>
  );
}
