import type { JobStatus, Progress } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { ProgressTrackerTable } from '../db/schema';
import { canAccessOwner, type Principal } from '../http/context';
import { HttpError, notFound } from '../http/http-error';

const FINISHED: JobStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

export function toProgress(row: Selectable<ProgressTrackerTable>): Progress {
  const total = row.total === null ? null : Number(row.total);
  const done = Number(row.done);
  return {
    trackingId: row.id,
    kind: row.kind,
    status: row.status,
    done,
    total,
    percent: total && total > 0 ? Math.min(100, Math.round((done / total) * 1000) / 10) : null,
    message: row.message,
    result: row.result ?? null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export async function createProgress(db: Db, ownerId: string, kind: string, total: number | null = null) {
  return db
    .insertInto('progress_tracker')
    .values({ owner_id: ownerId, kind, total })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/**
 * Moves a tracker forward; a finished or cancelled one never moves again (compare-and-set), so a
 * worker learns from the return value that the user cancelled it.
 */
export async function updateProgress(
  db: Db,
  id: string,
  change: {
    status?: JobStatus;
    done?: number;
    total?: number | null;
    message?: string | null;
    result?: unknown;
  },
): Promise<boolean> {
  const res = await db
    .updateTable('progress_tracker')
    .set({
      ...(change.status ? { status: change.status } : {}),
      ...(change.done === undefined ? {} : { done: change.done }),
      ...(change.total === undefined ? {} : { total: change.total }),
      ...(change.message === undefined ? {} : { message: change.message }),
      ...(change.result === undefined ? {} : { result: JSON.stringify(change.result) }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', 'not in', FINISHED)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

export async function findProgress(db: Db, principal: Principal, id: string) {
  const row = await db.selectFrom('progress_tracker').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Progress');
  return row;
}

export async function cancelProgress(db: Db, principal: Principal, id: string): Promise<Progress> {
  const row = await findProgress(db, principal, id);
  if (FINISHED.includes(row.status)) {
    throw new HttpError(
      409,
      `Already ${row.status}`,
      `This job has already finished (${row.status.toLowerCase()}).`,
      'conflict',
    );
  }
  await updateProgress(db, id, { status: 'CANCELLED', message: 'Cancelled by the user' });
  return toProgress(await findProgress(db, principal, id));
}
