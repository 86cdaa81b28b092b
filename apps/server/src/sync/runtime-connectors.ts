import type { TableConnector } from '@lockstep/connectors';

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
} {
  const all = { ...factories };
  return {
    forConnection: (type, secrets) => all[type]?.(secrets),
    register: (type, factory) => {
      all[type] = factory;
    },
  };
}
