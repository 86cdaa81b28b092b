import { useEffect } from 'react';
import { analytics } from '../lib/analytics';
import { useAppConfig, useCurrentUser } from '../lib/queries';
import { useSession } from '../lib/session';

/**
 * Starts analytics once the server's config is known: at once for a visitor who is not signed in,
 * and for a signed-in one only after the current user says whether staff are impersonating them
 * (then analytics never start). The signed-in user is identified with their plan.
 */
export function AnalyticsBridge() {
  const config = useAppConfig().data;
  const { checked, signedIn } = useSession();
  const me = useCurrentUser().data;
  useEffect(() => {
    if (!config || !checked) return;
    if (signedIn && !me) return;
    const user = me
      ? { id: me.id, email: me.email, plan: me.lockstepUser.subscription.planDisplayName }
      : null;
    if (me?.impersonatedBy && user) {
      analytics.setUser(user, true);
      return;
    }
    if (!analytics.start(config)) return;
    if (user) analytics.setUser(user, false);
  }, [config, checked, signedIn, me]);
  return null;
}
