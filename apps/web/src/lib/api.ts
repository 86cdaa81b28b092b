import { userFacingText } from '@lockstep/contract';

/** An error answer of the API, carrying the text a user should see (spec section 8). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(userFacingText(body));
    this.name = 'ApiError';
  }
}

/** One failed API call, kept for the developer toolbox's debug bundle (no bodies, no tokens). */
export type RecentApiError = { at: string; method: string; path: string; status: number; message: string };
const RECENT_ERRORS_KEPT = 20;
const recentErrors: RecentApiError[] = [];

/** The last failed API calls of this page, oldest first. */
export function recentApiErrors(): RecentApiError[] {
  return [...recentErrors];
}

function remember(error: RecentApiError) {
  recentErrors.push(error);
  if (recentErrors.length > RECENT_ERRORS_KEPT) recentErrors.shift();
}

let currentToken: string | null = null;
export function setApiToken(token: string | null) {
  currentToken = token;
}

/** Calls the REST API with the current Bearer token; non-2xx answers throw an ApiError. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (currentToken) headers.authorization = `Bearer ${currentToken}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!res.ok) {
    const error = new ApiError(res.status, body);
    remember({
      at: new Date().toISOString(),
      method: init.method ?? 'GET',
      // The query can carry search terms: the path alone says which call failed.
      path: path.split('?')[0] ?? path,
      status: res.status,
      message: error.message,
    });
    throw error;
  }
  return body as T;
}

/** The text to show for any error: the API's user-facing text, or the error's own message. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return userFacingText({ message: error instanceof Error ? error.message : String(error) });
}
