import { HttpError } from '../../http/http-error';
import { JsonPathError } from './json-path';
import { ApiRequestError } from './outbound';

/** What went wrong, for the user. */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiRequestError || error instanceof HttpError)
    return [error.userFacingMessage].flat().join(' ');
  if (error instanceof JsonPathError) return error.message;
  const text = (error as { userFacingMessage?: unknown }).userFacingMessage;
  if (typeof text === 'string') return text;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A failed call to the user's API as an answer in the envelope: refused addresses 403, a bad path
 * 400, a timeout 504, anything else the API did 502 (the fault is upstream, not Lockstep's).
 */
export function asHttpError(error: unknown): unknown {
  if (error instanceof JsonPathError) return new HttpError(400, error.message, error.message, 'validation');
  if (!(error instanceof ApiRequestError)) return error;
  const status = error.kind === 'refused' ? 403 : error.kind === 'timeout' ? 504 : 502;
  const code = error.kind === 'refused' ? 'permission_denied' : `api_${error.kind}`;
  return new HttpError(status, error.message, error.userFacingMessage, code);
}
