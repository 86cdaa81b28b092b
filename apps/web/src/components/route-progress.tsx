import { Progress } from '@mantine/core';
import { useNavigation } from 'react-router';
import { useRouteProgress } from './use-route-progress';

/** A thin bar at the top while a route change takes longer than 250 ms. */
export function RouteProgress() {
  const navigation = useNavigation();
  const value = useRouteProgress(navigation.state !== 'idle');
  if (value === null) return null;
  return (
    <Progress
      value={value}
      size={3}
      radius={0}
      aria-label="Loading page"
      style={{ position: 'fixed', top: 0, left: 0, right: 0, zIndex: 1000 }}
      transitionDuration={150}
    />
  );
}
