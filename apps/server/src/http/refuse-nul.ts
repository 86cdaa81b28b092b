import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './http-error';

export const NUL_MESSAGE = 'Text may not contain NUL characters';

/** Where in `value` a string (or an object key) holds a NUL character, as `a.b.0`; null when none does. */
export function findNul(value: unknown, at: string[] = [], depth = 0): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? at : null;
  // Deeper than any request body of this API: not walked further (nor a stack to exhaust).
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...at, String(i)], depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...at, key.replaceAll('\u0000', '\\u0000')];
    const found = findNul(inner, [...at, key], depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * Refuses a request with a NUL character in any text of its body, query or path parameters, before
 * validation: PostgreSQL cannot store NUL in text, so it reached the database and answered 500.
 * A body kept as the raw string (webhooks, signed over their exact bytes) is left to its route.
 */
export async function refuseNul(request: FastifyRequest, _reply: FastifyReply) {
  const parts: [string, unknown][] = [
    ['params', request.params],
    ['query', request.query],
    ['body', typeof request.body === 'string' ? undefined : request.body],
  ];
  for (const [where, value] of parts) {
    const found = findNul(value);
    if (found) {
      const field = [where, ...found].join('.');
      throw new HttpError(
        400,
        `${NUL_MESSAGE} (${field})`,
        `${NUL_MESSAGE}: remove the \\u0000 character from ${field}.`,
        'validation',
      );
    }
  }
}
