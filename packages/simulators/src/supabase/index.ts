export { type PgProxy, startPgProxy } from './pg-proxy.ts';
export {
  ACCESS_TOKEN_TTL_S,
  DEFAULT_CLIENT,
  DEFAULT_PAT,
  RATE_LIMIT_PER_MINUTE,
  type SupabaseOrganization,
  type SupabaseProjectOptions,
  type SupabaseSimulator,
  type SupabaseSimulatorOptions,
  SupabaseState,
  startSupabaseSimulator,
} from './supabase-simulator.ts';
