import type { Db } from '../db/database';

/**
 * Clears a sync's plan: its planned writes are dropped and its passes marked `discarded` (the
 * changes still wait in the apps) or `applied` (a real run writes them). A pass queued or running is
 * cleared too (it keeps nothing it plans); the next wake-up or request makes a new one.
 */
export async function clearPlan(db: Db, coreBaseId: string, as: 'discarded' | 'applied'): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const passes = trx.selectFrom('dry_run').select('id').where('core_base_id', '=', coreBaseId);
    const gone = await trx.deleteFrom('dry_run_write').where('dry_run_id', 'in', passes).executeTakeFirst();
    await trx
      .updateTable('dry_run')
      .set({ status: as, counts: '{}', finished_at: new Date() })
      .where('core_base_id', '=', coreBaseId)
      .execute();
    return Number(gone.numDeletedRows);
  });
}
