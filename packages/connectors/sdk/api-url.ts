/**
 * The API base URL of a SaaS connection: the app's own unless a `baseUrl` item is honoured — one of
 * the server's sandbox simulators (everywhere), or any http(s) URL on a local or test server.
 * Shared by the ports of the SaaS connectors (Airtable has its own, older copy).
 */
import { ConnectorError } from './connector';

export type ApiUrlSettings = {
  /** Local and test environments: any `baseUrl` item is honoured. */
  allowCustomBaseUrl?: boolean;
  /** The server's own sandbox simulators: their URLs are honoured everywhere. */
  sandboxUrls?: () => string[];
};

export const trimUrl = (url: string) => url.replace(/\/+$/, '');

export function resolveApiUrl(
  app: string,
  defaultUrl: string,
  settings: ApiUrlSettings,
  items: Record<string, string>,
): string {
  const custom = items.baseUrl?.trim();
  if (!custom) return trimUrl(defaultUrl);
  let url: URL;
  try {
    url = new URL(custom);
  } catch {
    throw new ConnectorError(
      'validation',
      `bad ${app} baseUrl ${custom}`,
      `The ${app} address is not a valid URL.`,
    );
  }
  const normalized = trimUrl(url.toString());
  const sandbox = (settings.sandboxUrls?.() ?? []).map(trimUrl);
  if (sandbox.includes(normalized)) return normalized;
  if (items.sandbox === 'true') {
    // The sandbox lives in the server's memory: a restart ends it (and moves its port).
    throw new ConnectorError(
      'auth_invalid',
      `${app} sandbox ${normalized} is gone`,
      `This ${app} sandbox was reset when the server restarted. Connect the ${app} sandbox again.`,
    );
  }
  if (settings.allowCustomBaseUrl && (url.protocol === 'http:' || url.protocol === 'https:'))
    return normalized;
  throw new ConnectorError(
    'permission_denied',
    `custom ${app} baseUrl refused: ${normalized}`,
    `A custom ${app} address is accepted only for sandbox connections or on a local server.`,
  );
}
