import {
  AutomapParams,
  type AutomapSampleInfo,
  AutomapTablesBody,
  AutomapTablesResponse,
} from '@lockstep/contract';
import { automapTables, type SampleValues } from '@lockstep/engine';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { loadAutomapSides, MAX_SAMPLED_TABLES, notRequested, readSamples } from './automap-data';

/**
 * Spec section 7, AI table mapper: proposed table pairs between a sync's two connected apps, by
 * name, synonyms and matching fields (sample values when the apps can be read). Rules only: no
 * language model is called. Nothing is saved; the client applies the pairs the user keeps.
 */
export function automapTablesRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/ai-table-mapper/:coreBaseId/automap',
    {
      schema: {
        tags: ['mappings'],
        summary: "Proposed table pairs between the sync's two apps, with scores and reasons",
        params: AutomapParams,
        body: AutomapTablesBody,
        response: { 200: AutomapTablesResponse },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.coreBaseId);
      const body = request.body ?? { useSamples: true };
      const { left, right } = await loadAutomapSides(ctx, base.id);
      const syncable = (tables: typeof left.tables) => tables.filter((t) => t.unsyncable === null);
      const samples: Record<string, SampleValues> = {};
      const info: AutomapSampleInfo[] = [];
      for (const side of [left, right]) {
        const tables = syncable(side.tables);
        if (!body.useSamples) {
          info.push(...notRequested(side, tables));
          continue;
        }
        const sampled = await readSamples(ctx, side, tables.slice(0, MAX_SAMPLED_TABLES));
        Object.assign(samples, sampled.values);
        info.push(...sampled.info, ...notRequested(side, tables.slice(MAX_SAMPLED_TABLES)));
      }
      const result = automapTables(syncable(left.tables), syncable(right.tables), {
        samples,
        minScore: body.minScore,
      });
      const existing = await ctx.db
        .selectFrom('table_mapping')
        .select(['id', 'left_table_id', 'right_table_id'])
        .where('core_base_id', '=', base.id)
        .execute();
      const unmatched = (tables: typeof left.tables, ids: Set<string>) =>
        tables
          .filter((t) => !ids.has(t.id))
          .map((t) => ({
            tableId: t.id,
            name: t.name,
            reason: t.unsyncable ?? 'No table on the other side looks like it.',
          }));
      return {
        coreBaseId: base.id,
        source: 'rules' as const,
        leftExternalBaseId: left.externalBaseId,
        rightExternalBaseId: right.externalBaseId,
        proposals: result.proposals.map((p) => ({
          ...p,
          existingTableMappingId:
            existing.find((m) => m.left_table_id === p.leftTableId && m.right_table_id === p.rightTableId)
              ?.id ?? null,
        })),
        unmatchedLeft: unmatched(left.tables, new Set(result.proposals.map((p) => p.leftTableId))),
        unmatchedRight: unmatched(right.tables, new Set(result.proposals.map((p) => p.rightTableId))),
        samples: info,
      };
    },
  );
}
