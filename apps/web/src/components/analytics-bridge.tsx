import { useEffect } from 'react';
import { analytics } from '../lib/analytics';
import { useTrackingGate } from '../lib/tracking-gate';

/**
 * Starts analytics when the trackers may start (useTrackingGate): never while staff are
 * impersonating the user. The signed-in user is identified with their plan.
 */
export function AnalyticsBridge() {
  const gate = useTrackingGate();
  useEffect(() => {
    if (!gate) return;
    const { config, me } = gate;
    const user = me
      ? { id: me.id, email: me.email, plan: me.lockstepUser.subscription.planDisplayName }
      : null;
    if (me?.impersonatedBy && user) {
      analytics.setUser(user, true);
      return;
    }
    if (!analytics.start(config)) return;
    if (user) analytics.setUser(user, false);
  }, [gate]);
  return null;
}
