import type { PgBoss } from 'pg-boss';
import type { AppContext, Principal } from '../http/context';
import { HttpError } from '../http/http-error';
import { createTablesFromSource } from '../services/generate-schema';
import { updateProgress } from '../services/progress';

export const GENERATE_SCHEMA = 'generate-schema';
export type GenerateSchemaData = {
  trackingId: string;
  principal: Principal;
  externalBaseId: string;
  sourceTableIds: string[];
};

/**
 * create-tables-async: the tables are created by a worker, one at a time so the tracker moves
 * (each in its own transaction); the tracker ends COMPLETED with what was made, or FAILED with the
 * reason (tables made before the failure stay, and are listed).
 */
export async function runGenerateSchema(ctx: AppContext, data: GenerateSchemaData) {
  const made: Awaited<ReturnType<typeof createTablesFromSource>>['tables'] = [];
  let externalBaseId = data.externalBaseId;
  await updateProgress(ctx.db, data.trackingId, { status: 'IN_PROGRESS', total: data.sourceTableIds.length });
  try {
    for (const [i, tableId] of data.sourceTableIds.entries()) {
      const r = await createTablesFromSource(ctx, data.principal, data.externalBaseId, [tableId]);
      externalBaseId = r.externalBaseId;
      made.push(...r.tables);
      const going = await updateProgress(ctx.db, data.trackingId, {
        done: i + 1,
        message: `Created ${r.tables.map((t) => t.name).join(', ')}`,
      });
      if (!going) return; // cancelled by the user: what is made stays
    }
    await updateProgress(ctx.db, data.trackingId, {
      status: 'COMPLETED',
      message: `${made.length} table${made.length === 1 ? '' : 's'} created`,
      result: { externalBaseId, tables: made },
    });
  } catch (error) {
    const message =
      error instanceof HttpError
        ? [error.userFacingMessage].flat().join('\n\n')
        : `Creating the tables failed: ${error instanceof Error ? error.message : String(error)}`;
    await updateProgress(ctx.db, data.trackingId, {
      status: 'FAILED',
      message,
      result: { externalBaseId, tables: made },
    });
  }
}

export async function registerGenerateSchema(boss: PgBoss, ctx: AppContext | null, runWorkers: boolean) {
  await boss.createQueue(GENERATE_SCHEMA, { retryLimit: 0, expireInSeconds: 30 * 60 });
  if (!runWorkers || !ctx) return;
  await boss.work<GenerateSchemaData>(GENERATE_SCHEMA, { batchSize: 1 }, async (jobs) => {
    for (const job of jobs) await runGenerateSchema(ctx, job.data);
  });
}
