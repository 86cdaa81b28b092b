import type { CoreBase } from '@lockstep/contract';
import { Center, Loader, Stack } from '@mantine/core';
import type { ReactNode } from 'react';
import { useParams } from 'react-router';
import { useCoreBase } from '../lib/sync-queries';
import { ErrorAlert } from './error-alert';
import { SyncNav } from './sync-nav';

export function PageLoader({ label }: { label: string }) {
  return (
    <Center p="xl">
      <Loader aria-label={label} />
    </Center>
  );
}

/** A screen of one sync (/syncs/{id}/…): loads the sync, shows its navigation, then the content. */
export function SyncScreen({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ReactNode;
  children: (sync: CoreBase) => ReactNode;
}) {
  const { id } = useParams();
  const sync = useCoreBase(id);
  if (sync.isLoading) return <PageLoader label="Loading the sync" />;
  if (sync.error || !sync.data) return <ErrorAlert error={sync.error} title="Could not load the sync" />;
  return (
    <Stack>
      <SyncNav sync={sync.data} title={title} actions={actions} />
      {children(sync.data)}
    </Stack>
  );
}
