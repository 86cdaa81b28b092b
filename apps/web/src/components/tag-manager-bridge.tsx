import { useEffect } from 'react';
import { tagManager } from '../lib/tag-manager';
import { useTrackingGate } from '../lib/tracking-gate';

/**
 * Loads Google Tag Manager when the trackers may start (useTrackingGate): never while staff are
 * impersonating the user. A pending sign-in is then pushed.
 */
export function TagManagerBridge() {
  const gate = useTrackingGate();
  useEffect(() => {
    if (!gate) return;
    const { config, me } = gate;
    if (!tagManager.start(config, Boolean(me?.impersonatedBy))) return;
    if (me) tagManager.userKnown();
  }, [gate]);
  return null;
}
