import { memberstackKeyMode } from '@lockstep/connectors/memberstack';
import { type ConnectorType, connectorDisplayName, type ExternalConnection } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import { connectorInfo } from '../connectors/connector-catalog';
import { ConnectionProblem, type ConnectorPort, type PortCallContext } from '../connectors/connector-port';
import type { Db } from '../db/database';
import type { ExternalConnectionTable } from '../db/schema';
import { EMBEDDED_ITEM, EMBEDDED_PASSWORD_ITEM, EMBEDDED_USER_ITEM } from '../demo/embedded-items';
import { type AppContext, canAccessOwner, type Principal } from '../http/context';
import { HttpError, notFound } from '../http/http-error';
import type { SecretBox } from './secret-box';
import { iso } from './sync-logs';

type Row = Selectable<ExternalConnectionTable>;
export type SealedSecrets = { connectionItems: Record<string, string>; oAuth?: Record<string, unknown> };

/**
 * Items a server keeps for itself whatever the connector declares (OAuth tokens, a database role's
 * credentials set up by Lockstep): they are never shown either.
 */
const RESERVED_ITEMS = new Set([
  EMBEDDED_ITEM,
  EMBEDDED_USER_ITEM,
  EMBEDDED_PASSWORD_ITEM,
  // Stripe Connect: the connected account this server's platform key acts on. Only the OAuth
  // exchange sets it; from a user it would reach any account connected to the platform.
  'stripeUserId',
]);

const SERVER_SECRETS = [
  'accessToken',
  'refreshToken',
  'password',
  'connectionString',
  'clientSecret',
  'apiKey',
  'secretKey',
  'token',
  EMBEDDED_PASSWORD_ITEM,
];

/** Connection items the connector declares secret never leave the server; the rest are shown. */
export function toExternalConnection(row: Row, items: Record<string, string>): ExternalConnection {
  const info = connectorInfo(row.type as ConnectorType);
  const secret = new Set([
    ...SERVER_SECRETS,
    ...info.auth.requiredItems.filter((i) => i.secret).map((i) => i.name),
  ]);
  const visible = Object.fromEntries(Object.entries(items).filter(([k]) => !secret.has(k)));
  // Memberstack: which of the app's environments the secret key opens (test or live members).
  if (row.type === 'memberstack') {
    const mode = memberstackKeyMode(items.secretKey);
    if (mode) visible.mode = mode;
  }
  return {
    id: row.id,
    type: row.type as ConnectorType,
    name: row.name,
    status: row.status,
    brokenReason: row.broken_reason,
    connectionItems: visible,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/**
 * Items only the server sets (a demo connection's database on the embedded server and its role):
 * refused from users, who could otherwise point a connection at any database of the embedded
 * server as its superuser.
 */
export function assertNoReservedItems(items: Record<string, unknown>) {
  const reserved = Object.keys(items).filter((name) => RESERVED_ITEMS.has(name));
  if (reserved.length > 0)
    throw new HttpError(
      400,
      `Reserved connection items: ${reserved.join(', ')}`,
      `${reserved.join(', ')} cannot be set on a connection.`,
      'validation',
    );
}

/** A chosen item must be one of its options (TLS mode, change capture): refused with the choices. */
export function assertItemChoices(type: ConnectorType, items: Record<string, string>) {
  for (const item of connectorInfo(type).auth.requiredItems) {
    const value = items[item.name];
    if (item.kind !== 'select' || !item.options || value === undefined || value === '') continue;
    if (!item.options.includes(value))
      throw new HttpError(
        400,
        `${item.name} must be one of ${item.options.join(', ')}`,
        `${item.label} must be one of: ${item.options.join(', ')}.`,
        'validation',
      );
  }
}

/**
 * The items a PATCH leaves a connection with: the stored ones, changed by what was sent (null
 * removes one). Names the connector does not take are refused, and so is a set that says two
 * things at once (a PostgreSQL connection string beside host, database, user or password: one of
 * them would be silently ignored).
 */
export function patchedItems(
  type: ConnectorType,
  stored: Record<string, string>,
  sent: Record<string, string | null>,
): Record<string, string> {
  const known = connectorInfo(type).auth.requiredItems.map((i) => i.name);
  const unknown = Object.keys(sent).filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new HttpError(
      400,
      `Unknown connection items: ${unknown.join(', ')}`,
      `A ${connectorInfo(type).displayName} connection does not take ${unknown.join(', ')}. It takes: ${known.join(', ')}.`,
      'validation',
    );
  const items = { ...stored };
  for (const [name, value] of Object.entries(sent)) {
    if (value === null) delete items[name];
    else items[name] = value;
  }
  const discrete = ['host', 'database', 'user', 'password'].filter((n) => (items[n] ?? '') !== '');
  if (
    (type === 'postgresql' || type === 'supabase') &&
    (items.connectionString ?? '') !== '' &&
    discrete.length > 0
  )
    throw new HttpError(
      400,
      `Both a connection string and ${discrete.join(', ')}`,
      `Give either a connection string or host, database, user and password, not both: send ${
        'connectionString' in sent ? discrete.map((n) => `${n}: null`).join(', ') : 'connectionString: null'
      } to remove the other.`,
      'validation',
    );
  return items;
}

export async function findConnection(db: Db, principal: Principal, id: string): Promise<Row> {
  const row = await db.selectFrom('external_connection').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Connection');
  return row;
}

export function connectorFor(ctx: AppContext, type: ConnectorType): ConnectorPort {
  const port = ctx.connectors.get(type);
  if (!port) {
    throw new HttpError(
      400,
      `Connector ${type} is not available`,
      `${connectorDisplayName(type)} is not available yet. Choose another app.`,
      'validation',
    );
  }
  return port;
}

/** Runs a connector call; a refused or unreachable app becomes a clear 4xx instead of a 500. */
export async function callConnector<T>(type: ConnectorType, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ConnectionProblem) {
      const status =
        error.code === 'auth_invalid'
          ? 400
          : error.code === 'permission_denied'
            ? 403
            : error.code === 'not_found'
              ? 404
              : error.code === 'transient'
                ? 502
                : error.code === 'rate_limited'
                  ? 429
                  : 400;
      throw new HttpError(status, `${type}: ${error.message}`, error.userFacingMessage, error.code);
    }
    throw error;
  }
}

