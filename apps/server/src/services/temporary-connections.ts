import { randomUUID } from 'node:crypto';
import type { ConnectorType } from '@lockstep/contract';
import { HttpError } from '../http/http-error';
import type { SecretBox } from './secret-box';

/** How long a connection made before sign-in waits to be claimed. */
export const TEMPORARY_CONNECTION_TTL_MS = 60 * 60_000;
const PREFIX = 'ltc1.';

/**
 * A connection made before sign-in lives only in its token: the credentials, the email it is for,
 * an id and an expiry, sealed with the server's key (AES-256-GCM, so it can be neither read nor
 * altered by the client). Claiming stores it under the signed-in user with that email; the id
 * becomes the connection's id, so a second claim of the same token finds the first.
 */
export type TemporaryConnectionPayload = {
  kind: 'temporary-connection';
  id: string;
  email: string;
  type: ConnectorType;
  items: Record<string, string>;
  name: string | null;
  accountEmail: string | null;
  expiresAt: number;
};

export function sealTemporaryConnection(
  box: SecretBox,
  input: Omit<TemporaryConnectionPayload, 'kind' | 'id' | 'expiresAt'>,
  now = Date.now(),
): { token: string; payload: TemporaryConnectionPayload } {
  const payload: TemporaryConnectionPayload = {
    kind: 'temporary-connection',
    id: randomUUID(),
    ...input,
    email: input.email.toLowerCase(),
    expiresAt: now + TEMPORARY_CONNECTION_TTL_MS,
  };
  return { token: `${PREFIX}${box.seal(payload)}`, payload };
}

const invalid = () =>
  new HttpError(
    400,
    'Invalid temporary connection token',
    'This connection link is not valid. Connect the app again.',
    'validation',
  );

export function openTemporaryConnection(
  box: SecretBox,
  token: string,
  now = Date.now(),
): TemporaryConnectionPayload {
  if (!token.startsWith(PREFIX)) throw invalid();
  let payload: TemporaryConnectionPayload;
  try {
    payload = box.open<TemporaryConnectionPayload>(token.slice(PREFIX.length));
  } catch {
    throw invalid();
  }
  if (payload?.kind !== 'temporary-connection' || typeof payload.id !== 'string') throw invalid();
  if (now >= payload.expiresAt) {
    throw new HttpError(
      410,
      'Temporary connection expired',
      'This connection has expired. Connect the app again.',
      'expired',
    );
  }
  return payload;
}
