import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import { registerRestRoutes } from '../routes/index';
import { createCheckout } from '../routes/payment/create-checkout';
import { openBillingPortal } from '../routes/payment/open-portal';
import { receiveAffinityWebhook } from '../routes/webhooks/receive-affinity-webhook';
import { receiveAirtableWebhook } from '../routes/webhooks/receive-airtable-webhook';
import { receiveAttioWebhook } from '../routes/webhooks/receive-attio-webhook';
import { receiveHubSpotWebhook } from '../routes/webhooks/receive-hubspot-webhook';
import { receiveMemberstackWebhook } from '../routes/webhooks/receive-memberstack-webhook';
import { receiveNotionWebhook } from '../routes/webhooks/receive-notion-webhook';
import { receivePipedriveWebhook } from '../routes/webhooks/receive-pipedrive-webhook';
import { receiveStripeBillingWebhook } from '../routes/webhooks/receive-stripe-billing-webhook';
import { receiveStripeWebhook } from '../routes/webhooks/receive-stripe-webhook';
import { receiveWebflowWebhook } from '../routes/webhooks/receive-webflow-webhook';
import { bearerGuard } from './bearer-guard';
import type { AppContext } from './context';
import { envelope, handleError, handleFrameworkError } from './error-envelope';
import { mountAuth } from './mount-auth';
import { completeOpenApiDocument } from './openapi-contract';
import { refuseNul } from './refuse-nul';
import { refuseUnknownQuery } from './refuse-unknown-query';
import { analyticsHost, registerSecurityHeaders, tagManagerRuns } from './security-headers';

const API_PREFIXES = ['/rest', '/api', '/health', '/webhooks', '/payment'];

