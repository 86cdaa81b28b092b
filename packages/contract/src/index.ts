export * from './connections';
export * from './constants';
export * from './core-bases';
export * from './errors';
export * from './plan-rules';
export * from './plans';
export * from './runs';
export * from './users';