export function openSecrets(ctx: AppContext, row: Row): SealedSecrets {
  return ctx.secretBox.open<SealedSecrets>(row.secrets);
}

/**
 * Seals a stored connection's renewed items (OAuth tokens a connector refreshed, a rotated refresh
 * token) into it at once, keeping the rest of its sealed secrets: the next run and other workers
 * start from them. For the runtime's connectors (`forConnection(type, secrets, save)`).
 */
export function connectionItemsSaver(
  deps: { db: Db; secretBox: SecretBox },
  connectionId: string,
): (items: Record<string, string>) => Promise<void> {
  return async (items) => {
    const row = await deps.db
      .selectFrom('external_connection')
      .select('secrets')
      .where('id', '=', connectionId)
      .executeTakeFirst();
    if (!row) return;
    const current = deps.secretBox.open<SealedSecrets>(row.secrets);
    await deps.db
      .updateTable('external_connection')
      .set({ secrets: deps.secretBox.seal({ ...current, connectionItems: items }), updated_at: new Date() })
      .where('id', '=', connectionId)
      .execute();
  };
}

/**
 * The context a port call gets on a stored connection: items the port renews or sets up (refreshed
 * OAuth tokens, Supabase's database role) are sealed into the connection at once.
 */
export function portContext(ctx: AppContext, row: Row): PortCallContext {
  return {
    async saveItems(items) {
      const current = openSecrets(ctx, row);
      const sealed = ctx.secretBox.seal({ ...current, connectionItems: items });
      await ctx.db
        .updateTable('external_connection')
        .set({ secrets: sealed, updated_at: new Date() })
        .where('id', '=', row.id)
        .execute();
      row.secrets = sealed;
    },
  };
}