/** The HTTP server: public routes, better-auth, /rest behind the Bearer guard, OpenAPI, and the web app. */
export async function buildApp(ctx: AppContext, options: { logStream?: { write(line: string): void } } = {}) {
  const app = Fastify({
    logger: { level: ctx.config.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) },
    // Fastify's own two lines a request (about 550 bytes at info) filled the disk under load: one
    // line a request at debug instead (logRequests below), and 5xx still logged as errors.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // request.ip is the socket's address unless LOCKSTEP_TRUST_PROXY names the proxies to believe
    // (rate limits key on it: a client must not choose its own address with X-Forwarded-For).
    trustProxy:
      typeof ctx.config.trustProxy === 'number' ? hopsTrusted(ctx.config.trustProxy) : ctx.config.trustProxy,
    // Unknown query fields are refused by strict schemas; keep the query parser strict too.
    routerOptions: { ignoreTrailingSlash: true },
    // A path parameter over the router's 100 characters (414) or a malformed path (400): the envelope.
    frameworkErrors: handleFrameworkError,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  // PostgreSQL refuses NUL in text: refused for every route here, with a 400, before it gets there.
  app.addHook('preValidation', refuseNul);
  app.decorateRequest('principal', null);
  app.addHook('onResponse', logRequest);

  await registerSecurityHeaders(app, {
    publicUrl: ctx.config.publicUrl,
    tagManager: tagManagerRuns(ctx.config),
    posthogHost: analyticsHost(ctx.config),
    supportChat: ctx.config.supportChat,
  });
  const staffOnly = new Set<string>();
  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'Lockstep REST API',
        version: '0.1.0',
        description: 'Two-way data sync. Errors use one envelope.',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A session JWT (GET /api/auth/token) or a personal API token (lst_..., /developer).',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: (input) => {
      // Routes only staff may call (config.staff) say so in their description.
      if (input.route.config?.staff === true)
        for (const method of [input.route.method].flat())
          staffOnly.add(`${method.toLowerCase()} ${input.url.replace(/:(\w+)/g, '{$1}')}`);
      return jsonSchemaTransform(input);
    },
    // Operation ids, the shared error envelope, servers, how to get a token, descriptions and
    // examples (openapi-contract.ts, openapi-examples.ts).
    transformObject: (document) =>
      'openapiObject' in document
        ? (completeOpenApiDocument(structuredClone(document.openapiObject) as never, {
            publicUrl: ctx.config.publicUrl,
            staffOnly,
          }) as typeof document.openapiObject)
        : document.swaggerObject,
  });
  // The docs page runs inline scripts: it sends its own policy, with their hashes, on its routes.
  await app.register(fastifySwaggerUi, { routePrefix: '/api/docs', staticCSP: true });

  app.get(
    '/health',
    {
      schema: {
        tags: ['public'],
        security: [],
        summary: 'Liveness and database check: ok while the server reaches its database',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => {
      await ctx.pool.query('select 1');
      return { status: 'ok' as const };
    },
  );
  app.get(
    '/api/hello',
    {
      schema: {
        tags: ['public'],
        security: [],
        summary: 'A fixed greeting, to check that the API answers at all',
        response: { 200: z.object({ message: z.string() }) },
      },
    },
    async () => ({ message: 'Hello from Lockstep' }),
  );
  app.get(
    '/api/config',
    {
      schema: {
        tags: ['public'],
        security: [],
        response: {
          200: z.object({
            environment: z.enum(['local', 'test', 'staging', 'production']),
            supportEmail: z.string(),
            pricingUrl: z.string(),
            oidcProviders: z.array(z.string()),
            /** Plans can be bought here (Stripe is set up: LOCKSTEP_STRIPE_*). */
            payments: z.boolean(),
            /** PostHog (LOCKSTEP_POSTHOG_*); null when not set. The web app starts it in staging and production only. */
            analytics: z.object({ posthogKey: z.string(), posthogHost: z.string() }).nullable(),
            /** Google Tag Manager's container (LOCKSTEP_GTM_ID); null when not set. Loaded in staging and production only. */
            tagManager: z.object({ gtmId: z.string() }).nullable(),
            /** The support chat to load (LOCKSTEP_INTERCOM_APP_ID, or LOCKSTEP_CHATWOOT_*); null when neither is set. */
            supportChat: z
              .discriminatedUnion('kind', [
                z.object({ kind: z.literal('intercom'), appId: z.string() }),
                z.object({ kind: z.literal('chatwoot'), websiteToken: z.string(), baseUrl: z.string() }),
              ])
              .nullable(),
          }),
        },
      },
    },
    async () => ({
      environment: ctx.config.environment,
      supportEmail: ctx.config.supportEmail,
      pricingUrl: ctx.config.pricingUrl,
      oidcProviders: ctx.config.oidcProviders,
      payments: ctx.config.billing !== null,
      analytics: ctx.config.analytics,
      tagManager: ctx.config.tagManager,
      supportChat: ctx.config.supportChat,
    }),
  );
  mountAuth(app, ctx.auth, ctx.authRateLimiter);

  await app.register(
    async (rest) => {
      rest.addHook('onRequest', bearerGuard(ctx));
      rest.addHook('preValidation', refuseUnknownQuery);
      registerRestRoutes(rest.withTypeProvider<ZodTypeProvider>(), ctx);
    },
    { prefix: '/rest' },
  );

  // Payments (spec section 7): outside /rest, behind the same Bearer guard.
  await app.register(
    async (payment) => {
      payment.addHook('onRequest', bearerGuard(ctx));
      payment.addHook('preValidation', refuseUnknownQuery);
      const typed = payment.withTypeProvider<ZodTypeProvider>();
      createCheckout(typed, ctx);
      openBillingPortal(typed, ctx);
    },
    { prefix: '/payment' },
  );

  // The apps' webhooks: public (each address carries a key only this server makes), and read as the
  // raw body, because their signatures are over the exact bytes.
  await app.register(async (hooks) => {
    hooks.addContentTypeParser(
      'application/json',
      { parseAs: 'string', bodyLimit: 1_048_576 },
      (_req, body, done) => done(null, body),
    );
    receiveNotionWebhook(hooks, ctx);
    receiveAirtableWebhook(hooks, ctx);
    receiveHubSpotWebhook(hooks, ctx);
    receiveAttioWebhook(hooks, ctx);
    receivePipedriveWebhook(hooks, ctx);
    receiveAffinityWebhook(hooks, ctx);
    receiveStripeWebhook(hooks, ctx);
    receiveMemberstackWebhook(hooks, ctx);
    receiveStripeBillingWebhook(hooks, ctx);
    receiveWebflowWebhook(hooks, ctx);
  });

  const indexHtml = path.join(ctx.config.webDist, 'index.html');
  const hasWeb = existsSync(indexHtml);
  if (hasWeb) await app.register(fastifyStatic, { root: ctx.config.webDist, wildcard: false });

  app.setNotFoundHandler((request, reply) => {
    const urlPath = request.url.split('?')[0] ?? '/';
    const isApi = API_PREFIXES.some((p) => urlPath === p || urlPath.startsWith(`${p}/`));
    if (isApi || request.method !== 'GET') {
      const message = `No route ${request.method} ${urlPath}`;
      return reply
        .status(404)
        .send(envelope(404, urlPath, message, 'This address does not exist.', 'not_found'));
    }
    // The web app routes itself: every other GET gets its index.html.
    if (hasWeb) return reply.type('text/html').sendFile('index.html');
    return reply
      .status(503)
      .type('text/plain')
      .send('The web app is not built. Run `npm start` (it builds it) or `npm run build:web`.');
  });
  return app;
}

/** LOCKSTEP_TRUST_PROXY=<n>: the n nearest hops are proxies (as Fastify's own number does). */
function hopsTrusted(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

/**
 * One line a request, at debug (LOCKSTEP_LOG_LEVEL=debug shows them): method, url, status and
 * milliseconds. A 5xx is also a warning at the default level (handleError logs its error).
 */
function logRequest(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  const line = {
    method: request.method,
    url: request.url,
    statusCode: reply.statusCode,
    ms: Math.round(reply.elapsedTime * 10) / 10,
  };
  if (reply.statusCode >= 500) request.log.warn(line, 'request failed');
  else request.log.debug(line, 'request');
  done();
}
