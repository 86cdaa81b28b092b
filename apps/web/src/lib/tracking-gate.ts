import { useMemo } from 'react';
import { useAppConfig, useCurrentUser } from './queries';
import { useSession } from './session';

/**
 * When a page may start the trackers (analytics, the tag manager): once the server's config is
 * known, at once for a visitor who is not signed in, and for a signed-in one only once the current
 * user is known, so whether staff are impersonating them is known before anything loads. Null until
 * then; `me` is null for a visitor. The same object while none of these changes (an effect's dependency).
 */
export function useTrackingGate() {
  const config = useAppConfig().data;
  const { checked, signedIn } = useSession();
  const me = useCurrentUser().data;
  const ready = Boolean(config) && checked && !(signedIn && !me);
  return useMemo(() => (ready && config ? { config, me: me ?? null } : null), [ready, config, me]);
}
