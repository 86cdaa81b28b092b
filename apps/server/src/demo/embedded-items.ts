import { ConnectorError } from '@lockstep/connectors';

/**
 * A demo connection's items name its database on the embedded PostgreSQL (`embedded: demo_crm`)
 * instead of an address: the address is resolved each time the connection is opened, so the
 * connection keeps working when the embedded server comes back on another port.
 */
export const EMBEDDED_ITEM = 'embedded';
/** A tenant's own demo role (see tenant-demo.ts): the connection logs in as it, not as the superuser. */
export const EMBEDDED_USER_ITEM = 'embeddedUser';
export const EMBEDDED_PASSWORD_ITEM = 'embeddedPassword';

export type EmbeddedDatabaseUrl = ((database: string) => string) | null;

/** Connection items with the embedded server's current address in place of the marker. */
export function resolveEmbeddedItems(
  items: Record<string, string>,
  embeddedDatabaseUrl: EmbeddedDatabaseUrl,
): Record<string, string> {
  const database = items[EMBEDDED_ITEM];
  if (!database) return items;
  if (!embeddedDatabaseUrl) {
    throw new ConnectorError(
      'not_found',
      `embedded database ${database} asked for, but no embedded PostgreSQL runs`,
      `This connection is to the demo database ${database} of the embedded PostgreSQL, which this server does not run (it uses DATABASE_URL). Connect the database again by its address.`,
    );
  }
  const {
    [EMBEDDED_ITEM]: _marker,
    [EMBEDDED_USER_ITEM]: user,
    [EMBEDDED_PASSWORD_ITEM]: password,
    ...rest
  } = items;
  const url = new URL(embeddedDatabaseUrl(database));
  if (user) {
    url.username = encodeURIComponent(user);
    url.password = encodeURIComponent(password ?? '');
  }
  return { ...rest, connectionString: url.toString() };
}
