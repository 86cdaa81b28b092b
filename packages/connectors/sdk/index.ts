export * from './connector';
export * from './http-client';
export * from './rate-limiter';
export * from './ssrf-guard';
export * from './webhooks';
