import { AUTH_BASE_PATH } from '@lockstep/contract';
import { adminClient, jwtClient } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/react';

/** better-auth on the same origin; the jwt plugin gives the Bearer token of the REST API. */
export const authClient = createAuthClient({
  baseURL: typeof window === 'undefined' ? 'http://localhost' : window.location.origin,
  basePath: AUTH_BASE_PATH,
  plugins: [adminClient(), jwtClient()],
});

/** Fetches a fresh REST token for the current session; null when signed out. */
export async function fetchRestToken(): Promise<string | null> {
  const res = await fetch(`${AUTH_BASE_PATH}/token`, { credentials: 'include' });
  if (res.status === 401) return null;
  if (!res.ok) throw new Error(`Token request failed with ${res.status}`);
  const body = (await res.json()) as { token?: string };
  return body.token ?? null;
}
