import { ConnectorError, type ReadPage, type TableConnector } from '@lockstep/connectors';
import type { Db } from '../db/database';
import type { Side } from '../db/schema';
import type { MappingPlan } from './load-sync-plan';
import { openOrCountIssue, resolveScopedIssues } from './scoped-issues';

/**
 * Problems of one table pair, not of one record: a table dropped, a mapped column renamed, a grant
 * revoked. That pair stops (its cursors stay, so nothing is lost) with one issue that says which
 * table and why; the other pairs of the sync go on; the issue resolves itself once the pair syncs.
 */

/** Which side (and connection) a connector error came from, set by `onSide`. */
const failedOn = new WeakMap<object, { side: Side; connectionId: string | null }>();

export function failedSideOf(error: unknown) {
  return typeof error === 'object' && error !== null ? failedOn.get(error) : undefined;
}

/** The connector of one side of a run: its errors remember the side they came from. */
export function onSide(connector: TableConnector, side: Side, connectionId: string | null): TableConnector {
  const tag = (error: unknown) => {
    if (typeof error === 'object' && error !== null && !failedOn.has(error))
      failedOn.set(error, { side, connectionId });
    return error;
  };
  return new Proxy(connector, {
    get(target, prop, receiver) {
      if (prop === 'read' || prop === 'write' || prop === 'readRecords') {
        const call = Reflect.get(target, prop, receiver) as
          | ((...args: unknown[]) => Promise<unknown>)
          | undefined;
        // An optional call the connector lacks stays absent, so callers can tell.
        if (call === undefined) return undefined;
        return (...args: unknown[]) =>
          call.apply(target, args).catch((error: unknown) => {
            throw tag(error);
          });
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

/**
 * For connectors whose records carry every field (databases): a mapped field missing from what was
 * read was renamed or dropped. Reconciling would take it as emptied and clear the other side, so the
 * pair stops here instead, before anything is written or a cursor moves.
 */
export function assertMappedFieldsPresent(
  m: MappingPlan,
  side: Side,
  connector: TableConnector,
  page: ReadPage,
  connectionId: string | null,
) {
  if (!connector.capabilities.recordsCarryEveryField) return;
  const first = page.records[0];
  if (!first) return;
  const missing = m.spec.fields
    .map((f) => (side === 'left' ? f.left : f.right))
    .filter((f) => !(f.id in first.fields))
    .map((f) => f.name);
  if (missing.length === 0) return;
  const error = new ConnectorError(
    'not_found',
    `mapped fields missing from ${side === 'left' ? m.left.tableRemoteId : m.right.tableRemoteId}: ${missing.join(', ')}`,
    `${missing.map((n) => `"${n}"`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} no longer in the table (renamed or deleted). Refresh the schema and fix the field mapping; this table pair waits until then, and nothing is lost.`,
  );
  failedOn.set(error, { side, connectionId });
  throw error;
}

/** Opens (or counts again) the one issue of this table pair and error; answers its text. */
export async function raiseTableIssue(
  db: Db,
  ownerId: string,
  coreBaseId: string,
  m: MappingPlan,
  error: ConnectorError,
): Promise<string> {
  const where = failedSideOf(error);
  const side = where?.side ?? null;
  const table = side === 'right' ? m.right : m.left;
  const name =
    (await db.selectFrom('external_table').select('name').where('id', '=', table.tableId).executeTakeFirst())
      ?.name ?? table.tableRemoteId;
  const text = `${name}: ${error.userFacingMessage}`;
  await openOrCountIssue(
    db,
    { coreBaseId, scope: 'table', tableMappingId: m.tableMappingId, code: error.code },
    {
      ownerId,
      externalConnectionId: where?.connectionId ?? null,
      side,
      code: error.code,
      message: error.message,
      userFacingMessage: text,
      details: { table: table.tableRemoteId },
    },
  );
  return text;
}

/** The pair synced again: its table issues are resolved. */
export async function resolveTableIssues(db: Db, coreBaseId: string, tableMappingId: string) {
  await resolveScopedIssues(db, { coreBaseId, scope: 'table', tableMappingId });
}
