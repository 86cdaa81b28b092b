import {
  AutomapFieldsBody,
  AutomapFieldsResponse,
  AutomapParams,
  type AutomapSampleInfo,
} from '@lockstep/contract';
import { automapFields, type FieldSamples } from '@lockstep/engine';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { findCoreBase } from '../../services/core-bases';
import { loadAutomapSides, notRequested, readSamples } from './automap-data';

/**
 * Spec section 7, AI field mapper: proposed field pairs between one left and one right table of a
 * sync (a table mapping's, or two the client names), with types checked against the compatibility
 * matrix, a direction each, and the field to match existing records on. Rules only, nothing saved.
 */
export function automapFieldsRoute(app: RestApp, ctx: AppContext) {
  app.post(
    '/ai-field-mapper/:coreBaseId/automap',
    {
      schema: {
        tags: ['mappings'],
        summary: 'Proposed field pairs and a match field for one table pair, with scores and reasons',
        params: AutomapParams,
        body: AutomapFieldsBody,
        response: { 200: AutomapFieldsResponse },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.coreBaseId);
      const body = request.body;
      let leftTableId = body.leftTableId;
      let rightTableId = body.rightTableId;
      let existing: { id: string; left_column_id: string; right_column_id: string }[] = [];
      if (body.tableMappingId) {
        const mapping = await ctx.db
          .selectFrom('table_mapping')
          .select(['id', 'left_table_id', 'right_table_id'])
          .where('id', '=', body.tableMappingId)
          .where('core_base_id', '=', base.id)
          .executeTakeFirst();
        if (!mapping) throw notFound('Table mapping');
        leftTableId = mapping.left_table_id;
        rightTableId = mapping.right_table_id;
        existing = await ctx.db
          .selectFrom('column_mapping')
          .select(['id', 'left_column_id', 'right_column_id'])
          .where('table_mapping_id', '=', mapping.id)
          .execute();
      }
      const { left, right } = await loadAutomapSides(ctx, base.id);
      const leftTable = left.tables.find((t) => t.id === leftTableId);
      const rightTable = right.tables.find((t) => t.id === rightTableId);
      if (!leftTable || !rightTable) {
        throw new HttpError(
          400,
          'Table not in this sync',
          `${leftTable ? 'rightTableId' : 'leftTableId'} must be a table of the sync's ${leftTable ? 'right' : 'left'} app.`,
          'validation',
        );
      }
      const samples: FieldSamples = {};
      const info: AutomapSampleInfo[] = [];
      if (body.useSamples) {
        const [l, r] = await Promise.all([
          readSamples(ctx, left, [leftTable]),
          readSamples(ctx, right, [rightTable]),
        ]);
        samples.left = l.values[leftTable.id];
        samples.right = r.values[rightTable.id];
        info.push(...l.info, ...r.info);
      } else {
        info.push(...notRequested(left, [leftTable]), ...notRequested(right, [rightTable]));
      }
      // Linked-record fields pair only through table pairs this sync already maps.
      const mapped = await ctx.db
        .selectFrom('table_mapping')
        .select(['left_table_id', 'right_table_id'])
        .where('core_base_id', '=', base.id)
        .execute();
      const remoteIdOf = (tables: { id: string; remoteId: string }[], id: string) =>
        tables.find((t) => t.id === id)?.remoteId;
      const pairs = [
        ...mapped.map((m) => ({ leftTableId: m.left_table_id, rightTableId: m.right_table_id })),
        ...body.plannedTablePairs,
      ];
      const linkedTables = pairs.flatMap((m) => {
        const l = remoteIdOf(left.tables, m.leftTableId);
        const r = remoteIdOf(right.tables, m.rightTableId);
        return l && r ? [{ left: l, right: r }] : [];
      });
      const result = automapFields(leftTable.columns, rightTable.columns, samples, {
        allowUnsupported: body.allowUnsupported,
        minScore: body.minScore,
        linkedTables,
        tableNames: { left: leftTable.name, right: rightTable.name },
      });
      return {
        coreBaseId: base.id,
        source: 'rules' as const,
        tableMappingId: body.tableMappingId ?? null,
        leftTableId: leftTable.id,
        rightTableId: rightTable.id,
        leftTableName: leftTable.name,
        rightTableName: rightTable.name,
        proposals: result.proposals.map((p) => ({
          ...p,
          existingColumnMappingId:
            existing.find((c) => c.left_column_id === p.leftColumnId && c.right_column_id === p.rightColumnId)
              ?.id ?? null,
        })),
        matchField: result.matchField,
        matchOnFieldId: result.matchField?.leftColumnId ?? null,
        matchOnSecondaryFieldId: result.matchField?.secondaryLeftColumnId ?? null,
        matchReason: result.matchField?.reason ?? null,
        unmatchedLeft: result.unmatchedLeft,
        unmatchedRight: result.unmatchedRight,
        samples: info,
      };
    },
  );
}
