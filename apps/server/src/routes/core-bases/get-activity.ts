import { IsoDate } from '@lockstep/contract';
import { sql } from 'kysely';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { findCoreBase } from '../../services/core-bases';
import { CoreBaseIdParams } from './params';

const Day = z.object({
  /** The day in the asked time zone, YYYY-MM-DD. */
  day: IsoDate,
  createdLeft: z.number().int(),
  createdRight: z.number().int(),
  updatedLeft: z.number().int(),
  updatedRight: z.number().int(),
  deletedLeft: z.number().int(),
  deletedRight: z.number().int(),
  failed: z.number().int(),
  issuesOpened: z.number().int(),
  issuesResolved: z.number().int(),
});

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

/**
 * A sync's activity per day, for the overview's charts: records created, updated and deleted on each
 * side (from the runs' counts) and issues opened and resolved. Every day of the window is present,
 * quiet ones as zeros, in the user's time zone.
 */
export function getActivity(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/activity',
    {
      schema: {
        tags: ['core-bases'],
        summary: 'Records written per side and issues opened/resolved, per day, for the last N days',
        params: CoreBaseIdParams,
        querystring: z.object({
          days: z.coerce.number().int().min(1).max(90).default(14),
          timeZone: z
            .string()
            .max(64)
            .refine(isTimeZone, 'must be an IANA time zone, e.g. Europe/Paris')
            .default('UTC'),
        }),
        response: { 200: z.object({ timeZone: z.string(), days: z.array(Day) }) },
      },
    },
    async (request) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.params.id);
      const { days, timeZone } = request.query;
      const count = (key: string) => sql`coalesce(sum((l.counts->>${key})::bigint), 0)`;
      const rows = (
        await sql<Record<string, string>>`
        with d as (
          select generate_series(
            (now() at time zone ${timeZone})::date - (${days}::int - 1), (now() at time zone ${timeZone})::date, interval '1 day'
          )::date as day
        ), runs as (
          select (l.started_at at time zone ${timeZone})::date as day,
            ${count('created_left')} as created_left, ${count('created_right')} as created_right,
            ${count('updated_left')} as updated_left, ${count('updated_right')} as updated_right,
            ${count('deleted_left')} as deleted_left, ${count('deleted_right')} as deleted_right,
            ${count('failed')} as failed
          from sync_log l
          where l.core_base_id = ${base.id}::uuid and l.started_at >= now() - make_interval(days => ${days}::int + 1)
          group by 1
        ), opened as (
          select (created_at at time zone ${timeZone})::date as day, count(*) as n from sync_error
          where core_base_id = ${base.id}::uuid and created_at >= now() - make_interval(days => ${days}::int + 1) group by 1
        ), resolved as (
          select (updated_at at time zone ${timeZone})::date as day, count(*) as n from sync_error
          where core_base_id = ${base.id}::uuid and status = 'resolved'
            and updated_at >= now() - make_interval(days => ${days}::int + 1) group by 1
        )
        select to_char(d.day, 'YYYY-MM-DD') as day, runs.created_left, runs.created_right, runs.updated_left,
          runs.updated_right, runs.deleted_left, runs.deleted_right, runs.failed,
          opened.n as opened, resolved.n as resolved
        from d left join runs on runs.day = d.day left join opened on opened.day = d.day
          left join resolved on resolved.day = d.day
        order by d.day`.execute(ctx.db)
      ).rows;
      const n = (v: string | undefined) => Number(v ?? 0);
      return {
        timeZone,
        days: rows.map((r) => ({
          day: r.day as string,
          createdLeft: n(r.created_left),
          createdRight: n(r.created_right),
          updatedLeft: n(r.updated_left),
          updatedRight: n(r.updated_right),
          deletedLeft: n(r.deleted_left),
          deletedRight: n(r.deleted_right),
          failed: n(r.failed),
          issuesOpened: n(r.opened),
          issuesResolved: n(r.resolved),
        })),
      };
    },
  );
}
