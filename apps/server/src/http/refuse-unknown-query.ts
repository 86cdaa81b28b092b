import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './http-error';

/** The names a route's querystring schema takes (zod objects carry `shape`); none when it has no schema. */
function knownNames(schema: unknown): Set<string> {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return new Set(shape ? Object.keys(shape) : []);
}

/**
 * Refuses query parameters a route does not take, as unknown body fields are refused: a misspelt
 * `?filter=` silently ignored would answer with everything instead of what was asked for.
 */
export async function refuseUnknownQuery(request: FastifyRequest, _reply: FastifyReply) {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query || typeof query !== 'object') return;
  const known = knownNames(request.routeOptions.schema?.querystring);
  const unknown = Object.keys(query).filter((name) => !known.has(name));
  if (unknown.length === 0) return;
  const names = unknown.map((n) => `"${n}"`).join(', ');
  throw new HttpError(
    400,
    `Unknown query parameter${unknown.length > 1 ? 's' : ''}: ${names}`,
    known.size > 0
      ? `This call does not take ${names}. It takes: ${[...known].join(', ')}.`
      : `This call takes no query parameters; remove ${names}.`,
    'validation',
  );
}
