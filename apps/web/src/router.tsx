import { createBrowserRouter, Navigate, Outlet } from 'react-router';
import { AppLayout } from './components/app-layout';
import { NotFoundView } from './components/not-found-view';
import { RequireAuth } from './components/require-auth';
import { RouteProgress } from './components/route-progress';
import { StaffOnly } from './components/staff-only';
import { AccountSignupPage } from './pages/account-signup-page';
import { SignInPage, SignUpPage } from './pages/auth-form';
import { DevToolsPage } from './pages/dev-tools-page';
import { FlagsPage } from './pages/flags-page';
import { GetStartedPage } from './pages/get-started-page';
import { ProfilePage } from './pages/profile-page';
import { SettingsPage } from './pages/settings-page';
import { SubscriptionPage } from './pages/subscription-page';
import { SyncsPage } from './pages/syncs-page';
import { UsersPage } from './pages/users-page';

function Root() {
  return (
    <>
      <RouteProgress />
      <Outlet />
    </>
  );
}

/** The routes of spec section 2; those not built yet show the not-found view. */
export const router = createBrowserRouter([
  {
    element: <Root />,
    children: [
      { path: '/', element: <Navigate to="/syncs" replace /> },
      { path: '/sign-in', element: <SignInPage /> },
      { path: '/sign-up', element: <SignUpPage /> },
      { path: '/account/signup', element: <AccountSignupPage /> },
      { path: '/account/signup/:productType', element: <AccountSignupPage /> },
      {
        element: <RequireAuth />,
        children: [
          {
            element: <AppLayout />,
            children: [
              { path: '/syncs', element: <SyncsPage /> },
              { path: '/get-started', element: <GetStartedPage /> },
              { path: '/settings', element: <SettingsPage /> },
              { path: '/settings/profile', element: <ProfilePage /> },
              { path: '/settings/dev-tools', element: <DevToolsPage /> },
              { path: '/subscription/manage', element: <SubscriptionPage /> },
              {
                path: '/settings/users',
                element: (
                  <StaffOnly>
                    <UsersPage />
                  </StaffOnly>
                ),
              },
              {
                path: '/settings/flags',
                element: (
                  <StaffOnly>
                    <FlagsPage />
                  </StaffOnly>
                ),
              },
              { path: '*', element: <NotFoundView /> },
            ],
          },
        ],
      },
    ],
  },
]);
