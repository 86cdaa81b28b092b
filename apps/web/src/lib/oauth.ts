import type { ExternalConnection } from '@lockstep/contract';
import { api } from './api';

/** An OAuth sign-in waiting for its answer: the PKCE verifier never leaves this browser tab. */
type Pending = { connectorType: string; state: string; codeVerifier: string; redirectUri: string };
const PENDING_KEY = 'lockstep.oauth.pending';

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** RFC 7636: a random verifier and its S256 challenge. */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

export type OAuthAnswer = {
  state: string | null;
  code: string | null;
  error: string | null;
  errorDescription: string | null;
};

export function readOAuthAnswer(search: string): OAuthAnswer {
  const p = new URLSearchParams(search);
  return {
    state: p.get('state'),
    code: p.get('code'),
    error: p.get('error'),
    errorDescription: p.get('error_description'),
  };
}

/** Exchanges the answer for a connection on the server (code + verifier; the secret stays there). */
export async function finishOAuth(answer: OAuthAnswer, connectionItems: Record<string, string> = {}) {
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as Pending | null;
  if (!pending || pending.state !== answer.state)
    throw new Error('This sign-in was not started here, or it expired. Please try again.');
  sessionStorage.removeItem(PENDING_KEY);
  return api<ExternalConnection>(
    `/rest/external-connections/oauth/${pending.connectorType}/authorize-callback`,
    {
      method: 'POST',
      body: {
        connectionItems,
        redirectUri: pending.redirectUri,
        ...(answer.error
          ? {
              error: answer.error,
              ...(answer.errorDescription ? { errorDescription: answer.errorDescription } : {}),
            }
          : { code: answer.code, codeVerifier: pending.codeVerifier }),
      },
    },
  );
}

/**
 * Signs in to an app in a popup (authorization code with PKCE): the server builds the app's
 * authorize URL, the popup comes back to /oauth/{type}/callback, which hands the answer to this
 * window; the code is exchanged on the server. Resolves with the new connection.
 */
export async function signInWithPopup(connectorType: string): Promise<ExternalConnection> {
  const { verifier, challenge } = await pkcePair();
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const redirectUri = `${window.location.origin}/oauth/${connectorType}/callback`;
  const { url } = await api<{ url: string }>(
    `/rest/external-connections/oauth/${connectorType}/authorize-url`,
    {
      method: 'POST',
      body: { codeChallenge: challenge, state, redirectUri },
    },
  );
  const pending: Pending = { connectorType, state, codeVerifier: verifier, redirectUri };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const popup = window.open(url, 'lockstep-oauth', 'width=560,height=720');
  if (!popup) throw new Error('The sign-in window was blocked. Allow pop-ups for this site and try again.');
  return new Promise((resolve, reject) => {
    const closed = setInterval(() => {
      if (popup.closed) {
        cleanup();
        reject(new Error('The sign-in window was closed before it finished.'));
      }
    }, 500);
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== window.location.origin || event.data?.type !== 'lockstep-oauth') return;
      cleanup();
      finishOAuth(event.data.answer as OAuthAnswer).then(resolve, reject);
    };
    const cleanup = () => {
      clearInterval(closed);
      window.removeEventListener('message', onMessage);
    };
    window.addEventListener('message', onMessage);
  });
}
