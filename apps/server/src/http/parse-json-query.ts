import type { z } from 'zod';
import { HttpError } from './http-error';

/**
 * Parses a query parameter that carries JSON (the list filters of spec section 2) against a strict
 * schema; bad JSON or unknown keys become a 400 envelope naming the parameter.
 */
export function parseJsonQuery<T extends z.ZodType>(
  name: string,
  raw: string | undefined,
  schema: T,
  example: string,
): z.infer<T> | Record<string, never> {
  if (!raw) return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new HttpError(
      400,
      `${name} is not JSON`,
      `The ${name} must be JSON, for example ${example}.`,
      'validation',
    );
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new HttpError(
      400,
      `Invalid ${name}`,
      parsed.error.issues.map((i) => `${name}${i.path.length ? `.${i.path.join('.')}` : ''}: ${i.message}`),
      'validation',
    );
  }
  return parsed.data;
}
