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

/** The routes of spec section 2; a path that is not one of them shows the not-found view. */
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
            // Outside the shell: the sign-in popup of an app comes back here.
            path: '/oauth/:connectorType/callback',
            lazy: lazyPage(
              () => import('./pages/oauth-callback-page'),
              (m) => m.OAuthCallbackPage,
            ),
          },
          {
            // Outside the shell: it only starts Stripe Checkout and goes there.
            path: '/account/payment/:productType',
            lazy: lazyPage(
              () => import('./pages/payment-page'),
              (m) => m.PaymentPage,
            ),
          },
          {
            element: <AppLayout />,
            children: [
              {
                // Inside the shell, so a page that fails to render keeps the navigation around it.
                errorElement: <RouteErrorScreen />,
                children: [
                  { path: '/syncs', element: <SyncsPage /> },
                  {
                    path: '/git-sync/core-bases',
                    lazy: lazyPage(
                      () => import('./pages/git-sync-page'),
                      (m) => m.GitSyncPage,
                    ),
                  },
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
                    path: '/api-import',
                    lazy: lazyPage(
                      () => import('./pages/api-import-page'),
                      (m) => m.ApiImportPage,
                    ),
                  },
                  {
                    path: '/blended-tables',
                    lazy: lazyPage(
                      () => import('./pages/blended-tables-page'),
                      (m) => m.BlendedTablesPage,
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
                    path: '/developer',
                    lazy: lazyPage(
                      () => import('./pages/developer-page'),
                      (m) => m.DeveloperPage,
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
                  // The spec's own paths for the developer tools (section 2), beside /settings/*.
                  {
                    path: '/flags',
                    lazy: lazyPage(
                      () => import('./pages/flags-page'),
                      (m) => m.FlagsPage,
                      true,
                    ),
                  },
                  {
                    path: '/users',
                    lazy: lazyPage(
                      () => import('./pages/users-page'),
                      (m) => m.UsersPage,
                      true,
                    ),
                  },
                  {
                    path: '/settings/all-queues',
                    lazy: lazyPage(
                      () => import('./pages/queues-page'),
                      (m) => m.QueuesPage,
                      true,
                    ),
                  },
                  {
                    // Not staff-only: a user sees the jobs of their own syncs (the API checks).
                    path: '/job-viewer',
                    lazy: lazyPage(
                      () => import('./pages/job-viewer-page'),
                      (m) => m.JobViewerPage,
                    ),
                  },
                  {
                    path: '/stuck-syncs',
                    lazy: lazyPage(
                      () => import('./pages/stuck-syncs-page'),
                      (m) => m.StuckSyncsPage,
                      true,
                    ),
                  },
                  {
                    path: '/syncs/new',
                    lazy: lazyPage(
                      () => import('./pages/sync-edit-page'),
                      (m) => m.SyncNewPage,
                    ),
                  },
                  {
                    path: '/syncs/new/*',
                    lazy: lazyPage(
                      () => import('./pages/sync-edit-page'),
                      (m) => m.SyncNewPage,
                    ),
                  },
                  {
                    path: '/syncs/edit/:id/:segment?',
                    lazy: lazyPage(
                      () => import('./pages/sync-edit-page'),
                      (m) => m.SyncEditPage,
                    ),
                  },
                  {
                    path: '/syncs/:id',
                    lazy: lazyPage(
                      () => import('./pages/sync-detail-page'),
                      (m) => m.SyncDetailPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/overview',
                    lazy: lazyPage(
                      () => import('./pages/sync-detail-page'),
                      (m) => m.SyncDetailPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/table-mappings',
                    lazy: lazyPage(
                      () => import('./pages/table-mappings-page'),
                      (m) => m.TableMappingsPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/table-mapping-editor/:tableMappingId',
                    lazy: lazyPage(
                      () => import('./pages/table-mapping-editor-page'),
                      (m) => m.TableMappingEditorPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/table-mappings/:tableMappingId/field-mappings',
                    lazy: lazyPage(
                      () => import('./pages/field-mappings-page'),
                      (m) => m.FieldMappingsPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/sync-preview/:step',
                    lazy: lazyPage(
                      () => import('./pages/sync-preview-page'),
                      (m) => m.SyncPreviewPage,
                    ),
                  },
                  {
                    path: '/operations/:id',
                    lazy: lazyPage(
                      () => import('./pages/operation-detail-page'),
                      (m) => m.OperationDetailPage,
                    ),
                  },
                  {
                    path: '/issues/:id',
                    lazy: lazyPage(
                      () => import('./pages/issue-detail-page'),
                      (m) => m.IssueDetailPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/operations',
                    lazy: lazyPage(
                      () => import('./pages/sync-operations-page'),
                      (m) => m.SyncOperationsPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/issues',
                    lazy: lazyPage(
                      () => import('./pages/sync-issues-page'),
                      (m) => m.SyncIssuesPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/record-status/:recordId',
                    lazy: lazyPage(
                      () => import('./pages/record-status-page'),
                      (m) => m.RecordStatusPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/trace-logs',
                    lazy: lazyPage(
                      () => import('./pages/trace-logs-page'),
                      (m) => m.TraceLogsPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/dev-tools',
                    lazy: lazyPage(
                      () => import('./pages/sync-dev-tools-page'),
                      (m) => m.SyncDevToolsPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/dev-tools/schema',
                    lazy: lazyPage(
                      () => import('./pages/sync-dev-tools-schema-page'),
                      (m) => m.SyncDevToolsSchemaPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/dev-tools/record-history',
                    lazy: lazyPage(
                      () => import('./pages/sync-dev-tools-record-history-page'),
                      (m) => m.SyncDevToolsRecordHistoryPage,
                    ),
                  },
                  {
                    path: '/syncs/:id/dev-tools/records-old',
                    lazy: lazyPage(
                      () => import('./pages/sync-dev-tools-records-old-page'),
                      (m) => m.SyncDevToolsRecordsOldPage,
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
