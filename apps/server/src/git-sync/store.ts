import path from 'node:path';
import type { GitSync, GitSyncRun } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { Config } from '../config';
import type { Db } from '../db/database';
import type { GitSyncRunTable, GitSyncTable } from '../db/schema';
import { canAccessOwner, type Principal } from '../http/context';
import { HttpError, notFound } from '../http/http-error';
import type { SecretBox } from '../services/secret-box';
import type { RepoSpec } from './repository';

export type GitSyncRow = Selectable<GitSyncTable>;
export type GitSyncRunRow = Selectable<GitSyncRunTable>;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function toRun(r: GitSyncRunRow): GitSyncRun {
  return {
    id: r.id,
    gitSyncId: r.git_sync_id,
    kind: r.kind,
    status: r.status,
    done: r.done,
    total: r.total,
    message: r.message,
    baseCommit: r.base_commit,
    commitId: r.commit_id,
    counts: r.counts as GitSyncRun['counts'],
    conflicts: r.conflicts as GitSyncRun['conflicts'],
    problems: r.problems,
    error: r.error,
    createdAt: iso(r.created_at) as string,
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
  };
}

export function toGitSync(row: GitSyncRow, lastRun: GitSyncRunRow | null, secretBox: SecretBox): GitSync {
  const sealed = row.secret
    ? secretBox.open<{ token: string | null; username: string | null }>(row.secret)
    : null;
  return {
    gitSyncId: row.id,
    coreBaseId: row.core_base_id,
    repository:
      row.repo_kind === 'local'
        ? { kind: 'local', path: row.repo_path ?? '' }
        : {
            kind: 'https',
            url: row.repo_url ?? '',
            hasToken: Boolean(sealed?.token),
            username: sealed?.username ?? null,
          },
    branch: row.branch,
    folder: row.folder,
    sides: row.sides,
    format: row.format,
    lastSyncedCommit: row.last_synced_commit,
    lastRun: lastRun ? toRun(lastRun) : null,
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
  };
}

/** A git sync the principal may see; someone else's is indistinguishable from a missing one (404). */
export async function findGitSync(db: Db, principal: Principal, id: string): Promise<GitSyncRow> {
  const row = await db.selectFrom('git_sync').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Git sync');
  return row;
}

export async function lastRunOf(db: Db, gitSyncIds: string[]): Promise<Map<string, GitSyncRunRow>> {
  if (gitSyncIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('git_sync_run')
    .selectAll()
    .distinctOn('git_sync_id')
    .where('git_sync_id', 'in', gitSyncIds)
    .orderBy('git_sync_id')
    .orderBy('created_at', 'desc')
    .execute();
  return new Map(rows.map((r) => [r.git_sync_id, r]));
}

/** The repository as runs open it: the token unsealed, a local path allowed in local mode only. */
export function repoSpecOf(row: GitSyncRow, secretBox: SecretBox): RepoSpec {
  if (row.repo_kind === 'local') return { kind: 'local', path: row.repo_path ?? '' };
  const sealed = row.secret
    ? secretBox.open<{ token: string | null; username: string | null }>(row.secret)
    : null;
  return {
    kind: 'https',
    url: row.repo_url ?? '',
    token: sealed?.token ?? null,
    username: sealed?.username ?? null,
  };
}

/** Where an HTTPS repository's bare clone is kept (a cache: deleting it costs one full fetch). */
export const cacheDirOf = (config: Config, gitSyncId: string) =>
  path.join(config.dataDir, 'git-sync', `${gitSyncId}.git`);

/** Local repositories are this machine's files: only a local server (LOCKSTEP_ENV=local) may use them. */
export function assertRepositoryAllowed(kind: 'https' | 'local', config: Config) {
  if (kind === 'local' && config.environment !== 'local')
    throw new HttpError(
      400,
      'Local repositories are allowed in local mode only',
      'A repository on this server’s disk can be used on a local server only. Give an HTTPS URL.',
      'validation',
    );
}
