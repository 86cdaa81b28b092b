import posthog from 'posthog-js';

/**
 * Product analytics through PostHog (spec sections 4, 6, 8 and 9):
 * - they run only in staging and production, and only when the server has a PostHog key;
 * - a user is identified (id, email, plan) except while staff impersonate them: then nothing is
 *   captured at all, so the staff member's clicks never count as the user's;
 * - session recording masks every input (passwords and emails included) and email addresses in text;
 * - sign-in is tracked, sign-out is recorded and then the analytics identity is reset;
 * - a failed start or tracking call is logged to the console only, never breaking the page.
 */
export type AnalyticsEnvironment = 'local' | 'test' | 'staging' | 'production';
export type AnalyticsSettings = {
  environment: AnalyticsEnvironment;
  analytics: { posthogKey: string; posthogHost: string } | null;
};
export type AnalyticsUser = { id: string; email: string; plan: string };

/** Any text that looks like an email address. */
const EMAIL = /[^\s@<>()[\]"',;:]+@[^\s@<>()[\]"',;:]+\.[^\s@<>()[\]"',;:]+/g;

/** Replaces the email addresses in recorded text with asterisks of the same length; other text stays. */
export function maskEmails(text: string): string {
  return text.replace(EMAIL, (match) => '*'.repeat(match.length));
}

/** Where a pending sign-in waits for the user to be known, so the event is theirs. */
const SIGN_IN_MARK = 'lockstep.analytics.signedIn';

let started = false;
/** Staff act as this user: nothing is captured until the page is left. */
let impersonating = false;

function logged(what: string, call: () => void) {
  try {
    call();
  } catch (error) {
    // Spec section 8: failed tracking calls and a failed analytics start are logged only.
    console.error(`Analytics: ${what} failed`, error);
  }
}

const active = () => started && !impersonating;

export const analytics = {
  /** Starts PostHog once, when this environment has analytics; answers whether it runs. */
  start(settings: AnalyticsSettings): boolean {
    if (started) return true;
    const { environment, analytics: keys } = settings;
    if (environment !== 'staging' && environment !== 'production') return false;
    if (!keys?.posthogKey) return false;
    logged('start', () => {
      posthog.init(keys.posthogKey, {
        api_host: keys.posthogHost,
        // Anonymous visitors (the sign-in page) do not become people until identified.
        person_profiles: 'identified_only',
        capture_pageview: 'history_change',
        // Query strings can carry emails or tokens: PostHog masks the personal ones it knows.
        mask_personal_data_properties: true,
        disable_session_recording: false,
        session_recording: {
          maskAllInputs: true,
          // maskAllInputs covers every type; naming these two keeps them masked whatever else changes.
          maskInputOptions: { password: true, email: true },
          // Every text node goes through maskEmails, which hides email addresses and keeps the rest.
          maskTextSelector: '*',
          maskTextFn: maskEmails,
        },
      });
      started = true;
    });
    return started;
  },

  /**
   * The signed-in user: identified with id, email and plan, and a pending sign-in is tracked as
   * theirs. While impersonating, capturing stops instead and no one is identified.
   */
  setUser(user: AnalyticsUser, isImpersonating: boolean) {
    if (isImpersonating) {
      impersonating = true;
      if (started)
        logged('stopping capture while impersonating', () => {
          posthog.opt_out_capturing();
          posthog.stopSessionRecording();
        });
      return;
    }
    if (!active()) return;
    logged('identify', () => posthog.identify(user.id, { email: user.email, plan: user.plan }));
    if (sessionStorage.getItem(SIGN_IN_MARK) !== null) {
      const method = sessionStorage.getItem(SIGN_IN_MARK) || 'email';
      sessionStorage.removeItem(SIGN_IN_MARK);
      analytics.track('signed_in', { method });
    }
  },

  /** Called when a sign-in succeeded; the event is sent once the user is known (setUser). */
  signedIn(method = 'email') {
    logged('tracking the sign-in', () => sessionStorage.setItem(SIGN_IN_MARK, method));
  },

  track(event: string, properties?: Record<string, unknown>) {
    if (!active()) return;
    logged(`tracking ${event}`, () => posthog.capture(event, properties));
  },

  /** Sign-out: the event is sent at once (the page is left next), then the identity is forgotten. */
  signedOut() {
    if (!active()) return;
    logged('tracking the sign-out', () =>
      posthog.capture('signed_out', undefined, { send_instantly: true, transport: 'sendBeacon' }),
    );
    logged('reset', () => posthog.reset());
  },
};

/** Tests only: forget that analytics started. */
export function resetAnalyticsForTests() {
  started = false;
  impersonating = false;
  sessionStorage.removeItem(SIGN_IN_MARK);
}
