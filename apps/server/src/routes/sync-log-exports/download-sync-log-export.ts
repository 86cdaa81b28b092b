import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { EXPORT_COLUMNS, exportQuery, exportRows } from '../../services/sync-log-exports';
import { ExportParams, findExport } from './params';

/** Streams the operations row by row, never holding an export in memory. */
export function downloadSyncLogExport(app: RestApp, ctx: AppContext) {
  app.get(
    '/core-bases/:id/sync-log-exports/:exportId/download',
    {
      schema: {
        tags: ['sync-log-exports'],
        summary: 'Download an export as CSV or JSON',
        params: ExportParams,
      },
    },
    async (request, reply) => {
      const row = await findExport(ctx.db, principalOf(request), request.params);
      const rows = exportQuery(ctx.db, row.core_base_id, row.filters)
        .select([...EXPORT_COLUMNS, 'records'])
        .orderBy('created_at')
        .orderBy('id')
        .stream(500);
      const filename = `lockstep-operations-${row.core_base_id}-${row.id}.${row.format}`;
      reply.header('content-disposition', `attachment; filename="${filename}"`);
      if (row.format === 'csv') {
        const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS] });
        void (async () => {
          try {
            for await (const op of rows)
              for (const r of exportRows(op))
                csv.write({
                  ...r,
                  created_at: new Date(r.created_at).toISOString(),
                  before: r.before === null ? '' : JSON.stringify(r.before),
                  after: r.after === null ? '' : JSON.stringify(r.after),
                });
            csv.end();
          } catch (error) {
            csv.destroy(error as Error);
          }
        })();
        return reply.type('text/csv; charset=utf-8').send(csv);
      }
      // JSON: an array written row by row.
      async function* json() {
        yield '[';
        let first = true;
        for await (const op of rows)
          for (const r of exportRows(op)) {
            yield `${first ? '' : ','}\n${JSON.stringify({ ...r, created_at: new Date(r.created_at).toISOString() })}`;
            first = false;
          }
        yield '\n]\n';
      }
      return reply.type('application/json; charset=utf-8').send(Readable.from(json()));
    },
  );
}
