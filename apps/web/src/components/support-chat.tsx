import type { CurrentUser } from '@lockstep/contract';
import { useEffect } from 'react';
import { loadSupportChat, type SupportChatSettings } from '../lib/support-chat';

/**
 * Loads the configured support chat for the signed-in user; never while staff impersonate them
 * (spec section 6). Renders nothing itself: the chat's own script draws its launcher.
 */
export function SupportChat({
  settings,
  me,
}: {
  settings: SupportChatSettings | undefined;
  me: CurrentUser;
}) {
  const impersonating = me.impersonatedBy !== null;
  useEffect(() => {
    if (!settings || impersonating) return;
    loadSupportChat(settings, {
      id: me.id,
      email: me.email,
      name: me.displayName,
      createdAt: me.lockstepUser.createdAt,
      intercomHash: me.lockstepUser.intercomHash,
    });
  }, [settings, impersonating, me]);
  return null;
}
