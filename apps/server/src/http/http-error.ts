/**
 * An error meant for the user: it becomes the spec's envelope with this status, message and
 * user-facing text. Throw it from any route; anything else becomes a 500 with a generic text.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly userFacingMessage: string | string[] = message,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const notFound = (what: string) =>
  new HttpError(404, `${what} not found`, `${what} was not found.`, 'not_found');
export const forbidden = (message = 'This needs the staff role.') =>
  new HttpError(403, message, message, 'forbidden');
export const unauthorized = (message = 'Sign in to continue.') =>
  new HttpError(401, message, message, 'unauthorized');
