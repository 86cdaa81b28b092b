/**
 * Descriptions and examples of the served OpenAPI document. Every operation gets a description
 * (what it does, from its summary or DESCRIPTIONS, and who may call it) and an example for its JSON
 * request body and its 2xx JSON answer: the hand-written one of EXAMPLES where there is one, else
 * one made from the schema (formats, enums, bounds and property names give it plausible values).
 * openapi-contract.integration.test.ts checks that every one is there and matches its schema.
 */

type Schema = Record<string, unknown>;

/** Descriptions of the operations whose route declares no summary, keyed by operationId. */
export const DESCRIPTIONS: Record<string, string> = {
  getConfig:
    "The web app's public settings: environment, support address, sign-in providers, analytics and chat keys",
  signUpEmail: 'Create an account with email and password',
  signInEmail: 'Sign in with email and password',
  issueBearerToken: 'A bearer token for the REST API, from the session cookie',
  signOut: 'Sign out, ending the session',
};

const ID = '3f1c2b4e-8a6d-4c1e-9b7a-2d5e6f708192';
const OTHER_ID = '9b2e4d6f-1a3c-4e5b-8d7f-0a1b2c3d4e5f';
const AT = '2026-11-27T09:30:00.000Z';

const coreBase = {
  id: ID,
  name: 'CRM contacts <-> newsletter',
  syncState: 'on',
};

/**
 * Hand-written examples of the operations a client meets first, keyed by operationId. Each must
 * still match its schema (the test checks); where a schema asks for more fields, the generated
 * example is used underneath (shallowly merged).
 */
