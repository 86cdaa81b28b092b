export * from './connector';
