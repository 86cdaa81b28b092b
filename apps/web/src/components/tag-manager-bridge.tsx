import { useEffect } from 'react';
import { useAppConfig, useCurrentUser } from '../lib/queries';
import { useSession } from '../lib/session';
import { tagManager } from '../lib/tag-manager';

/**
 * Loads Google Tag Manager once the server's config is known, as analytics start: at once for a
 * visitor who is not signed in, and for a signed-in one only after the current user says whether
 * staff are impersonating them (then it is never loaded). A pending sign-in is then pushed.
 */
export function TagManagerBridge() {
  const config = useAppConfig().data;
  const { checked, signedIn } = useSession();
  const me = useCurrentUser().data;
  useEffect(() => {
    if (!config || !checked) return;
    if (signedIn && !me) return;
    if (!tagManager.start(config, Boolean(me?.impersonatedBy))) return;
    if (me) tagManager.userKnown();
  }, [config, checked, signedIn, me]);
  return null;
}
