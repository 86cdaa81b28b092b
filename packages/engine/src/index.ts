export * from './compatibility';
export * from './filter';
export * from './match';
export * from './reconcile';
export * from './rich-text';
export * from './types';
export * from './values';
export * from './write-plan';
