/**
 * The support chat (spec sections 3 and 6): Intercom, with identity verification through the user's
 * `intercomHash` (an HMAC of the user id made by the server), or Chatwoot for self-hosters. Its
 * script is added only when one is configured and a real user (not staff impersonating) is signed in.
 */
export type SupportChatSettings =
  | { kind: 'intercom'; appId: string }
  | { kind: 'chatwoot'; websiteToken: string; baseUrl: string }
  | null;
export type SupportChatUser = {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  intercomHash: string;
};

export const SUPPORT_CHAT_SCRIPT_ID = 'lockstep-support-chat';

type IntercomCall = (...args: unknown[]) => void;
type ChatwootWidget = {
  setUser: (identifier: string, user: Record<string, string>) => void;
  reset: () => void;
};
type ChatWindow = Window & {
  Intercom?: IntercomCall & { q?: unknown[][] };
  chatwootSettings?: Record<string, unknown>;
  chatwootSDK?: { run: (options: { websiteToken: string; baseUrl: string }) => void };
  $chatwoot?: ChatwootWidget;
};
const w = () => window as ChatWindow;

let loadedKind: 'intercom' | 'chatwoot' | null = null;

function addScript(src: string, onload?: () => void) {
  const script = document.createElement('script');
  script.id = SUPPORT_CHAT_SCRIPT_ID;
  script.src = src;
  script.async = true;
  if (onload) script.onload = onload;
  script.onerror = () => console.error(`Support chat: could not load ${src}`);
  document.body.appendChild(script);
}

/** Intercom's queue: calls made before its script arrives wait in `q` and run when it loads. */
function intercomQueue(): IntercomCall {
  const existing = w().Intercom;
  if (existing) return existing;
  const queue: unknown[][] = [];
  const call = Object.assign((...args: unknown[]) => void queue.push(args), { q: queue });
  w().Intercom = call;
  return call;
}

/** Loads and starts the configured chat for this user, once per page. */
export function loadSupportChat(settings: SupportChatSettings, user: SupportChatUser) {
  if (!settings || loadedKind !== null) return;
  loadedKind = settings.kind;
  try {
    if (settings.kind === 'intercom') {
      intercomQueue()('boot', {
        app_id: settings.appId,
        user_id: user.id,
        user_hash: user.intercomHash,
        email: user.email,
        name: user.name,
        created_at: Math.floor(Date.parse(user.createdAt) / 1000),
      });
      addScript(`https://widget.intercom.io/widget/${encodeURIComponent(settings.appId)}`);
      return;
    }
    const { websiteToken, baseUrl } = settings;
    // Chatwoot checks identifier_hash with the inbox's HMAC token: set LOCKSTEP_INTERCOM_SECRET to it.
    window.addEventListener(
      'chatwoot:ready',
      () =>
        w().$chatwoot?.setUser(user.id, {
          email: user.email,
          name: user.name,
          identifier_hash: user.intercomHash,
        }),
      { once: true },
    );
    w().chatwootSettings = { position: 'right', type: 'standard' };
    addScript(`${baseUrl}/packs/js/sdk.js`, () => w().chatwootSDK?.run({ websiteToken, baseUrl }));
  } catch (error) {
    console.error('Support chat: could not start', error);
  }
}

/** Sign-out: the chat forgets the user, so the next person on this browser does not see their talk. */
export function shutdownSupportChat() {
  try {
    if (loadedKind === 'intercom') w().Intercom?.('shutdown');
    if (loadedKind === 'chatwoot') w().$chatwoot?.reset();
  } catch (error) {
    console.error('Support chat: could not shut down', error);
  }
}

/** Tests only. */
export function resetSupportChatForTests() {
  loadedKind = null;
  document.getElementById(SUPPORT_CHAT_SCRIPT_ID)?.remove();
  delete w().Intercom;
  delete w().$chatwoot;
  delete w().chatwootSDK;
  delete w().chatwootSettings;
}
