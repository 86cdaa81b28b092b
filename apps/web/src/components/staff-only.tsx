import { Alert } from '@mantine/core';
import type { ReactNode } from 'react';
import { useCurrentUser } from '../lib/queries';

export function StaffOnly({ children }: { children: ReactNode }) {
  const me = useCurrentUser().data;
  if (me?.role !== 'staff') return <Alert color="gray">This page is for Lockstep staff.</Alert>;
  return <>{children}</>;
}
