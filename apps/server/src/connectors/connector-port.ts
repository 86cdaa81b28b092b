import type { ConnectorType } from '@lockstep/contract';

/** What the REST layer needs from a connector to connect an app and learn its schema. */
export type DiscoveredField = {
  remoteId: string;
  name: string;
  fieldType: string;
  readOnly: boolean;
  options: Record<string, unknown>;
};
export type DiscoveredTable = {
  remoteId: string;
  name: string;
  fields: DiscoveredField[];
  extras: Record<string, unknown>;
};
export type BasePreview = { remoteId: string; name: string };

export type ConnectorPort = {
  type: ConnectorType;
  /** Throws a ConnectionProblem when the app refuses the credentials or cannot be reached. */
  check(secrets: Record<string, string>): Promise<{ accountEmail: string | null }>;
  listBases(secrets: Record<string, string>): Promise<BasePreview[]>;
  discoverSchema(secrets: Record<string, string>, baseRemoteId: string): Promise<DiscoveredTable[]>;
};

/** A connection that does not work, with a message a user can act on. */
export class ConnectionProblem extends Error {
  constructor(
    readonly code: 'auth_invalid' | 'permission_denied' | 'not_found' | 'transient' | 'validation',
    readonly userFacingMessage: string,
  ) {
    super(userFacingMessage);
    this.name = 'ConnectionProblem';
  }
}

export type ConnectorRegistry = {
  get(type: ConnectorType): ConnectorPort | undefined;
};
