/** Only same-site paths are followed after sign-in, so redirect_url cannot send a user elsewhere. */
export function safeRedirect(raw: string | null, fallback = '/syncs'): string {
  if (!raw?.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return fallback;
  return raw;
}
