import { differencesFromShadow } from '@lockstep/engine';
import { shadowFromStore } from '../db/stored-shadow';
import type { AppContext } from '../http/context';
import { loadSyncPlan } from './load-sync-plan';
import { sideConnector } from './side-connector';

type LinkRow = {
  core_base_id: string;
  table_mapping_id: string | null;
  left_remote_id: string | null;
  right_remote_id: string | null;
  shadow: unknown;
};

/**
 * A linked record's live state: both records read from the apps now and compared with the shadow,
 * so "in step" means the apps really agree, not only that no issue is open.
 */
export async function liveCheck(ctx: AppContext, row: LinkRow) {
  const unknown = (why: string) => ({ inStep: null, differences: [], why });
  const plan = await loadSyncPlan(ctx.db, row.core_base_id);
  const m = plan?.mappings.find((x) => x.tableMappingId === row.table_mapping_id);
  if (!m) return unknown('The table pair of this record is no longer mapped.');
  try {
    const deps = { db: ctx.db, secretBox: ctx.secretBox, connectors: ctx.runtimeConnectors };
    const [left, right] = await Promise.all([
      sideConnector(deps, m.left, 'left'),
      sideConnector(deps, m.right, 'right'),
    ]);
    if (!left.readRecords || !right.readRecords)
      return unknown('These apps are not read record by record; the next run compares them.');
    const [L, R] = await Promise.all([
      row.left_remote_id ? left.readRecords(m.left.tableRemoteId, [row.left_remote_id]) : [],
      row.right_remote_id ? right.readRecords(m.right.tableRemoteId, [row.right_remote_id]) : [],
    ]);
    const differences = differencesFromShadow(
      m.spec,
      shadowFromStore(row.shadow),
      L[0] ?? null,
      R[0] ?? null,
    ).map((d) => ({ fieldMappingId: d.fieldMappingId, side: d.side }));
    return { inStep: differences.length === 0, differences, why: null };
  } catch (error) {
    return unknown(
      `The apps could not be read now: ${error instanceof Error ? ((error as { userFacingMessage?: string }).userFacingMessage ?? error.message) : String(error)}`,
    );
  }
}
