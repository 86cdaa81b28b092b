export { MemoryApp } from './memory-app';
export { type RunOptions, SyncSimulation } from './sync-simulation';
