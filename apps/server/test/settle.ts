import type { Db } from '../src/db/database';

/** The runs (sync logs) of one sync, oldest first. */
export function syncRuns(db: Db, coreBaseId: string) {
  return db
    .selectFrom('sync_log')
    .select(['id', 'status', 'error'])
    .where('core_base_id', '=', coreBaseId)
    .orderBy('started_at')
    .execute();
}

/** Waits until no run of the sync is going and `check` holds; says which runs were last on timeout. */
export async function settleSync(
  db: Db,
  coreBaseId: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const all = await syncRuns(db, coreBaseId);
    const busy = all.some((r) => r.status === 'running');
    if (!busy && all.length > 0 && (await check())) return all;
    if (Date.now() > end) throw new Error(`sync did not settle: ${JSON.stringify(all.slice(-3))}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
