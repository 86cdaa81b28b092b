import { NOTIFICATIONS } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from 'react-router';
import { AnalyticsBridge } from './components/analytics-bridge';
import { PageErrorBoundary } from './components/error-boundary';
import { TagManagerBridge } from './components/tag-manager-bridge';
import { DEFAULT_SUPPORT_EMAIL, useAppConfig } from './lib/queries';
import { SessionProvider } from './lib/session';
import { router } from './router';

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false } },
});

function Shell() {
  const config = useAppConfig();
  return (
    <PageErrorBoundary supportEmail={config.data?.supportEmail ?? DEFAULT_SUPPORT_EMAIL}>
      <AnalyticsBridge />
      <TagManagerBridge />
      <RouterProvider router={router} />
    </PageErrorBoundary>
  );
}

export function App() {
  return (
    <MantineProvider defaultColorScheme="light">
      <Notifications
        position={NOTIFICATIONS.position}
        autoClose={NOTIFICATIONS.autoClose}
        limit={NOTIFICATIONS.limit}
        containerWidth={NOTIFICATIONS.width}
      />
      <QueryClientProvider client={queryClient}>
        <SessionProvider>
          <Shell />
        </SessionProvider>
      </QueryClientProvider>
    </MantineProvider>
  );
}
