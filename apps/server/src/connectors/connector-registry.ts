import type { ConnectorType } from '@lockstep/contract';
import type { ConnectorPort, ConnectorRegistry } from './connector-port';

/**
 * The connectors this server can use. A connector is registered here once it is built and passes
 * its conformance suite; connector-info shows the others as not available.
 */
export function createConnectorRegistry(_options: { allowPrivateHosts: boolean }): ConnectorRegistry {
  const ports = new Map<ConnectorType, ConnectorPort>();
  return { get: (type) => ports.get(type) };
}
