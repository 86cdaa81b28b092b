export * from './constants';
export * from './errors';
export * from './plan-rules';
export * from './plans';
export * from './users';
