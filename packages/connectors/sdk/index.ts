export * from './connector';
export * from './http-client';
export * from './rate-limiter';
export * from './schema-generation';
export * from './ssrf-guard';
export * from './webhooks';
