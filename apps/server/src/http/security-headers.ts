import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import type { Config, SupportChatConfig } from '../config';

/** Where Google Tag Manager's script comes from, and the hosts its container talks to (Google's CSP guide). */
export const GTM_SCRIPT_HOST = 'https://www.googletagmanager.com';
const GTM_CONNECT_HOSTS = [GTM_SCRIPT_HOST, 'https://www.google.com'];

/**
 * PostHog Cloud: posthog-js picks region subdomains of posthog.com by itself (us.i.posthog.com for
 * calls, us-assets.i.posthog.com for the session recorder and other lazily loaded scripts), and
 * PostHog's CSP guide asks for the whole of *.posthog.com in script-src and connect-src, as the
 * subdomains change over time.
 */
export const POSTHOG_CLOUD_SOURCE = 'https://*.posthog.com';

/** Sources the third parties add, per directive of the policy. */
type Sources = {
  script: string[];
  connect: string[];
  img: string[];
  font: string[];
  media: string[];
  frame: string[];
  worker: string[];
  formAction: string[];
};

/**
 * Intercom's CSP guide ("Using Intercom with Content Security Policy", source allowlisting), the US
 * hosting region's hosts. A workspace hosted in the EU or Australia needs that region's hosts too
 * (api.eu / api-iam.eu / nexus-europe-websocket / uploads.eu…, or the .au ones): not allowed here.
 * Images: the policy already allows any https image and data:; Intercom adds blob:.
 */
export const INTERCOM_SOURCES: Partial<Sources> = {
  script: ['https://app.intercom.io', 'https://widget.intercom.io', 'https://js.intercomcdn.com'],
  connect: [
    'https://via.intercom.io',
    'https://api.intercom.io',
    'https://api-iam.intercom.io',
    'https://api-ping.intercom.io',
    'https://*.intercom-messenger.com',
    'wss://*.intercom-messenger.com',
    'https://nexus-websocket-a.intercom.io',
    'wss://nexus-websocket-a.intercom.io',
    'https://nexus-websocket-b.intercom.io',
    'wss://nexus-websocket-b.intercom.io',
    'https://uploads.intercomcdn.com',
    'https://uploads.intercomusercontent.com',
  ],
  img: ['blob:'],
  font: ['https://js.intercomcdn.com', 'https://fonts.intercomcdn.com'],
  media: ['https://js.intercomcdn.com'],
  // The guide lists these under child-src: frames (sheets, reporting, embedded videos).
  frame: [
    'https://intercom-sheets.com',
    'https://www.intercom-reporting.com',
    'https://www.youtube.com',
    'https://player.vimeo.com',
    'https://fast.wistia.net',
  ],
  formAction: ['https://intercom.help', 'https://api-iam.intercom.io'],
};

const inStagingOrProduction = (environment: Config['environment']) =>
  environment === 'staging' || environment === 'production';

/** The web app loads Google Tag Manager only in staging and production, with a container id set. */
export const tagManagerRuns = (config: Pick<Config, 'environment' | 'tagManager'>) =>
  config.tagManager !== null && inStagingOrProduction(config.environment);

/**
 * The PostHog host the policy must allow: the web app starts analytics only in staging and
 * production, with a key (apps/web/src/lib/analytics.ts); null otherwise.
 */
export const analyticsHost = (config: Pick<Config, 'environment' | 'analytics'>): string | null =>
  config.analytics !== null && inStagingOrProduction(config.environment)
    ? config.analytics.posthogHost
    : null;

/** An http(s) address's origin (scheme, host, port: nothing a header could be broken with); null otherwise. */
function originOf(address: string): URL | null {
  try {
    const url = new URL(address);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

/** What the configured third parties need, directive by directive; every list empty when none runs. */
export function thirdPartySources(options: {
  tagManager?: boolean;
  posthogHost?: string | null;
  supportChat?: SupportChatConfig;
}): Sources {
  const s: Sources = {
    script: [],
    connect: [],
    img: [],
    font: [],
    media: [],
    frame: [],
    worker: [],
    formAction: [],
  };
  const add = (more: Partial<Sources>) => {
    for (const [directive, sources] of Object.entries(more) as [keyof Sources, string[]][])
      s[directive].push(...sources);
  };
  if (options.tagManager) add({ script: [GTM_SCRIPT_HOST], connect: GTM_CONNECT_HOSTS });
  const posthog = options.posthogHost ? originOf(options.posthogHost) : null;
  if (posthog) {
    // The configured host (PostHog Cloud's ingestion host, a self-hosted instance or a reverse proxy:
    // posthog-js then loads its scripts from it too), and PostHog Cloud's other subdomains.
    const cloud = posthog.hostname === 'posthog.com' || posthog.hostname.endsWith('.posthog.com');
    const sources = [posthog.origin, ...(cloud ? [POSTHOG_CLOUD_SOURCE] : [])];
    // Session recording (on in the web app) runs its rrweb worker from a blob: URL (PostHog's CSP
    // guide: worker-src for recordings); 'self' keeps the app's own workers as default-src allowed.
    add({ script: sources, connect: sources, worker: ["'self'", 'blob:'] });
  }
  const chat = options.supportChat;
  if (chat?.kind === 'intercom') add(INTERCOM_SOURCES);
  const chatwoot = chat?.kind === 'chatwoot' ? originOf(chat.baseUrl) : null;
  if (chatwoot) {
    // Its SDK (/packs/js/sdk.js), the widget's frame (/widget) and its API and Action Cable socket.
    const socket = `${chatwoot.protocol === 'https:' ? 'wss:' : 'ws:'}//${chatwoot.host}`;
    add({ script: [chatwoot.origin], connect: [chatwoot.origin, socket], frame: [chatwoot.origin] });
  }
  return s;
}

/**
 * Security headers on every answer, the web app's and the API's (helmet): a content security policy
 * that lets the app load only its own scripts and be framed by no one (clickjacking), nosniff, no
 * referrer to other sites, and HSTS when the server is reached over https (over plain http a
 * browser ignores it, and on a local server it would pin localhost to https). The third parties the
 * web app loads are allowed only when they run: Google Tag Manager (`tagManager`), PostHog
 * (`posthogHost`, see analyticsHost) and the support chat (`supportChat`); nothing else from outside.
 */
export async function registerSecurityHeaders(
  app: FastifyInstance,
  options: {
    publicUrl: string;
    tagManager?: boolean;
    posthogHost?: string | null;
    /**
     * The web app loads the configured chat for a signed-in user in every environment
     * (apps/web/src/lib/support-chat.ts, unlike analytics and the tag manager): allowed wherever set.
     */
    supportChat?: SupportChatConfig;
  },
) {
  const extra = thirdPartySources(options);
  // Directives left out fall back to default-src 'self': one is sent only when something is added.
  const onlyWhenNeeded = (name: string, sources: string[]) =>
    sources.length > 0 ? { [name]: ["'self'", ...sources] } : {};
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'", ...extra.script],
        // Mantine sets style attributes at run time.
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:', ...extra.img, 'https:'],
        'font-src': ["'self'", 'data:', ...extra.font],
        'connect-src': ["'self'", ...extra.connect],
        ...onlyWhenNeeded('media-src', extra.media),
        ...onlyWhenNeeded('frame-src', extra.frame),
        ...(extra.worker.length > 0 ? { 'worker-src': extra.worker } : {}),
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        'form-action': ["'self'", ...extra.formAction],
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
