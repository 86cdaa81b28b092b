import { ErrorEnvelope } from '@lockstep/contract';
import { z } from 'zod';
import { DESCRIPTIONS, EXAMPLES, errorExample, exampleOf, whoMayCall } from './openapi-examples';

/**
 * The served OpenAPI document made into a contract a client can be generated from: every operation
 * gets an operationId, its error answers in the one shared envelope (spec section 3), and schemas
 * are valid OpenAPI 3.0 (`nullable` only beside a `type`). The routes keep declaring only their
 * own success shapes; what every route shares is added here once.
 */

type Schema = Record<string, unknown>;
type Media = { required?: boolean; content?: Record<string, { schema?: unknown; example?: unknown }> };
type Operation = {
  operationId?: string;
  security?: unknown[];
  parameters?: { in?: string; deprecated?: boolean; schema?: { deprecated?: boolean } }[];
  requestBody?: Media;
  responses?: Record<string, unknown>;
  summary?: string;
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

/**
 * `nullable` without a `type` is invalid in OpenAPI 3.0 (an untyped schema already admits null), and
 * a nullable enum must list null among its values.
 */
function dropUntypedNullable(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropUntypedNullable(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  if (schema.nullable === true && schema.type === undefined) delete schema.nullable;
  // OpenAPI 3.0.3: `nullable` does not widen an `enum`; a nullable enum lists null itself.
  if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null))
    schema.enum.push(null);
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

/** The example of a JSON body: the hand-written one over the one made from its schema. */
function withExample(
  media: Media | undefined,
  written: unknown,
  components: Record<string, unknown>,
  request = false,
): void {
  const json = media?.content?.['application/json'];
  if (!json || json.example !== undefined) return;
  const made = exampleOf(json.schema, components, { request });
  const both = [made, written].every((v) => v && typeof v === 'object' && !Array.isArray(v));
  const example = both ? { ...(made as object), ...(written as object) } : (written ?? made);
  if (example !== undefined) json.example = example;
}

const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

export function completeOpenApiDocument(
  doc: Document,
  options: { publicUrl: string; staffOnly?: ReadonlySet<string> },
): Document {
  doc.paths = { ...doc.paths, ...structuredClone(AUTH_PATHS) };
  doc.info = { ...doc.info, description: `${doc.info?.description ?? ''}\n\n${TOKEN_HOW_TO}`.trim() };
  doc.servers = [{ url: options.publicUrl, description: 'This Lockstep server' }];
  doc.components = {
    ...doc.components,
    schemas: {
      ...doc.components?.schemas,
      ErrorEnvelope: {
        ...z.toJSONSchema(ErrorEnvelope, { target: 'openapi-3.0' }),
        example: errorExample('404'),
      },
    },
  };
  const components = (doc.components.schemas ?? {}) as Record<string, unknown>;
  const envelope = (status: string, path: string) => ({
    description: ERROR_TEXT[status],
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/ErrorEnvelope' },
        example: errorExample(status, path),
      },
    },
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
      for (const status of statuses) op.responses[status] ??= envelope(status, path);
      const text = op.description ?? op.summary ?? DESCRIPTIONS[id];
      op.summary ??= DESCRIPTIONS[id];
      if (text) {
        const staff = options.staffOnly?.has(`${method} ${path}`) ?? false;
        op.description = `${sentence(text)} ${whoMayCall(method, { isPublic, staff })}`;
      }
      const written = EXAMPLES[id];
      withExample(op.requestBody, written?.request, components, true);
      for (const [status, answer] of Object.entries(op.responses))
        withExample(answer as Media, status.startsWith('2') ? written?.response : undefined, components);
      // A deprecated query parameter (the JSON filters) says so on the parameter too.
      for (const parameter of op.parameters ?? [])
        if (parameter.schema?.deprecated) parameter.deprecated = true;
    }
  }
  dropUntypedNullable(doc.paths);
  return doc;
}
