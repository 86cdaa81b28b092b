import {
  CoreBase,
  CoreBaseListFilter,
  CoreBaseListFilterQuery,
  DeprecatedJsonFilters,
  DetailLevel,
  Paged,
  PageQuery,
} from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { mergeFilters } from '../../http/parse-json-query';
import { toCoreBase } from '../../services/core-bases';

const ListQuery = PageQuery.extend({
  detailLevel: DetailLevel.default('basic'),
  ...CoreBaseListFilterQuery.shape,
  filter: DeprecatedJsonFilters('{"syncState":"on"}'),
});

export function listCoreBases(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases',
    {
      schema: {
        tags: ['core-bases'],
        summary: "The signed-in user's syncs, pinned first, then the most recently changed",
        querystring: ListQuery,
        response: { 200: Paged(CoreBase) },
      },
    },
    async (request) => {
      const { userId } = principalOf(request);
      const { skip, take, detailLevel, filter: json, pinned, ...typed } = request.query;
      const filter = mergeFilters(
        'filter',
        json,
        { ...typed, pinned: pinned === undefined ? undefined : pinned === 'true' },
        CoreBaseListFilter,
        '{"syncState":"on"}',
      );
      let q = ctx.db.selectFrom('core_base').where('owner_id', '=', userId);
      if (filter.name)
        q = q.where('name', 'ilike', `%${filter.name.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`);
      if (filter.syncState) q = q.where('sync_state', '=', filter.syncState);
      if (filter.pinned !== undefined) q = q.where('pinned', '=', filter.pinned);
      const [rows, total] = await Promise.all([
        q
          .selectAll()
          .orderBy('pinned', 'desc')
          .orderBy('updated_at', 'desc')
          .orderBy('id')
          .offset(skip)
          .limit(take)
          .execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const items = await Promise.all(rows.map((r) => toCoreBase(ctx.db, r, detailLevel)));
      return { items, total: Number(total.n), skip, take };
    },
  );
}
