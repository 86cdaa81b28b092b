import type { z } from 'zod';
import { HttpError } from './http-error';
import { findNul, NUL_MESSAGE } from './refuse-nul';

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
  // A \u0000 escape inside the JSON becomes a NUL only here, after the request-wide check.
  const nul = findNul(json);
  if (nul) {
    const field = ['query', name, ...nul].join('.');
    throw new HttpError(
      400,
      `${NUL_MESSAGE} (${field})`,
      `${NUL_MESSAGE}: remove the \\u0000 character from ${field}.`,
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

/**
 * A list's filters from both forms: the typed query parameters (already checked by the route's
 * schema) and the deprecated JSON parameter `name` (checked here against `schema`). A filter given
 * both ways is a 400, so neither silently wins.
 */
export function mergeFilters<T extends z.ZodType>(
  name: string,
  raw: string | undefined,
  typed: Partial<z.infer<T>>,
  schema: T,
  example: string,
): Partial<z.infer<T>> {
  const fromJson = parseJsonQuery(name, raw, schema, example) as Record<string, unknown>;
  const given = Object.fromEntries(Object.entries(typed).filter(([, v]) => v !== undefined));
  const twice = Object.keys(given).filter((key) => fromJson[key] !== undefined);
  if (twice.length) {
    throw new HttpError(
      400,
      `Filter given twice: ${twice.join(', ')}`,
      `Give ${twice.join(', ')} once: as a query parameter or inside ${name}, not both.`,
      'validation',
    );
  }
  return { ...fromJson, ...given } as Partial<z.infer<T>>;
}
