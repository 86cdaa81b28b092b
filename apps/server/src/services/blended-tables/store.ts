import { type Capabilities, ConnectorError, type TableConnector } from '@lockstep/connectors';
import { BLENDED_SOURCE_FIELD_ID, type BlendedTable, BlendedTableConfig } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { DiscoveredTable } from '../../connectors/connector-port';
import type { Db } from '../../db/database';
import type { BlendedTableTable } from '../../db/schema';
import type { RuntimeConnectors } from '../../sync/runtime-connectors';
import { connectionItemsSaver, type SealedSecrets } from '../external-connections';
import type { SecretBox } from '../secret-box';
import { iso } from '../sync-logs';
import { readBlended, readBlendedRecords, weakestCapabilities, writeBlended } from './blend';

type Row = Selectable<BlendedTableTable>;
export type BlendedDeps = { db: Db; secretBox: SecretBox; connectors: RuntimeConnectors };

export const configOf = (row: Row): BlendedTableConfig => BlendedTableConfig.parse(row.config);

/** The blended connection's one item: whose blended tables it serves (sealed; users cannot set it). */
export const BLENDED_OWNER_ITEM = 'ownerId';

/** The user's `blended` connection, made on first use: its base "Blended tables" holds their blended tables. */
export async function ensureBlendedConnection(deps: { db: Db; secretBox: SecretBox }, ownerId: string) {
  const found = await deps.db
    .selectFrom('external_connection')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('type', '=', 'blended')
    .orderBy('created_at')
    .executeTakeFirst();
  if (found) return found.id;
  const made = await deps.db
    .insertInto('external_connection')
    .values({
      owner_id: ownerId,
      type: 'blended',
      name: 'Blended tables',
      secrets: deps.secretBox.seal({ connectionItems: { [BLENDED_OWNER_ITEM]: ownerId } }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return made.id;
}

/** How many syncs map this blended table (through any of the owner's `blended` bases). */
export async function syncsUsing(db: Db, ownerId: string, blendedTableId: string): Promise<number> {
  const row = await db
    .selectFrom('table_mapping')
    .innerJoin('external_table', (j) =>
      j.on((eb) =>
        eb.or([
          eb('external_table.id', '=', eb.ref('table_mapping.left_table_id')),
          eb('external_table.id', '=', eb.ref('table_mapping.right_table_id')),
        ]),
      ),
    )
    .innerJoin('external_base', 'external_base.id', 'external_table.external_base_id')
    .select((eb) => eb.fn.count<string>('table_mapping.core_base_id').distinct().as('n'))
    .where('external_base.type', '=', 'blended')
    .where('external_base.owner_id', '=', ownerId)
    .where('external_table.remote_id', '=', blendedTableId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function toBlendedTable(
  deps: { db: Db; secretBox: SecretBox },
  row: Row,
): Promise<BlendedTable> {
  const config = configOf(row);
  return {
    id: row.id,
    name: row.name,
    sources: config.sources,
    defaultSource: config.defaultSource,
    fields: config.fields,
    connectionId: await ensureBlendedConnection(deps, row.owner_id),
    usedBySyncs: await syncsUsing(deps.db, row.owner_id, row.id),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** The blended tables as tables of the virtual base (what the table-mapping screens show). */
export async function discoverBlendedSchema(db: Db, ownerId: string): Promise<DiscoveredTable[]> {
  const rows = await db
    .selectFrom('blended_table')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => {
    const config = configOf(row);
    return {
      remoteId: row.id,
      name: row.name,
      extras: { blended: true },
      fields: [
        ...config.fields.map((f) => ({
          remoteId: f.id,
          name: f.name,
          fieldType: f.type,
          readOnly: f.readOnly,
          options: f.options,
        })),
        {
          remoteId: BLENDED_SOURCE_FIELD_ID,
          name: 'Source',
          fieldType: 'single_select',
          readOnly: true,
          options: { choices: config.sources.map((s) => s.name) },
        },
      ],
    };
  });
}

/**
 * A source's runtime connector, opened with its connection's credentials. The connection must
 * belong to the blended table's owner (checked at every use, not only when the table was saved).
 */
export async function openSourceConnector(
  deps: BlendedDeps,
  ownerId: string,
  connectionId: string,
): Promise<TableConnector> {
  const conn = await deps.db
    .selectFrom('external_connection')
    .select(['id', 'type', 'secrets', 'status', 'owner_id'])
    .where('id', '=', connectionId)
    .executeTakeFirst();
  if (!conn || conn.owner_id !== ownerId || conn.type === 'blended')
    throw new ConnectorError(
      'not_found',
      `Source connection ${connectionId} not found`,
      'A source connection of this blended table was deleted. Edit the blended table or reconnect the app.',
    );
  if (conn.status === 'broken')
    throw new ConnectorError(
      'auth_invalid',
      'Source connection is broken',
      'A source connection of this blended table is broken. Reconnect the app to resume.',
    );
  const items = deps.secretBox.open<SealedSecrets>(conn.secrets).connectionItems;
  const connector = deps.connectors.forConnection(conn.type, items, connectionItemsSaver(deps, conn.id));
  if (!connector)
    throw new ConnectorError(
      'not_found',
      `No ${conn.type} connector`,
      `The ${conn.type} connector is not available on this server.`,
    );
  return connector;
}

/**
 * The `blended` runtime connector for one owner: each call loads the blended table's config and
 * routes to its sources' own connectors (which keep their own rate limits and caches).
 */
export function createBlendedConnector(deps: BlendedDeps, ownerId: string): TableConnector {
  const seen = new Map<string, Capabilities>();
  const load = async (tableRemoteId: string) => {
    const row = await deps.db
      .selectFrom('blended_table')
      .selectAll()
      .where('id', '=', tableRemoteId)
      .where('owner_id', '=', ownerId)
      .executeTakeFirst()
      .catch(() => undefined);
    if (!row)
      throw new ConnectorError(
        'not_found',
        `Blended table ${tableRemoteId} not found`,
        'This blended table was deleted.',
      );
    const config = configOf(row);
    const opened = new Map<number, TableConnector>();
    const connectorOf = async (index: number) => {
      let c = opened.get(index);
      if (!c) {
        const source = config.sources[index];
        if (!source) throw new ConnectorError('not_found', 'No such source', 'No such source.');
        c = await openSourceConnector(deps, ownerId, source.connectionId);
        opened.set(index, c);
        seen.set(`${tableRemoteId}:${index}`, c.capabilities);
      }
      return c;
    };
    return { config, connectorOf };
  };
  return {
    // The weakest of the sources met so far (the runtime reads batchSize); Airtable's 10 until then.
    get capabilities(): Capabilities {
      const known = [...seen.values()];
      return known.length > 0
        ? weakestCapabilities(known)
        : { batchSize: 10, incrementalRead: true, deleteDetection: 'full_scan', webhooks: false };
    },
    async read(tableRemoteId, cursor, options) {
      const { config, connectorOf } = await load(tableRemoteId);
      return readBlended(config, connectorOf, cursor, options.pageSize);
    },
    async write(tableRemoteId, requests, options) {
      const { config, connectorOf } = await load(tableRemoteId);
      return writeBlended(config, connectorOf, requests, options);
    },
    async readRecords(tableRemoteId, ids) {
      const { config, connectorOf } = await load(tableRemoteId);
      return readBlendedRecords(config, connectorOf, ids);
    },
  };
}
