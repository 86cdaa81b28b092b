import { ConnectorError } from '@lockstep/connectors';

/**
 * A demo connection's items name its database on the embedded PostgreSQL (`embedded: demo_crm`)
 * instead of an address: the address is resolved each time the connection is opened, so the
 * connection keeps working when the embedded server comes back on another port.
 */
export const EMBEDDED_ITEM = 'embedded';

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
  const { [EMBEDDED_ITEM]: _marker, ...rest } = items;
  return { ...rest, connectionString: embeddedDatabaseUrl(database) };
}
