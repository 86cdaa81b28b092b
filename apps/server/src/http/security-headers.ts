import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Security headers on every answer, the web app's and the API's (helmet): a content security policy
 * that lets the app load only its own scripts and be framed by no one (clickjacking), nosniff, no
 * referrer to other sites, and HSTS when the server is reached over https (over plain http a
 * browser ignores it, and on a local server it would pin localhost to https).
 */
export async function registerSecurityHeaders(app: FastifyInstance, options: { publicUrl: string }) {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        // Mantine sets style attributes at run time.
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:', 'https:'],
        'font-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
      },
    },
    // The sign-in-with-an-app popup answers its opener (window.opener) after a visit to the app's
    // own site: a cross-origin opener policy would cut that link.
    crossOriginOpenerPolicy: false,
    strictTransportSecurity: options.publicUrl.startsWith('https://')
      ? { maxAge: 31_536_000, includeSubDomains: true }
      : false,
    referrerPolicy: { policy: 'same-origin' },
  });
}
