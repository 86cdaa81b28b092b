import type { ErrorEnvelope } from '@lockstep/contract';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { TooManyRequests } from './auth-rate-limit';
import { HttpError } from './http-error';

export function envelope(
  statusCode: number,
  path: string,
  message: string,
  userFacingMessage?: string | string[],
  code?: string,
): ErrorEnvelope {
  return {
    statusCode,
    timestamp: new Date().toISOString(),
    path,
    message,
    response: {
      ...(userFacingMessage === undefined ? {} : { userFacingMessage }),
      ...(code ? { code } : {}),
    },
  };
}

/** Fastify's own client errors (bad JSON, body too large, wrong content type) with a text a user can act on. */
const FASTIFY_CLIENT_ERRORS: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON.',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty but JSON was declared.',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is too large.',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'This content type is not supported; send application/json.',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'The request body does not match its Content-Length.',
};

/** Maps every error to the envelope of spec section 3; only 5xx are logged as errors. */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0] ?? request.url;
  if (error instanceof HttpError) {
    if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfterSeconds));
    return reply
      .status(error.statusCode)
      .send(envelope(error.statusCode, path, error.message, error.userFacingMessage, error.code));
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const lines = error.validation.map((v) => {
      const field = v.instancePath.split('/').filter(Boolean).join('.');
      const where = [error.validationContext ?? 'request', field].filter(Boolean).join('.');
      return `${where}: ${v.message}`;
    });
    return reply.status(400).send(envelope(400, path, 'Validation failed', lines, 'validation'));
  }
  if (isResponseSerializationError(error)) {
    request.log.error({ err: error }, 'response did not match its schema');
    return reply
      .status(500)
      .send(envelope(500, path, 'Internal server error', 'Something went wrong on our side.', 'internal'));
  }
  const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
  if (known || (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)) {
    const status = error.statusCode ?? 400;
    return reply
      .status(status)
      .send(envelope(status, path, error.message, known ?? error.message, 'bad_request'));
  }
  request.log.error({ err: error }, 'unexpected error');
  return reply
    .status(500)
    .send(envelope(500, path, 'Internal server error', 'Something went wrong on our side.', 'internal'));
}

/** The path as the envelope shows it; a path of thousands of characters is not sent back whole. */
function shownPath(url: string): string {
  const path = url.split('?')[0] ?? url;
  return path.length > 200 ? `${path.slice(0, 200)}...` : path;
}

/**
 * Errors Fastify raises before a route is found (its `frameworkErrors`), which would otherwise leave
 * in Fastify's own body: a path parameter longer than the router takes (414), a path that is not
 * valid percent-encoding (400).
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const path = shownPath(request.url);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return reply
      .status(414)
      .send(
        envelope(
          414,
          path,
          'A path parameter is too long',
          'This address is too long: an id in it has more characters than any id can have.',
          'uri_too_long',
        ),
      );
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return reply
      .status(400)
      .send(
        envelope(
          400,
          path,
          'The path is not a valid URL',
          'This address is not valid: it has a malformed %-encoded character.',
          'bad_request',
        ),
      );
  }
  return handleError(error, request, reply);
}
