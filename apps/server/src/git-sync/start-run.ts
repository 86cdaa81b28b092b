import type { GitSyncRun } from '@lockstep/contract';
import type { AppContext } from '../http/context';
import { HttpError } from '../http/http-error';
import { GIT_SYNC_RUN, type GitSyncRunData } from '../jobs/git-sync-run';
import { type GitSyncRow, toRun } from './store';

/** A run that has not moved for this long is taken as lost (its worker died): a new one may start. */
const STALE_MS = 60 * 60 * 1000;

/** Queues a run; one at a time per git sync (409 while one waits or runs). */
export async function startGitSyncRun(
  ctx: AppContext,
  g: GitSyncRow,
  kind: GitSyncRun['kind'],
): Promise<GitSyncRun> {
  const active = await ctx.db
    .selectFrom('git_sync_run')
    .selectAll()
    .where('git_sync_id', '=', g.id)
    .where('status', 'in', ['PENDING', 'IN_PROGRESS'])
    .executeTakeFirst();
  if (active) {
    const since = new Date(active.started_at ?? active.created_at).getTime();
    if (Date.now() - since < STALE_MS)
      throw new HttpError(
        409,
        'A run is in progress',
        'A run of this git sync is still in progress. Wait for it to end, or cancel it.',
        'conflict',
      );
    await ctx.db
      .updateTable('git_sync_run')
      .set({
        status: 'FAILED',
        error: 'The run stopped answering and was given up.',
        finished_at: new Date(),
      })
      .where('id', '=', active.id)
      .execute();
  }
  let run: Awaited<ReturnType<typeof insert>>;
  const insert = () =>
    ctx.db
      .insertInto('git_sync_run')
      .values({
        owner_id: g.owner_id,
        git_sync_id: g.id,
        kind,
        counts: '[]',
        conflicts: '[]',
        problems: '[]',
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  try {
    run = await insert();
  } catch (error) {
    // Two requests at once: the unique index on the active run lets one through.
    if ((error as { code?: string }).code === '23505')
      throw new HttpError(
        409,
        'A run is in progress',
        'A run of this git sync is already in progress.',
        'conflict',
      );
    throw error;
  }
  await ctx.boss.send(GIT_SYNC_RUN, { runId: run.id } satisfies GitSyncRunData);
  return toRun(run);
}
