import type { ComponentType } from 'react';
import { createBrowserRouter, Navigate, Outlet } from 'react-router';
import { AppLayout } from './components/app-layout';
import { FullWindowLoader } from './components/full-window-loader';
import { NotFoundView } from './components/not-found-view';
import { RequireAuth } from './components/require-auth';
import { RouteErrorScreen } from './components/route-error-screen';
import { RouteProgress } from './components/route-progress';
import { StaffOnly } from './components/staff-only';
import { SignInPage, SignUpPage } from './pages/auth-form';
import { SyncsPage } from './pages/syncs-page';

function Root() {
  return (
    <>
      <RouteProgress />
      <Outlet />
    </>
  );
}

/**
 * A page loaded on first visit: its code arrives while the route changes, which is what the
 * route progress bar shows on a slow connection.
 */
function lazyPage<M>(load: () => Promise<M>, pick: (module: M) => ComponentType, staffOnly = false) {
  return async () => {
    const Page = pick(await load());
    if (!staffOnly) return { Component: Page };
    return {
      Component: () => (
        <StaffOnly>
          <Page />
        </StaffOnly>
      ),
    };
  };
}

/** The routes of spec section 2; those not built yet (the sync screens) show the not-found view. */
export const router = createBrowserRouter([
  {
    element: <Root />,
    errorElement: <RouteErrorScreen />,
    hydrateFallbackElement: <FullWindowLoader />,
    children: [
      { path: '/', element: <Navigate to="/syncs" replace /> },
      { path: '/sign-in', element: <SignInPage /> },
      { path: '/sign-up', element: <SignUpPage /> },
      {
        path: '/account/signup/:productType?',
        lazy: lazyPage(
          () => import('./pages/account-signup-page'),
          (m) => m.AccountSignupPage,
        ),
      },
      {
        element: <RequireAuth />,
        children: [
          {
            element: <AppLayout />,
            children: [
              {
                // Inside the shell, so a page that fails to render keeps the navigation around it.
                errorElement: <RouteErrorScreen />,
                children: [
                  { path: '/syncs', element: <SyncsPage /> },
                  {
                    path: '/issues',
                    lazy: lazyPage(
                      () => import('./pages/issues-page'),
                      (m) => m.IssuesPage,
                    ),
                  },
                  {
                    path: '/operations',
                    lazy: lazyPage(
                      () => import('./pages/operations-page'),
                      (m) => m.OperationsPage,
                    ),
                  },
                  {
                    path: '/get-started',
                    lazy: lazyPage(
                      () => import('./pages/get-started-page'),
                      (m) => m.GetStartedPage,
                    ),
                  },
                  {
                    path: '/settings',
                    lazy: lazyPage(
                      () => import('./pages/settings-page'),
                      (m) => m.SettingsPage,
                    ),
                  },
                  {
                    path: '/settings/profile',
                    lazy: lazyPage(
                      () => import('./pages/profile-page'),
                      (m) => m.ProfilePage,
                    ),
                  },
                  {
                    path: '/settings/dev-tools',
                    lazy: lazyPage(
                      () => import('./pages/dev-tools-page'),
                      (m) => m.DevToolsPage,
                    ),
                  },
                  {
                    path: '/subscription/manage',
                    lazy: lazyPage(
                      () => import('./pages/subscription-page'),
                      (m) => m.SubscriptionPage,
                    ),
                  },
                  {
                    path: '/settings/users',
                    lazy: lazyPage(
                      () => import('./pages/users-page'),
                      (m) => m.UsersPage,
                      true,
                    ),
                  },
                  {
                    path: '/settings/flags',
                    lazy: lazyPage(
                      () => import('./pages/flags-page'),
                      (m) => m.FlagsPage,
                      true,
                    ),
                  },
                  { path: '*', element: <NotFoundView /> },
                ],
              },
            ],
          },
        ],
      },
    ],
  },
]);
