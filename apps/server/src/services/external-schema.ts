import type { DiscoveredTable } from '../connectors/connector-port';
import type { Db } from '../db/database';

/**
 * Stores a discovered schema under an external base, keyed by the app's stable ids: a renamed table
 * or field keeps its row (and so its mappings); one that disappeared is kept and flagged removed,
 * so its mappings can be reported instead of silently breaking.
 */
export async function storeDiscoveredSchema(
  db: Db,
  externalBase: { id: string; owner_id: string },
  tables: DiscoveredTable[],
  /** `partial`: only these tables were read again; the base's other tables are left as they are. */
  options: { partial?: boolean } = {},
): Promise<{ tables: number; fields: number; removedFields: number }> {
  return db.transaction().execute(async (trx) => {
    const now = new Date();
    let fields = 0;
    const seenTables: string[] = [];
    for (const t of tables) {
      const table = await trx
        .insertInto('external_table')
        .values({
          owner_id: externalBase.owner_id,
          external_base_id: externalBase.id,
          remote_id: t.remoteId,
          name: t.name,
          extras: JSON.stringify({ ...t.extras, removed: false }),
        })
        .onConflict((oc) =>
          oc.columns(['external_base_id', 'remote_id']).doUpdateSet({
            name: t.name,
            extras: JSON.stringify({ ...t.extras, removed: false }),
            updated_at: now,
          }),
        )
        .returning('id')
        .executeTakeFirstOrThrow();
      seenTables.push(table.id);
      for (const f of t.fields) {
        fields++;
        const options = JSON.stringify({ ...f.options, removed: false });
        await trx
          .insertInto('external_column')
          .values({
            owner_id: externalBase.owner_id,
            external_table_id: table.id,
            remote_id: f.remoteId,
            name: f.name,
            field_type: f.fieldType,
            read_only: f.readOnly,
            options,
          })
          .onConflict((oc) =>
            oc.columns(['external_table_id', 'remote_id']).doUpdateSet({
              name: f.name,
              field_type: f.fieldType,
              read_only: f.readOnly,
              options,
              updated_at: now,
            }),
          )
          .execute();
      }
      const keep = t.fields.map((f) => f.remoteId);
      let gone = trx
        .updateTable('external_column')
        .set((eb) => ({
          options: eb.fn('jsonb_set', ['options', eb.val('{removed}'), eb.val('true')]),
          updated_at: now,
        }))
        .where('external_table_id', '=', table.id);
      if (keep.length > 0) gone = gone.where('remote_id', 'not in', keep);
      await gone.execute();
    }
    if (options.partial) {
      const removedHere = seenTables.length
        ? await trx
            .selectFrom('external_column')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('external_table_id', 'in', seenTables)
            .where((eb) => eb(eb.ref('external_column.options', '->>').key('removed'), '=', 'true'))
            .executeTakeFirstOrThrow()
        : { n: 0 };
      return { tables: tables.length, fields, removedFields: Number(removedHere.n) };
    }
    let goneTables = trx
      .updateTable('external_table')
      .set((eb) => ({
        extras: eb.fn('jsonb_set', ['extras', eb.val('{removed}'), eb.val('true')]),
        updated_at: now,
      }))
      .where('external_base_id', '=', externalBase.id);
    if (seenTables.length > 0) goneTables = goneTables.where('id', 'not in', seenTables);
    await goneTables.execute();
    const removed = await trx
      .selectFrom('external_column')
      .innerJoin('external_table', 'external_table.id', 'external_column.external_table_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('external_table.external_base_id', '=', externalBase.id)
      .where((eb) => eb(eb.ref('external_column.options', '->>').key('removed'), '=', 'true'))
      .executeTakeFirstOrThrow();
    return { tables: tables.length, fields, removedFields: Number(removed.n) };
  });
}
