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
  if (!res.ok) throw new ApiError(res.status, body);
  return body as T;
}

/** The text to show for any error: the API's user-facing text, or the error's own message. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return userFacingText({ message: error instanceof Error ? error.message : String(error) });
}
