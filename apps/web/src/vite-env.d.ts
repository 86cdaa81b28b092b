/// <reference types="vite/client" />

/** The web app's version (apps/web/package.json), set by vite.config.ts. */
declare const __APP_VERSION__: string;
