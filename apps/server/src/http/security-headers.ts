import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config';

/** Where Google Tag Manager's script comes from, and the hosts its container talks to (Google's CSP guide). */
export const GTM_SCRIPT_HOST = 'https://www.googletagmanager.com';
const GTM_CONNECT_HOSTS = [GTM_SCRIPT_HOST, 'https://www.google.com'];

/** The web app loads Google Tag Manager only in staging and production, with a container id set. */
export const tagManagerRuns = (config: Pick<Config, 'environment' | 'tagManager'>) =>
  config.tagManager !== null && (config.environment === 'staging' || config.environment === 'production');

/**
 * Security headers on every answer, the web app's and the API's (helmet): a content security policy
 * that lets the app load only its own scripts and be framed by no one (clickjacking), nosniff, no
 * referrer to other sites, and HSTS when the server is reached over https (over plain http a
 * browser ignores it, and on a local server it would pin localhost to https). Google Tag Manager's
 * script and hosts are allowed only when it runs (`tagManager`); nothing else from outside otherwise.
 */
export async function registerSecurityHeaders(
  app: FastifyInstance,
  options: { publicUrl: string; tagManager?: boolean },
) {
  const gtmScripts = options.tagManager ? [GTM_SCRIPT_HOST] : [];
  const gtmConnect = options.tagManager ? GTM_CONNECT_HOSTS : [];
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'", ...gtmScripts],
        // Mantine sets style attributes at run time.
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:', 'https:'],
        'font-src': ["'self'", 'data:'],
        'connect-src': ["'self'", ...gtmConnect],
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
