import { JSONPath } from 'jsonpath-plus';

/** A JSONPath expression the user gave that cannot be evaluated. */
export class JsonPathError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`The JSONPath "${path}" cannot be used: ${reason}`);
    this.name = 'JsonPathError';
  }
}

/**
 * The values a JSONPath expression selects in a document. Script expressions (filters such as
 * `?(@.x)`) are refused: paths come from users, and the server runs none of their code.
 */
export function evaluatePath(path: string, json: unknown): unknown[] {
  if (!path.trim().startsWith('$')) throw new JsonPathError(path, 'it must start with $');
  try {
    const found = JSONPath({ path, json: json as object, wrap: true, eval: false });
    return Array.isArray(found) ? found : [];
  } catch (error) {
    throw new JsonPathError(path, error instanceof Error ? error.message : String(error));
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JSONPath for a key path from the root: `$.data.items`, `$['odd key']`. */
export function pathOf(keys: string[]): string {
  return `$${keys.map((k) => (IDENTIFIER.test(k) ? `.${k}` : `['${k.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}']`)).join('')}`;
}

/**
 * The records a records path selects: each selected object is a record; a selected array (a path
 * without `[*]`) gives its items; other values become `{ value }`.
 */
export function recordsAt(path: string, json: unknown): Record<string, unknown>[] {
  const found = evaluatePath(path, json);
  const items = found.length === 1 && Array.isArray(found[0]) ? (found[0] as unknown[]) : found;
  return items
    .filter((v) => v !== undefined)
    .map((v) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? (v as Record<string, unknown>)
        : { value: v },
    );
}
