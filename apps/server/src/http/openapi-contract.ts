import { ErrorEnvelope } from '@lockstep/contract';
import { z } from 'zod';

/**
 * The served OpenAPI document made into a contract a client can be generated from: every operation
 * gets an operationId, its error answers in the one shared envelope (spec section 3), and schemas
 * are valid OpenAPI 3.0 (`nullable` only beside a `type`). The routes keep declaring only their
 * own success shapes; what every route shares is added here once.
 */

type Schema = Record<string, unknown>;
type Operation = {
  operationId?: string;
  security?: unknown[];
  parameters?: { in?: string }[];
  responses?: Record<string, unknown>;
  description?: string;
};
type Document = {
  info?: { description?: string };
  servers?: { url: string; description?: string }[];
  components?: { schemas?: Record<string, unknown> };
  paths?: Record<string, Record<string, Operation>>;
};

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

const ERROR_TEXT: Record<string, string> = {
  '400':
    'Bad input: a field, query parameter or id is wrong or not allowed; `response.userFacingMessage` says which.',
  '401': 'No valid token: sign in and send `Authorization: Bearer <token>`.',
  '403': 'Not allowed for this account (staff routes, plan limits).',
  '404': 'Not found, or not yours.',
  '429': 'Too many requests: wait for the seconds in `Retry-After`.',
  '500': 'Something went wrong on the server; nothing was half-written.',
};

export const TOKEN_HOW_TO = [
  'Every `/rest` call needs a bearer token. Sign in with `POST /api/auth/sign-in/email`',
  '(`{"email", "password"}`; the answer sets a session cookie), then `GET /api/auth/token` with that',
  'cookie answers `{"token"}`: a JWT that lasts 5 minutes, to send as `Authorization: Bearer <token>`.',
  'Ask for a new one when it expires; signing out ends it at once. For scripts, create a personal',
  'API token on the /developer page (or `POST /rest/developer/tokens`): it starts with `lst_`, is sent',
  'the same way, lasts until revoked, and a token with only the `read` scope may not write (403).',
  'Errors share one envelope',
  '(`ErrorEnvelope`): `statusCode`, `timestamp`, `path`, `message` and `response.userFacingMessage`,',
  'the text to show a person.',
].join(' ');

const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');

/** `GET /rest/core-bases/{id}/sync-status` -> `getCoreBasesByIdSyncStatus`: stable and unique per route. */
export function operationIdOf(method: string, path: string): string {
  const parts = path
    .replace(/^\/(rest|api)\//, '/')
    .split('/')
    .filter(Boolean)
    .map((p) => (p.startsWith('{') ? `By${pascal(p)}` : pascal(p)));
  return `${method.toLowerCase()}${parts.join('') || 'Root'}`;
}

/** `nullable` without a `type` is invalid in OpenAPI 3.0; an untyped schema already admits null. */
function dropUntypedNullable(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropUntypedNullable(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  if (schema.nullable === true && schema.type === undefined) delete schema.nullable;
  for (const value of Object.values(schema)) dropUntypedNullable(value);
}

const json = (schema: Schema) => ({ content: { 'application/json': { schema } } });
const user = {
  type: 'object',
  required: ['id', 'email', 'name'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string', format: 'email' },
    name: { type: 'string' },
  },
};

/**
 * The account calls a client needs before any /rest call (better-auth's, mounted at /api/auth, not
 * Fastify routes with schemas): sign up, sign in, a bearer token, sign out.
 */
const AUTH_PATHS: Record<string, Record<string, Operation & Schema>> = {
  '/api/auth/sign-up/email': {
    post: {
      tags: ['auth'],
      security: [],
      operationId: 'signUpEmail',
      description:
        'Creates an account. Where email addresses are confirmed, the answer is the same for a new and a taken address (token null) and a link is mailed.',
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['name', 'email', 'password'],
          properties: {
            name: { type: 'string' },
            email: { type: 'string', format: 'email' },
            password: { type: 'string', minLength: 8, maxLength: 128 },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Signed up (and in, unless the address must be confirmed first)',
          ...json({
            type: 'object',
            required: ['token', 'user'],
            properties: { token: { type: 'string', nullable: true }, user },
          }),
        },
      },
    },
  },
  '/api/auth/sign-in/email': {
    post: {
      tags: ['auth'],
      security: [],
      operationId: 'signInEmail',
      description: 'Signs in; the answer sets the session cookie that GET /api/auth/token needs.',
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['email', 'password'],
          properties: { email: { type: 'string', format: 'email' }, password: { type: 'string' } },
        }),
      },
      responses: {
        '200': {
          description: 'Signed in',
          ...json({
            type: 'object',
            required: ['token', 'user'],
            properties: { token: { type: 'string', nullable: true }, user },
          }),
        },
      },
    },
  },
  '/api/auth/token': {
    get: {
      tags: ['auth'],
      security: [],
      operationId: 'issueBearerToken',
      description: 'With the session cookie: a JWT for the REST API, valid 5 minutes.',
      responses: {
        '200': {
          description: 'A bearer token',
          ...json({ type: 'object', required: ['token'], properties: { token: { type: 'string' } } }),
        },
      },
    },
  },
  '/api/auth/sign-out': {
    post: {
      tags: ['auth'],
      security: [],
      operationId: 'signOut',
      description: 'Ends the session; its bearer tokens stop working at once.',
      responses: {
        '200': {
          description: 'Signed out',
          ...json({ type: 'object', required: ['success'], properties: { success: { type: 'boolean' } } }),
        },
      },
    },
  },
};

export function completeOpenApiDocument(doc: Document, options: { publicUrl: string }): Document {
  doc.paths = { ...doc.paths, ...structuredClone(AUTH_PATHS) };
  doc.info = { ...doc.info, description: `${doc.info?.description ?? ''}\n\n${TOKEN_HOW_TO}`.trim() };
  doc.servers = [{ url: options.publicUrl, description: 'This Lockstep server' }];
  doc.components = {
    ...doc.components,
    schemas: {
      ...doc.components?.schemas,
      ErrorEnvelope: z.toJSONSchema(ErrorEnvelope, { target: 'openapi-3.0' }),
    },
  };
  const envelope = (status: string) => ({
    description: ERROR_TEXT[status],
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
  });
  const seen = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      let id = op.operationId ?? operationIdOf(method, path);
      for (let n = 2; seen.has(id); n++) id = `${operationIdOf(method, path)}${n}`;
      seen.add(id);
      op.operationId = id;
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      const hasPathId = (op.parameters ?? []).some((p) => p.in === 'path');
      const statuses = isPublic
        ? ['400', '429', '500']
        : ['400', '401', '403', ...(hasPathId ? ['404'] : []), '429', '500'];
      op.responses = { ...op.responses };
      for (const status of statuses) op.responses[status] ??= envelope(status);
    }
  }
  dropUntypedNullable(doc.paths);
  return doc;
}
