import type { TableConnector } from '@lockstep/connectors';
import type { Db } from '../db/database';
import type { Side } from '../db/schema';
import { connectionItemsSaver } from '../services/external-connections';
import type { SecretBox } from '../services/secret-box';
import type { SidePlan } from './load-sync-plan';
import type { RuntimeConnectors } from './runtime-connectors';
import { onSide } from './table-problems';

export type SideConnectorDeps = { db: Db; secretBox: SecretBox; connectors: RuntimeConnectors };

/** A problem that stops the run (bad credentials, a missing connector): the run fails with this text. */
export class RunStop extends Error {}

/** A side's connector, opened with its connection's credentials (a broken or deleted one stops the run). */
export async function sideConnector(
  deps: SideConnectorDeps,
  side: SidePlan,
  which: Side,
): Promise<TableConnector> {
  let secrets: Record<string, string> = {};
  if (side.connectionId) {
    const conn = await deps.db
      .selectFrom('external_connection')
      .select(['secrets', 'status'])
      .where('id', '=', side.connectionId)
      .executeTakeFirst();
    if (!conn) throw new RunStop('A connection of this sync was deleted. Reconnect the app.');
    if (conn.status === 'broken')
      throw new RunStop('A connection of this sync is broken. Reconnect the app to resume.');
    secrets = deps.secretBox.open<{ connectionItems: Record<string, string> }>(conn.secrets).connectionItems;
  }
  // OAuth tokens a run renews are sealed into the connection at once, so other workers and the next
  // run use them (a single-use refresh token that was spent and not saved would break it).
  const save = side.connectionId ? connectionItemsSaver(deps, side.connectionId) : undefined;
  const connector = deps.connectors.forConnection(side.type, secrets, save);
  if (!connector) throw new RunStop(`The ${side.type} connector is not available on this server.`);
  return onSide(connector, which, side.connectionId);
}
