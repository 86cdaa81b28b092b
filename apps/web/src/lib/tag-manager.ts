/**
 * Google Tag Manager (spec: "Analytics and tag manager run only in staging and production"):
 * - its container script is added only in staging and production, only when the server has a
 *   container id (LOCKSTEP_GTM_ID), and only once the page knows staff are not impersonating the
 *   user (as the support chat): while impersonating nothing is loaded and nothing is pushed;
 * - the data layer starts with the standard `gtm.start` event, then the script loads asynchronously;
 * - sign-in and sign-out are pushed to the data layer as events, as analytics tracks them;
 * - a failure is logged to the console only, never breaking the page.
 */
export type TagManagerSettings = {
  environment: 'local' | 'test' | 'staging' | 'production';
  tagManager: { gtmId: string } | null;
};

export const GTM_SCRIPT_ID = 'lockstep-gtm';
/** The server validates the id too; checked again here, as it goes into a script address. */
const GTM_ID = /^GTM-[A-Z0-9]{4,12}$/;
/** A sign-in waiting for the page after it (the sign-in page leaves at once), as analytics does. */
const SIGN_IN_MARK = 'lockstep.tagManager.signedIn';

type DataLayerWindow = Window & { dataLayer?: Record<string, unknown>[] };

let loaded = false;
let impersonating = false;

function logged(what: string, call: () => void) {
  try {
    call();
  } catch (error) {
    console.error(`Tag manager: ${what} failed`, error);
  }
}

function push(entry: Record<string, unknown>) {
  const w = window as DataLayerWindow;
  w.dataLayer = w.dataLayer ?? [];
  w.dataLayer.push(entry);
}

const active = () => loaded && !impersonating;

export const tagManager = {
  /** Loads the container once, when this environment has it and no one impersonates; answers whether it runs. */
  start(settings: TagManagerSettings, isImpersonating: boolean): boolean {
    if (isImpersonating) impersonating = true;
    if (loaded) return active();
    if (impersonating) return false;
    const { environment, tagManager: gtm } = settings;
    if (environment !== 'staging' && environment !== 'production') return false;
    if (!gtm || !GTM_ID.test(gtm.gtmId)) return false;
    logged('start', () => {
      push({ 'gtm.start': Date.now(), event: 'gtm.js' });
      const script = document.createElement('script');
      script.id = GTM_SCRIPT_ID;
      script.async = true;
      script.src = `https://www.googletagmanager.com/gtm.js?id=${encodeURIComponent(gtm.gtmId)}`;
      script.onerror = () => console.error('Tag manager: could not load its script');
      document.head.appendChild(script);
      loaded = true;
    });
    return loaded;
  },

  /** The signed-in user is known: a pending sign-in is pushed now (never while impersonating). */
  userKnown() {
    if (!active()) return;
    logged('pushing the sign-in', () => {
      const method = sessionStorage.getItem(SIGN_IN_MARK);
      if (method === null) return;
      sessionStorage.removeItem(SIGN_IN_MARK);
      push({ event: 'signed_in', method: method || 'email' });
    });
  },

  /** Called when a sign-in succeeded; pushed once the next page knows the user (userKnown). */
  signedIn(method = 'email') {
    logged('noting the sign-in', () => sessionStorage.setItem(SIGN_IN_MARK, method));
  },

  /** Sign-out: pushed at once, before the page is left. */
  signedOut() {
    if (!active()) return;
    logged('pushing the sign-out', () => push({ event: 'signed_out' }));
  },
};

/** Tests only: forget that the tag manager loaded. */
export function resetTagManagerForTests() {
  loaded = false;
  impersonating = false;
  sessionStorage.removeItem(SIGN_IN_MARK);
  document.getElementById(GTM_SCRIPT_ID)?.remove();
  delete (window as DataLayerWindow).dataLayer;
}