export const EXAMPLES: Record<string, { request?: unknown; response?: Record<string, unknown> }> = {
  postCoreBases: {
    request: { name: 'CRM contacts <-> newsletter' },
    response: { ...coreBase, syncState: 'off' },
  },
  patchCoreBasesById: { request: { name: 'CRM contacts <-> newsletter', pinned: true }, response: coreBase },
  getCoreBasesById: { response: coreBase },
  signInEmail: {
    request: { email: 'ada@example.com', password: 'correct horse battery staple' },
    response: {
      token: 'pG8xQ2vN7sK1mR4tY6wZ9aB3cD5eF0hJ',
      user: { id: 'Yx3kP9qL2mN8vB4cR7tW', email: 'ada@example.com', name: 'Ada Lovelace' },
    },
  },
  signUpEmail: {
    request: { name: 'Ada Lovelace', email: 'ada@example.com', password: 'correct horse battery staple' },
    response: {
      token: null,
      user: { id: 'Yx3kP9qL2mN8vB4cR7tW', email: 'ada@example.com', name: 'Ada Lovelace' },
    },
  },
  issueBearerToken: {
    response: { token: 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJZeDNrUDlxTDJtTjh2QjRjUjd0VyJ9.c2lnbmF0dXJl' },
  },
  signOut: { response: { success: true } },
};

/** An example of the error envelope (spec section 3), per status. */
export function errorExample(status: string, path = '/rest/core-bases/3f1c2b4e-8a6d-4c1e-9b7a-2d5e6f708192') {
  // The texts the server sends (http-error.ts, auth-rate-limit.ts, error-envelope.ts).
  const texts: Record<string, [string, string, string]> = {
    '400': ['Validation failed', 'querystring.take: Too big: expected number to be <=200', 'validation'],
    '401': ['Sign in to continue.', 'Sign in to continue.', 'unauthorized'],
    '403': ['This needs the staff role.', 'This needs the staff role.', 'forbidden'],
    '404': ['Sync not found', 'Sync was not found.', 'not_found'],
    '429': [
      'Too many sign-in attempts',
      'Too many sign-in attempts. Wait 30 seconds and try again.',
      'rate_limited',
    ],
    '500': ['Internal server error', 'Something went wrong on our side.', 'internal'],
  };
  const [message, userFacingMessage, code] = texts[status] ?? texts['400'] ?? ['', '', ''];
  return {
    statusCode: Number(status),
    timestamp: AT,
    path,
    message,
    response: { userFacingMessage: status === '400' ? [userFacingMessage] : userFacingMessage, code },
  };
}

/** Who may call an operation, as one sentence. */
export function whoMayCall(method: string, options: { isPublic: boolean; staff: boolean }): string {
  if (options.isPublic) return 'Anyone may call it, without a token.';
  if (options.staff) return 'Only staff may call it; other accounts get 403.';
  return method === 'get'
    ? 'Any signed-in user may call it (session JWT or personal API token), for their own syncs and data.'
    : 'Any signed-in user may call it (session JWT, or an API token with the write scope), for their own syncs and data.';
}

/** Plausible strings by property name, for names whose value has no format to go by. */
const STRING_BY_NAME: Record<string, string> = {
  name: 'Contacts',
  message: 'Field "email" is required',
  userFacingMessage: 'Field "email" is required',
  description: 'Contacts of the CRM',
  code: 'validation',
  token: 'lst_4fJ8kQ2mX9pR7sT1vW3yZ5bC',
  url: 'https://example.com/webhook',
  email: 'ada@example.com',
  remoteId: 'rec_0001',
  label: 'Active',
  title: 'Contacts',
  path: '/rest/core-bases',
  method: 'GET',
  type: 'postgresql',
  timeZone: 'Europe/Berlin',
};

/** Examples for the few patterns that have no format. */
const STRING_BY_PATTERN: Record<string, string> = {
  '^[A-Za-z0-9_-]{43}$': 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$": 'X-Api-Key',
};

/** A uuid (version 4 layout) made from the property name: the same name, the same id, in every example. */
function uuidFor(name: string): string {
  if (name === 'id' || name === '') return OTHER_ID;
  let hex = '';
  for (let i = 0; hex.length < 32; i++) {
    let h = 2166136261 ^ i;
    for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    hex += (h >>> 0).toString(16).padStart(8, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const STRING_BY_FORMAT: Record<string, string> = {
  'date-time': AT,
  date: '2026-11-27',
  email: 'ada@example.com',
  uri: 'https://example.com/',
};

/**
 * An example value for a JSON schema of the document (OpenAPI 3.0), or undefined where it cannot
 * make one (the test then names the operation).
 */
export function exampleOf(
  schema: unknown,
  components: Record<string, unknown>,
  options: { request?: boolean } = {},
  name = '',
  depth = 0,
): unknown {
  if (!schema || typeof schema !== 'object' || depth > 12) return undefined;
  const s = schema as Schema;
  const inner = (child: unknown, key = name) => exampleOf(child, components, options, key, depth + 1);
  if (typeof s.$ref === 'string') return inner(components[s.$ref.replace('#/components/schemas/', '')]);
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null) ?? s.enum[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined && s.default !== null) return s.default;
  const choices = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(choices)) {
    for (const choice of choices) {
      const value = inner(choice);
      if (value !== undefined && value !== null) return value;
    }
    return s.nullable ? null : undefined;
  }
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map((part) => inner(part));
    return parts.every((p) => p && typeof p === 'object') ? Object.assign({}, ...parts) : parts[0];
  }
  switch (s.type) {
    case 'string':
      return stringExample(s, name);
    case 'integer':
    case 'number': {
      const min =
        typeof s.minimum === 'number'
          ? s.minimum
          : typeof s.exclusiveMinimum === 'number'
            ? s.exclusiveMinimum + 1
            : 1;
      const max = typeof s.maximum === 'number' ? s.maximum : Number.POSITIVE_INFINITY;
      return Math.min(Math.max(min, name === 'take' ? 50 : name === 'skip' ? 0 : 1), max);
    }
    case 'boolean':
      return false;
    case 'array': {
      const item = inner(s.items);
      if (item === undefined) return typeof s.minItems === 'number' && s.minItems > 0 ? undefined : [];
      return Array.from({ length: Math.max(1, Number(s.minItems ?? 1)) }, () => item);
    }
    case 'object':
    case undefined: {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      if (!s.properties && !s.additionalProperties && s.type !== 'object') return s.nullable ? null : {};
      const out: Record<string, unknown> = {};
      // A record with known keys (z.record over an enum) requires each of them.
      if (s.additionalProperties && typeof s.additionalProperties === 'object' && Array.isArray(s.required))
        for (const key of s.required as string[])
          if (!(key in properties)) out[key] = inner(s.additionalProperties, key);
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      for (const [key, value] of Object.entries(properties)) {
        // A request example sends what is needed; an answer shows every field it may carry.
        if (options.request && !required.has(key)) continue;
        const example = inner(value, key);
        if (example === undefined) {
          if (required.has(key)) return undefined;
          continue;
        }
        out[key] = example;
      }
      return out;
    }
    default:
      return undefined;
  }
}

function stringExample(s: Schema, name: string): string | undefined {
  let value: string | undefined;
  if (s.format === 'uuid') value = uuidFor(name);
  else if (typeof s.format === 'string') value = STRING_BY_FORMAT[s.format];
  else if (typeof s.pattern === 'string') value = STRING_BY_PATTERN[s.pattern];
  else if (name === 'id' || /Id$/.test(name)) value = 'a1b2c3d4';
  else if (/At$|Time$|On$/.test(name)) value = AT;
  else value = STRING_BY_NAME[name] ?? (name ? `example ${name}` : 'example');
  if (value === undefined) return undefined;
  if (typeof s.pattern === 'string' && !new RegExp(s.pattern).test(value)) return undefined;
  const min = Number(s.minLength ?? 0);
  const max = Number(s.maxLength ?? Number.POSITIVE_INFINITY);
  if (value.length < min) value = value.padEnd(min, 'x');
  if (value.length > max) value = value.slice(0, max);
  return value;
}
