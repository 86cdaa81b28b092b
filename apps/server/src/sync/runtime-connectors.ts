import type { TableConnector } from '@lockstep/connectors';
import { createPostgresqlConnector, type PostgresqlConnector } from '@lockstep/connectors/postgresql';
import { supabaseDatabaseItems } from '@lockstep/connectors/supabase';

/**
 * The connectors a run uses, by connector type, built for one connection's decrypted credentials.
 * Connectors register here as they land; tests register in-memory apps.
 */
export type RuntimeConnectors = {
  forConnection(type: string, secrets: Record<string, string>): TableConnector | undefined;
};

export function createRuntimeConnectors(
  factories: Record<string, (secrets: Record<string, string>) => TableConnector> = {},
): RuntimeConnectors & {
  register: (type: string, factory: (secrets: Record<string, string>) => TableConnector) => void;
  close: () => Promise<void>;
} {
  // One pool per database, kept across runs (a run must not open new connections every chunk).
  const pools = new Map<string, PostgresqlConnector>();
  const postgresql = (secrets: Record<string, string>) => {
    const key = JSON.stringify(Object.entries(secrets).sort());
    let c = pools.get(key);
    if (!c) {
      c = createPostgresqlConnector(secrets);
      pools.set(key, c);
    }
    return c;
  };
  const all: Record<string, (secrets: Record<string, string>) => TableConnector> = {
    postgresql,
    // Supabase's data path is PostgreSQL, as the role Lockstep set up in the project.
    supabase: (secrets) => postgresql(supabaseDatabaseItems(secrets) as Record<string, string>),
    ...factories,
  };
  return {
    forConnection: (type, secrets) => all[type]?.(secrets),
    register: (type, factory) => {
      all[type] = factory;
    },
    close: async () => {
      await Promise.all([...pools.values()].map((p) => p.end()));
      pools.clear();
    },
  };
}
