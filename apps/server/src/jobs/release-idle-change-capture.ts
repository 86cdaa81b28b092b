import { ConnectorType } from '@lockstep/contract';
import type { PgBoss } from 'pg-boss';
import type { AppContext } from '../http/context';

export const RELEASE_IDLE_CHANGE_CAPTURE = 'release-idle-change-capture';

/**
 * Connections whose change capture holds something in the app while nobody reads (PostgreSQL's
 * logical decoding slot keeps WAL) and that no switched-on sync uses: it is let go, so a sync left
 * off does not fill the user's disk. A sync switched on again makes a new slot and scans its
 * tables once. Answers the connections released.
 */
export async function releaseIdleChangeCapture(ctx: AppContext): Promise<string[]> {
  // Only the connectors that hold something (today PostgreSQL): the others' secrets stay sealed.
  const types = ConnectorType.options.filter((t) => ctx.connectors.get(t)?.releaseChangeCapture);
  if (types.length === 0) return [];
  const rows = await ctx.db
    .selectFrom('external_connection as c')
    .select(['c.id', 'c.type', 'c.secrets'])
    .where('c.type', 'in', types)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('external_base as b')
            .innerJoin('core_base as s', 's.id', 'b.core_base_id')
            .select('b.id')
            .whereRef('b.external_connection_id', '=', 'c.id')
            .where('s.sync_state', '=', 'on'),
        ),
      ),
    )
    .execute();
  const released: string[] = [];
  for (const row of rows) {
    const port = ctx.connectors.get(row.type as ConnectorType);
    if (!port?.releaseChangeCapture) continue;
    try {
      const items = ctx.secretBox.open<{ connectionItems: Record<string, string> }>(
        row.secrets,
      ).connectionItems;
      if ((await port.releaseChangeCapture(items)).released) released.push(row.id);
    } catch (error) {
      // Unreachable now: tried again next hour.
      console.error(`change capture of connection ${row.id} not released:`, error);
    }
  }
  return released;
}

export async function registerReleaseIdleChangeCapture(
  boss: PgBoss,
  ctx: AppContext | null,
  runWorkers: boolean,
) {
  await boss.createQueue(RELEASE_IDLE_CHANGE_CAPTURE);
  await boss.schedule(RELEASE_IDLE_CHANGE_CAPTURE, '41 * * * *');
  if (!runWorkers || !ctx) return;
  await boss.work(RELEASE_IDLE_CHANGE_CAPTURE, async () => {
    await releaseIdleChangeCapture(ctx);
  });
}
