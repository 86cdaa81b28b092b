import { TOKEN_REFRESH_MS } from '@lockstep/contract';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { analytics } from './analytics';
import { setApiToken } from './api';
import { authClient, fetchRestToken } from './auth-client';
import { shutdownSupportChat } from './support-chat';
import { tagManager } from './tag-manager';

type SessionState = {
  /** better-auth finished reading the session cookie. */
  checked: boolean;
  signedIn: boolean;
  /** The first REST token has arrived: signed-in pages may render. */
  tokenReady: boolean;
  userId: string | null;
  signOut: () => Promise<void>;
};

const SessionContext = createContext<SessionState | null>(null);

/** Holds the session and keeps a fresh REST token, refreshed every 10 s (spec sections 4 and 9). */
export function SessionProvider({ children }: { children: ReactNode }) {
  const session = authClient.useSession();
  const userId = session.data?.user.id ?? null;
  const [tokenReady, setTokenReady] = useState(false);

  useEffect(() => {
    if (!userId) {
      setApiToken(null);
      setTokenReady(false);
      return;
    }
    let cancelled = false;
    const refresh = async () => {
      try {
        const token = await fetchRestToken();
        if (cancelled) return;
        setApiToken(token);
        setTokenReady(token !== null);
      } catch (error) {
        // Spec section 8: a token fetch failure is logged only.
        console.error('Could not refresh the API token', error);
      }
    };
    void refresh();
    const timer = setInterval(refresh, TOKEN_REFRESH_MS);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [userId]);

  const signOut = useCallback(async () => {
    // Spec section 4: record the sign-out, reset analytics, then sign out and go to /sign-in.
    analytics.signedOut();
    tagManager.signedOut();
    shutdownSupportChat();
    try {
      await authClient.signOut();
    } catch (error) {
      // Spec section 8: a sign-out failure is logged only.
      console.error('Sign-out failed', error);
    }
    setApiToken(null);
    window.location.assign('/sign-in');
  }, []);

  return (
    <SessionContext.Provider
      value={{ checked: !session.isPending, signedIn: userId !== null, tokenReady, userId, signOut }}
    >
      {children}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionState {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
