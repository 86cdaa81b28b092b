import { BLENDED_BASE_REMOTE_ID } from '@lockstep/contract';
import {
  ConnectionProblem,
  type ConnectorPort,
  type ConnectorRegistry,
} from '../../connectors/connector-port';
import type { Db } from '../../db/database';
import { BLENDED_OWNER_ITEM, type BlendedDeps, createBlendedConnector, discoverBlendedSchema } from './store';

const ownerOf = (secrets: Record<string, string>) => {
  const owner = secrets[BLENDED_OWNER_ITEM];
  if (!owner) throw new ConnectionProblem('not_found', 'This blended tables connection has no owner.');
  return owner;
};

/**
 * The `blended` port: one base, "Blended tables", whose tables are the owner's blended tables.
 * Its connection is made by Lockstep with the first blended table; users cannot make one.
 */
export function createBlendedPort(db: Db): ConnectorPort {
  return {
    type: 'blended',
    async check() {
      throw new ConnectionProblem(
        'validation',
        'A blended tables connection is made by Lockstep: create a blended table instead.',
      );
    },
    async listBases(secrets) {
      ownerOf(secrets);
      return [{ remoteId: BLENDED_BASE_REMOTE_ID, name: 'Blended tables' }];
    },
    async discoverSchema(secrets, baseRemoteId) {
      if (baseRemoteId !== BLENDED_BASE_REMOTE_ID)
        throw new ConnectionProblem('not_found', `There is no base ${baseRemoteId} among blended tables.`);
      return discoverBlendedSchema(db, ownerOf(secrets));
    },
  };
}

/** A registry that also answers `blended` (the apps' ports come from `inner`). */
export function withBlendedPort(inner: ConnectorRegistry, db: Db): ConnectorRegistry {
  const blended = createBlendedPort(db);
  return { get: (type) => (type === 'blended' ? blended : inner.get(type)) };
}

/** The runtime factory of `blended` connections: one connector per owner, kept across chunks. */
export function blendedRuntimeFactory(deps: BlendedDeps) {
  const cache = new Map<string, ReturnType<typeof createBlendedConnector>>();
  return (secrets: Record<string, string>) => {
    const owner = secrets[BLENDED_OWNER_ITEM] ?? '';
    let c = cache.get(owner);
    if (!c) {
      if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
      c = createBlendedConnector(deps, owner);
      cache.set(owner, c);
    }
    return c;
  };
}
